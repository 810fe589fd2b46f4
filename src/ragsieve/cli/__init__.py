"""The ``ragsieve`` command line (Typer): the app, its command groups, and the entry point.

Every command that prints results takes ``--json``. Errors a user can cause print one line on
stderr (``error: ...``) and exit non-zero; ``--debug`` anywhere on the line (or
``RAGSIEVE_DEBUG=1``) shows the traceback instead.

One module per command group: :mod:`~ragsieve.cli.index` (index, rm, info, repair),
:mod:`~ragsieve.cli.query` (search, ask, explain), :mod:`~ragsieve.cli.eval`,
:mod:`~ragsieve.cli.rerank` (train-reranker, rerank, eval-reranker, train-fusion),
:mod:`~ragsieve.cli.segment` (segment, train-segmenter), :mod:`~ragsieve.cli.serve`,
:mod:`~ragsieve.cli.agent` (train-agent) and :mod:`~ragsieve.cli.tag` (train-tagger, prune).
:mod:`~ragsieve.cli.common` holds what the groups share, :mod:`~ragsieve.cli.train` the options
every ``train-*`` command shares. Each module imports only Typer and light modules at the top;
what a command needs (torch, FastAPI, the models) it imports when it runs.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from ragsieve.cli import agent as agent_group
from ragsieve.cli import eval as eval_group
from ragsieve.cli import index as index_group
from ragsieve.cli import query as query_group
from ragsieve.cli import rerank as rerank_group
from ragsieve.cli import segment as segment_group
from ragsieve.cli import serve as serve_group
from ragsieve.cli import tag as tag_group
from ragsieve.errors import RagsieveError, missing_extra

# rich_markup_mode=None: help text is printed as written. Rich markup would read the method
# specs in it (``full[unit=passage]``, a ``[method]`` table) as style tags and drop them.
app = typer.Typer(
    name="ragsieve",
    help="Precise retrieval for RAG: index documents, search them, ask questions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        from ragsieve import __version__

        typer.echo(f"ragsieve {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Precise retrieval for RAG: index documents, search them, ask questions."""


# The order here is the order of ``ragsieve --help``.
app.command()(index_group.index)
app.command()(query_group.search)
app.command()(query_group.ask)
app.command()(query_group.explain)
app.command("eval")(eval_group.eval_cmd)
app.command()(index_group.rm)
app.command()(index_group.info)
app.command()(index_group.repair)
app.command("train-reranker")(rerank_group.train_reranker)
app.command("rerank")(rerank_group.rerank_cmd)
app.command("eval-reranker")(rerank_group.eval_reranker)
app.command("train-fusion")(rerank_group.train_fusion_cmd)
app.command("segment")(segment_group.segment_cmd)
app.command("train-segmenter")(segment_group.train_segmenter_cmd)
app.command("serve")(serve_group.serve)
app.command("train-agent")(agent_group.train_agent_cmd)
app.command("train-tagger")(tag_group.train_tagger)
app.command("prune")(tag_group.prune_cmd)


def _usage_line(e: typer.TyperException) -> str:
    """A Typer/Click usage error as one line, with the ``--help`` to try."""
    msg = " ".join(str(e.format_message()).split())  # type: ignore[attr-defined]
    ctx = getattr(e, "ctx", None)
    where = f"{ctx.command_path} --help" if ctx is not None else "ragsieve --help"
    return f"error: {msg} (see '{where}')"


def _command() -> str:
    """The command named on the line (the first word that is not an option)."""
    return next((a for a in sys.argv[1:] if not a.startswith("-")), "")


def main() -> None:
    """Entry point: run the app and turn user errors into one-line messages."""
    debug = os.environ.get("RAGSIEVE_DEBUG") == "1"
    if "--debug" in sys.argv:
        sys.argv.remove("--debug")
        debug = True
    try:
        # Not standalone: usage errors come back to us and print as one line like the rest.
        rv = app(standalone_mode=False)
    except RagsieveError as e:
        if debug:
            raise
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        sys.stderr.write(f"error: {msg}\n")
        sys.exit(e.exit_code)
    except typer.Abort:
        sys.stderr.write("aborted\n")
        sys.exit(1)
    except typer.TyperException as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # bare ``ragsieve``: the help, as before
            e.show()  # type: ignore[attr-defined]
        else:
            sys.stderr.write(_usage_line(e) + "\n")
        sys.exit(int(getattr(e, "exit_code", 2)))
    except ImportError as e:
        # A module of an extra (torch for training, matplotlib for a plot...): name the extra.
        err = missing_extra(e, f"ragsieve {_command()}")
        if debug or err is None:
            raise
        sys.stderr.write(f"error: {err}\n")
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception as e:
        from ragsieve.errors import IndexStoreError
        from ragsieve.index.diskfull import is_no_space, no_space_message

        if debug or not is_no_space(e):
            raise
        # A full disk outside an index write (creating an index, a lock file): one line too.
        sys.stderr.write(f"error: {no_space_message(None)}\n")
        sys.exit(IndexStoreError.exit_code)
    sys.exit(rv if isinstance(rv, int) else 0)
