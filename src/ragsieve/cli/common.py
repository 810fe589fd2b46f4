"""What the ``ragsieve`` command groups share: the options they declare alike, the method spec
and LLM options they read alike, and how they print (JSON, progress, status lines)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ragsieve.defaults import DEFAULT_METHOD
from ragsieve.errors import InputError
from ragsieve.io import SUPPORTED

#: Every file type ``index`` reads, for the help texts (from the readers' own list).
FORMATS = ", ".join(sorted(SUPPORTED))


def nonempty_index(value: str) -> str:
    """An empty ``--index`` would silently mean the current directory: refuse it."""
    if not value.strip():
        raise typer.BadParameter("must name a directory or URL, not an empty string")
    return value


def utf8_text(value: str) -> str:
    """A query or question must be text: bytes that are not UTF-8 (a shell's raw argument)
    arrive as lone surrogates, which no tokenizer, index filter or JSON output can take."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise typer.BadParameter("is not valid UTF-8 text") from None
    return value


IndexOpt = Annotated[
    str,
    typer.Option(
        "--index",
        "-i",
        help="Index directory or object-store URL (s3://...).",
        callback=nonempty_index,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
WaitOpt = Annotated[
    float,
    typer.Option(
        "--wait",
        min=0,
        help="Seconds to wait for another writer's lock on the index before giving up.",
    ),
]
LLMTimeoutOpt = Annotated[
    float | None,
    typer.Option(min=0.1, help="openai: seconds per LLM request (default 60)."),
]
LLMRetriesOpt = Annotated[
    int | None,
    typer.Option(min=0, max=10, help="openai: retries of a failed LLM request (default 3)."),
]
LLMCtxOpt = Annotated[
    int | None,
    typer.Option(
        "--llm-ctx",
        min=16,
        help="The LLM's context window in tokens (local default 4096; openai: unknown unless "
        "given). Every prompt's context is trimmed, lowest score first, so that prompt and "
        "answer fit it.",
    ),
]
TotalBudgetOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Prompt tokens of every LLM call for one question, summed (feedback included).",
    ),
]
MethodRetrieverOpt = Annotated[
    str | None,
    typer.Option(
        help="dense | bm25 | hybrid (default: the method's own: hybrid for tagger and full, "
        "dense for the others)."
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        exists=True,
        dir_okay=False,
        help="A TOML file whose [method] table is the method spec (name = ..., options).",
    ),
]


def method_spec(method: str | None, config: Path | None) -> Any:
    """The method spec from ``--method`` or ``--config`` (not both), else
    :data:`~ragsieve.defaults.DEFAULT_METHOD`: one default for every command."""
    from ragsieve.methods import parse_spec, spec_from_toml

    if method is not None and config is not None:
        raise InputError("give --method or --config, not both")
    if method is not None and not method.strip():
        raise InputError("--method is empty: give a method spec such as naive or 'sage[min_k=3]'")
    if config is not None:
        return spec_from_toml(config)
    return parse_spec(method or DEFAULT_METHOD)


def llm_options(
    timeout: float | None, retries: int | None, n_ctx: int | None = None
) -> dict[str, Any]:
    """The ``get_llm`` options the user set (a local backend refuses the HTTP ones with one
    line)."""
    opts: dict[str, Any] = {}
    if n_ctx is not None:
        opts["n_ctx"] = n_ctx
    if timeout is not None:
        opts["timeout"] = timeout
    if retries is not None:
        opts["max_retries"] = retries
    return opts


def err_console() -> Any:
    """A rich console on stderr (warnings, progress bars)."""
    from rich.console import Console

    return Console(stderr=True)


def writable_target(path: Path, what: str, is_dir: bool = False) -> Path:
    """Check, before any work is spent, that an output path can be written (one-line error)."""
    folder = path if is_dir else path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{what} {path}: cannot create {folder}: {e.strerror or e}") from e
    try:
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"{what} {path}: {folder} is not a writable directory")
        if not is_dir and path.is_dir():
            raise InputError(f"{what} {path}: is a directory")
        if len(os.fsencode(path.name)) > os.pathconf(folder, "PC_NAME_MAX"):
            raise InputError(f"{what}: the file name is too long ({len(path.name)} characters)")
    except OSError as e:  # a name too long for the file system, and the like
        raise InputError(f"{what} {path}: {e.strerror or e}") from e
    return path


def print_json(obj: Any) -> None:
    """``obj`` as indented JSON on stdout, non-ASCII text as it is."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def say(line: str) -> None:
    """One status line on stderr (``waiting for the write lock ...``)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def plural(n: int, word: str) -> str:
    """``1 document``, ``2 documents``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def progress(quiet: bool = False) -> tuple[Any, Any]:
    """Progress on stderr and the callback that drives it: rich bars on a terminal; when stderr
    is piped or a file, one line per stage as it starts and ends, and one at least every 10 s
    while it runs (:class:`ragsieve.progress.PipedProgress`), so a long step is never silent.
    ``quiet``: piped, a stage prints only once it has run 10 s (a method's stages in ``ask``: a
    quick answer, or a failure after a few retries, stays the lines it always was, one line for
    an error; a slow LLM call is still never silent for longer than the heartbeat)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not sys.stderr.isatty():
        from ragsieve.progress import EVERY_S, PipedProgress

        piped = (
            PipedProgress(write=say, quiet=True, quiet_start=EVERY_S)
            if quiet
            else PipedProgress(write=say)
        )
        return piped, piped

    prog = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console(),
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def cb(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = prog.add_task(stage, total=total)
        prog.update(tasks[stage], completed=done, total=total)

    return prog, cb
