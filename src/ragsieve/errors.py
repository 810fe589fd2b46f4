"""User-facing errors.

Every failure a user can cause (bad path, bad input file, unknown model, corrupt index,
unreachable LLM) raises a subclass of :class:`RagsieveError` whose message is one line that says
what is wrong and what to do. The CLI prints that line and exits non-zero; anything else is a bug
and shows a traceback only with ``--debug``.
"""

from __future__ import annotations


class RagsieveError(Exception):
    """Base class: the message is shown to the user as one line."""

    exit_code: int = 1


class InputError(RagsieveError):
    """Bad user input: a missing path, an unreadable or empty file, an empty query."""

    exit_code = 2


class ConfigError(RagsieveError):
    """An unknown method, model, retriever or an invalid option value."""

    exit_code = 2


class IndexStoreError(RagsieveError):
    """The index directory is missing, not an index, or corrupt."""

    exit_code = 3


class LLMError(RagsieveError):
    """The LLM backend failed (unreachable endpoint, timeout, malformed response)."""

    exit_code = 4


class LLMNotInstalledError(LLMError, ConfigError):
    """An opt-in local model's part packages are missing, or they join into the wrong file.

    An LLM problem (exit 4) that is also a configuration one, so code that checks a spec with
    ``except ConfigError`` still catches it.
    """
