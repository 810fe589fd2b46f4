"""The command-line contract of the tagger's ``python -m ragsieve.tag.fit.*`` steps: a usage
error or any :class:`~ragsieve.errors.RagsieveError` is one line on stderr and its exit code,
never argparse's usage text or a traceback (the same contract as the ``ragsieve`` command)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ragsieve.errors import InputError, RagsieveError


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are an :class:`InputError` (one line, exit 2) that points
    at ``--help``, not usage text and a second line."""

    def error(self, message: str) -> NoReturn:
        raise InputError(f"{message} (see '{self.prog} --help')")


def check_positive(args: argparse.Namespace, *names: str) -> None:
    """Refuse an integer option below 1 (None: not given, allowed)."""
    for name in names:
        v = getattr(args, name)
        if v is not None and v < 1:
            raise InputError(f"--{name} must be a positive integer, got {v}")


def run_main(run: Callable[[Sequence[str] | None], Any], argv: Sequence[str] | None) -> int:
    """``run(argv)``; 0, or a :class:`RagsieveError`'s one line on stderr and its exit code."""
    try:
        run(argv)
    except RagsieveError as exc:
        print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return exc.exit_code
    return 0
