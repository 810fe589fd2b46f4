"""The ``ragsieve`` command line (Typer).

Every command that prints results takes ``--json``. Errors a user can cause print one line on
stderr (``error: ...``) and exit non-zero; ``--debug`` anywhere on the line (or
``RAGSIEVE_DEBUG=1``) shows the traceback instead.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ragsieve.defaults import DEFAULT_METHOD
from ragsieve.errors import InputError, RagsieveError
from ragsieve.io import SUPPORTED

#: Every file type ``index`` reads, for the help texts (from the readers' own list).
FORMATS = ", ".join(sorted(SUPPORTED))

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


def _nonempty_index(value: str) -> str:
    """An empty ``--index`` would silently mean the current directory: refuse it."""
    if not value.strip():
        raise typer.BadParameter("must name a directory or URL, not an empty string")
    return value


def _text(value: str) -> str:
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
        callback=_nonempty_index,
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
    typer.Option(help="dense | bm25 | hybrid (default: the method's own, dense for most)."),
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


def _spec(method: str | None, config: Path | None) -> Any:
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


def _llm_options(
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


def _err_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def _writable_target(path: Path, what: str, is_dir: bool = False) -> Path:
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


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def _progress() -> tuple[Any, Any]:
    """Progress on stderr and the callback that drives it: rich bars on a terminal; when stderr
    is piped or a file, one line per stage as it starts and ends, and one at least every 10 s
    while it runs (:class:`ragsieve.progress.PipedProgress`), so a long step is never silent."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not sys.stderr.isatty():
        from ragsieve.progress import PipedProgress

        piped = PipedProgress(write=_say)
        return piped, piped

    prog = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_err_console(),
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def cb(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = prog.add_task(stage, total=total)
        prog.update(tasks[stage], completed=done, total=total)

    return prog, cb


def _check_engine(engine: str, address: str | None, workers: int | None) -> Any:
    """Refuse a bad engine setup before anything is created; the Ray writer, or None."""
    from ragsieve.errors import ConfigError

    if engine not in {"local", "ray"}:
        raise ConfigError(f"unknown engine {engine!r}: use local or ray")
    if engine == "local":
        if address or workers:
            raise ConfigError("--address and --workers need --engine ray")
        return None
    import importlib.util

    missing = [m for m in ("ray", "lance_ray") if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(
            f"--engine ray needs the ray extra ({', '.join(missing)} missing): "
            "pip install 'ragsieve[ray]'"
        )
    from ragsieve.index.ray_engine import add_paths_ray, check_address

    if address:
        check_address(address)  # before anything is created
    return add_paths_ray


def _sentence_options(
    index_dir: str, sentences: bool, pareto_context: str | None, sentence_passage: str | None
) -> dict[str, Any]:
    from ragsieve.errors import ConfigError
    from ragsieve.index.location import Location
    from ragsieve.index.store import MANIFEST

    opts: dict[str, Any] = {}
    if pareto_context is not None:
        opts["pareto_context"] = pareto_context
    if sentence_passage is not None:
        opts["sentence_passage"] = sentence_passage
    if opts and not sentences and not Location(index_dir).has_file(MANIFEST):
        raise ConfigError("--pareto-context and --sentence-passage go with --sentences")
    return opts


def _index_to_write(
    index_dir: str,
    paths: list[Path],
    settings: dict[str, Any],
    sentences: bool,
    sent_opts: dict[str, Any],
    engine: str,
    force: bool,
    wait: float,
    progress: Any = None,
) -> tuple[Any, Any]:
    """The index to add to (opened, or created after the inputs were checked) and, for a new
    local index, its inputs already read (so they are read once; ``progress`` hears it)."""
    import dataclasses

    from ragsieve.index import Index, IndexConfig
    from ragsieve.index.location import Location
    from ragsieve.index.store import MANIFEST

    embedder, chunker, chunk_tokens = (settings[k] for k in ("embedder", "chunker", "chunk_tokens"))
    if Location(index_dir).has_file(MANIFEST) and not force:
        idx = Index.open(index_dir)
        wanted = dataclasses.replace(
            idx.config,
            embedder=embedder or idx.config.embedder,
            chunker=chunker or idx.config.chunker,
            chunk_tokens=idx.config.chunk_tokens if chunk_tokens is None else chunk_tokens,
            sentences=sentences or idx.config.sentences,
            **sent_opts,
        )
        return Index.open_or_create(index_dir, wanted, wait=wait, on_wait=_say), None
    defaults = IndexConfig()
    cfg = IndexConfig(
        embedder=embedder or defaults.embedder,
        chunker=chunker or defaults.chunker,
        chunk_tokens=chunk_tokens,
        sentences=sentences,
        **sent_opts,
    )
    # Validate the inputs before creating anything on disk. The Ray engine reads on its
    # workers, so only the listing is checked here (reading it all twice would not scale).
    from ragsieve.io import list_files, load_paths

    loaded = None
    if engine == "ray":
        list_files(paths)
    else:
        loaded = load_paths(paths, progress)
    if force:
        return _rebuilt(index_dir, cfg, wait), loaded
    return Index.open_or_create(index_dir, cfg, wait=wait, on_wait=_say), loaded


def _rebuilt(index_dir: str, cfg: Any, wait: float) -> Any:
    """``--force``: an index that is rebuilt beside the old one and swapped in by its commit
    (the old one answers until then); a directory with no readable index starts over."""
    from ragsieve.errors import IndexStoreError
    from ragsieve.index import Index
    from ragsieve.index.location import Location
    from ragsieve.index.store import MANIFEST

    if Location(index_dir).has_file(MANIFEST):
        try:
            return Index.open_for_rebuild(index_dir, cfg, wait=wait, on_wait=_say)
        except IndexStoreError:
            pass  # unreadable: nothing to keep answering, start over as before
    return Index.create(index_dir, cfg, force=True, wait=wait, on_wait=_say)


def _index_result(index_dir: str, idx: Any, report: Any, skipped: list) -> dict[str, Any]:
    stats = idx.stats()
    return {
        "index": str(index_dir),
        "added": len(report.added),
        "updated": len(report.updated),
        "unchanged": len(report.unchanged),
        "skipped": [{"path": p, "reason": r} for p, r in skipped],
        "chunks_written": report.n_chunks,
        "tokens_written": report.n_tokens,
        "seconds": round(report.seconds, 3),
        "tokens_per_second": round(report.n_tokens / report.seconds, 1) if report.seconds else 0,
        "total_documents": stats["documents"],
        "total_chunks": stats["chunks"],
    }


@app.command()
def index(
    paths: Annotated[
        list[Path],
        typer.Argument(help=f"Files or folders (every {FORMATS} file under them)."),
    ],
    index_dir: IndexOpt,
    chunker: Annotated[
        str | None, typer.Option("--chunker", help="fixed | paragraph | sage (new index: fixed).")
    ] = None,
    chunk_tokens: Annotated[
        int | None,
        typer.Option(
            "--chunk-tokens",
            min=8,
            max=100_000,
            help="Max tokens per chunk (fixed 200, paragraph 512, sage 400).",
        ),
    ] = None,
    embedder: Annotated[
        str | None, typer.Option("--embedder", help="minilm | minilm-onnx | st:ORG/NAME.")
    ] = None,
    engine: Annotated[
        str, typer.Option("--engine", help="local (one process) | ray (see docs/scale-out.md).")
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            "--address", help="Ray cluster to join (HOST:PORT, ray://HOST:10001); --engine ray."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Ray embedding workers (default: every CPU)."),
    ] = None,
    sentences: Annotated[
        bool,
        typer.Option(
            "--sentences",
            help="New index: also store sentences with Pareto vectors and SAKI links "
            "(needed by --method pareto / saki / full; local engine only).",
        ),
    ] = False,
    pareto_context: Annotated[
        str | None,
        typer.Option(
            "--pareto-context",
            help="With --sentences: late (default) | exact (the paper's) | mean.",
        ),
    ] = None,
    sentence_passage: Annotated[
        str | None,
        typer.Option(
            "--sentence-passage",
            help="With --sentences: auto (default) | paragraph | chunk | document.",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Rebuild the index from scratch; the old one answers until the new one commits.",
        ),
    ] = False,
    keep_missing: Annotated[
        bool,
        typer.Option(
            "--keep-missing",
            help="Keep the documents of files that have left a FOLDER given here "
            "(by default they are removed from the index, and the command says so).",
        ),
    ] = False,
    wait: WaitOpt = 60.0,
    as_json: JsonOpt = False,
) -> None:
    """Add files to an index (created if missing); changed files are re-indexed, and files
    that have left a folder given here are removed from the index (--keep-missing keeps them)."""
    add_paths_ray = _check_engine(engine, address, workers)
    sent_opts = _sentence_options(index_dir, sentences, pareto_context, sentence_passage)
    settings = {"embedder": embedder, "chunker": chunker, "chunk_tokens": chunk_tokens}
    prog, cb = _progress()
    with prog:  # reading a new index's files is a stage too (a 13 MB HTML page takes a while)
        idx, loaded = _index_to_write(
            index_dir, paths, settings, sentences, sent_opts, engine, force, wait, cb
        )
        if add_paths_ray is not None:
            report, skipped = add_paths_ray(
                idx, paths, address=address, workers=workers, progress=cb
            )
        elif loaded is not None:
            report, skipped = idx.add(loaded.documents, progress=cb), loaded.skipped
        else:
            report, skipped = idx.add_paths(paths, progress=cb)
    con = _err_console()
    for path, why in skipped:
        con.print(f"[yellow]warning:[/] skipped {path}: {why}", highlight=False, soft_wrap=True)
    gone = [] if keep_missing else _remove_gone(idx, paths, report, skipped)
    result = _index_result(index_dir, idx, report, skipped)
    result["removed"] = gone
    if as_json:
        _print_json(result)
        return
    typer.echo(
        f"indexed {result['added']} new, {result['updated']} changed, "
        f"{result['unchanged']} unchanged document(s): {report.n_chunks} chunks, "
        f"{report.n_tokens} tokens in {report.seconds:.1f}s; index now has "
        f"{result['total_documents']} documents, {result['total_chunks']} chunks"
    )
    if gone:
        typer.echo(
            f"removed {_plural(len(gone), 'document')} whose file has left "
            f"{', '.join(str(p) for p in paths if p.is_dir())} (--keep-missing keeps them): "
            + ", ".join(gone)
        )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _remove_gone(idx: Any, paths: list[Path], report: Any, skipped: list) -> list[str]:
    """Remove the documents of files that have left the folders in ``paths``; their ids."""
    from ragsieve.index.sync import stale_documents

    folders = [p for p in paths if p.is_dir()]
    if not folders:
        return []
    read = set(report.added) | set(report.updated) | set(report.unchanged)
    stale = stale_documents(idx.documents(), folders, read, [s for s, _ in skipped])
    return idx.remove(stale) if stale else []


def _say(line: str) -> None:
    """One status line on stderr (``waiting for the write lock ...``)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _snippet(text: str, n: int = 160) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.", callback=_text)],
    index_dir: IndexOpt,
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000, help="Results.")] = 10,
    retriever: MethodRetrieverOpt = None,
    reranker: Annotated[
        str | None, typer.Option(help="Rerank candidates: bi-encoder | cross-encoder name.")
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(
            help="Select with a method instead (tagger, naive, sage, carrot, pareto, saki, full; "
            f"'carrot[iterations=20]'; the default of ask and explain: {DEFAULT_METHOD}): "
            "prints the context it would give the LLM."
        ),
    ] = None,
    budget: Annotated[
        int | None, typer.Option(min=1, help="Token budget for --method (a ceiling).")
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Retrieve the chunks most relevant to QUERY (or the context a --method selects)."""
    from ragsieve.api import search as do_search
    from ragsieve.explain import where_of
    from ragsieve.index import Index
    from ragsieve.types import scored_json

    trace = None
    idx = Index.open(index_dir)
    if method is not None or config is not None:
        from ragsieve.explain import explain as run_method

        spec = _spec(method, config)
        run = {"k": k, "budget": budget, "retriever": retriever, "reranker": reranker}
        r, _ = run_method(query, idx, spec, **run)
        hits, trace = list(r.context.chunks), r.trace
    else:
        if budget is not None:
            raise InputError("--budget needs --method (plain search returns the top --k)")
        retriever = retriever or "dense"
        hits = do_search(query, idx, k=k, retriever=retriever, reranker=reranker)
    where = where_of(idx, hits)
    names = _names(idx, hits)
    # A plain search is a ranking (by score); a method's output is the LLM's context, in the
    # order the LLM reads it. The two are labelled so that nobody reads one as the other.
    order = "score" if trace is None else "context"
    if as_json:
        results = [{**r, "where": where.get(r["chunk_id"], "")} for r in scored_json(hits)]
        out = {"query": query, "retriever": retriever, "order": order, "results": results}
        if trace is not None:
            out.update(method=spec.label, trace=trace)
        _print_json(out)
        return
    if not hits:
        typer.echo("no results")
        return
    if trace is not None:
        n_tokens = trace.get("context_tokens", sum(s.chunk.n_tokens for s in hits))
        typer.echo(
            f"context of {spec.label}: {_units(hits)}, {n_tokens} tokens, in the order the LLM "
            "reads them (score: the method's own)"
        )
        for s in hits:
            typer.echo(f"  - {s.score:.4f}  {_where(s.chunk, where, names)}  [{s.chunk.id}]")
            typer.echo(f"    {_snippet(s.chunk.text)}")
        return
    for rank, s in enumerate(hits, start=1):
        typer.echo(f"{rank:>3}. {s.score:.4f}  {_where(s.chunk, where, names)}  [{s.chunk.id}]")
        typer.echo(f"     {_snippet(s.chunk.text)}")


def _units(hits: Any) -> str:
    """``3 sentences`` when every item is one sentence, else ``3 chunks``."""
    one = all(s.chunk.sent_end - s.chunk.sent_start == 1 for s in hits)
    return _plural(len(hits), "sentence" if one and hits else "chunk")


def _where(
    chunk: Any, where: dict[str, str] | None = None, names: dict[str, str] | None = None
) -> str:
    """The document's name (its title, with the end of its path where another document of the
    index shares that title; else its id), and the page or heading the text sits under."""
    name = (names or {}).get(chunk.doc_id) or chunk.title or chunk.doc_id
    at = (where or {}).get(chunk.id)
    return f"{name} ({at})" if at else name


def _names(idx: Any, hits: Any) -> dict[str, str]:
    """``doc_id -> name`` of the documents ``hits`` come from (:mod:`ragsieve.titles`)."""
    from ragsieve.titles import names_in_index

    return names_in_index(idx, [(s.chunk.doc_id, s.chunk.title) for s in hits])


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.", callback=_text)],
    index_dir: IndexOpt,
    method: Annotated[
        str | None,
        typer.Option(
            help=f"Method spec (default {DEFAULT_METHOD}): tagger (naive's top --k chunks, only "
            "the sentences the evidence tagger keeps), naive, sage, carrot, pareto, saki, full, "
            "'full[unit=passage]'."
        ),
    ] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000, help="Chunks (top-k).")] = 10,
    budget: Annotated[
        int | None,
        typer.Option(min=1, help="Fill the context up to N tokens (a ceiling; replaces --k)."),
    ] = None,
    retriever: MethodRetrieverOpt = None,
    reranker: Annotated[str | None, typer.Option(help="Rerank before selection.")] = None,
    llm: Annotated[
        str, typer.Option(help="local | local:PATH.gguf | openai:MODEL@URL | qwen-0.5b.")
    ] = "local",
    max_tokens: Annotated[int, typer.Option(min=1, max=8192, help="Answer length cap.")] = 256,
    total_budget: TotalBudgetOpt = None,
    llm_ctx: LLMCtxOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    llm_retries: LLMRetriesOpt = None,
    config: ConfigOpt = None,
    compare: Annotated[
        str | None,
        typer.Option(
            "--compare",
            help="Also answer with this method spec (e.g. naive) and print both side by side: "
            "answer, context and prompt tokens, seconds, what each kept.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer QUESTION from the index with an LLM; prints the answer, its context and tokens."""
    from ragsieve.index import Index
    from ragsieve.llm import get_llm
    from ragsieve.methods import build_method, check_spec, parse_spec

    run = {"k": k, "budget": budget, "retriever": retriever, "reranker": reranker}
    spec = check_spec(_spec(method, config), **run)
    other = check_spec(parse_spec(compare), **run) if compare is not None else None
    idx = Index.open(index_dir)
    m = build_method(spec, idx, **run)
    model = get_llm(llm, **_llm_options(llm_timeout, llm_retries, llm_ctx))
    if other is not None:
        pair = [(other.label, build_method(other, idx, **run)), (spec.label, m)]
        from ragsieve.compare import compare as run_compare

        run_compare(
            question,
            pair,
            model,
            idx,
            max_tokens=max_tokens,
            total_budget=total_budget,
            as_json=as_json,
        )
        return
    answer = m.ask(question, model, max_tokens=max_tokens, total_budget=total_budget)
    from ragsieve.explain import where_of

    where = where_of(idx, answer.context.chunks)
    if as_json:
        out = answer.to_json()
        for item in out["context"]:
            item["where"] = where.get(item["chunk_id"], "")
        _print_json(out)
        return
    typer.echo(answer.text or "(empty answer)")
    typer.echo("")
    typer.echo(
        f"context ({answer.method}): {_units(answer.context.chunks)}, "
        f"{answer.context.n_tokens} tokens, in the order the LLM read them"
    )
    names = _names(idx, answer.context.chunks)
    for s in answer.context.chunks:
        typer.echo(
            f"  [{s.chunk.id}] {s.score:.3f} {_where(s.chunk, where, names)}: "
            f"{_snippet(s.chunk.text, 100)}"
        )
    u = answer.usage
    calls = answer.trace.get("llm", {}).get("calls", 1)
    typer.echo(
        f"tokens: prompt {u.prompt_tokens}, completion {u.completion_tokens} "
        f"({calls} LLM call{'s' if calls > 1 else ''}); time {sum(answer.timings.values()):.2f}s"
    )


@app.command()
def explain(
    question: Annotated[str, typer.Argument(help="The question.", callback=_text)],
    index_dir: IndexOpt,
    method: Annotated[
        str | None,
        typer.Option(
            help=f"A method spec (default {DEFAULT_METHOD}, as ask): tagger, naive, sage, "
            "carrot, pareto, saki, full, 'sage[min_k=3]'."
        ),
    ] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000, help="Top-k where used.")] = 10,
    budget: Annotated[int | None, typer.Option(min=1, help="Token budget (a ceiling).")] = None,
    retriever: MethodRetrieverOpt = None,
    reranker: Annotated[str | None, typer.Option(help="Reranker (default: the method's).")] = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write the explanation as a PNG here.")
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show why the context for QUESTION was chosen: score curve and cut, MCTS path, links,
    tokens and time per stage (no LLM call)."""
    from ragsieve.explain import evidence_documents, text_lines
    from ragsieve.explain import explain as do_explain
    from ragsieve.explain import plot as do_plot
    from ragsieve.index import Index

    if plot is not None and plot.suffix.lower() != ".png":
        raise InputError(f"--plot must name a .png file, got {plot}")
    if plot is not None:
        _writable_target(plot, "--plot")
    spec = _spec(method, config)
    idx = Index.open(index_dir)
    r, rep = do_explain(
        question, idx, spec, k=k, budget=budget, retriever=retriever, reranker=reranker
    )
    if plot is not None:
        try:
            rep["plot"] = str(do_plot(rep, plot))
        except OSError as e:
            raise InputError(f"--plot {plot}: {e.strerror or e}") from e
    if as_json:
        # the documents with every candidate's span, as the viewer of `serve` draws them
        rep["documents"] = evidence_documents(idx, r, selected=rep["selected"])
        _print_json(rep)
        return
    for line in text_lines(rep):
        typer.echo(line)
    if plot is not None:
        typer.echo(f"plot: {plot}")


def _eval_specs(
    methods: str | None,
    config: Path | None,
    k: int,
    budget: int | None,
    retriever: str | None,
    reranker: str | None,
) -> list[Any]:
    """``--methods`` plus the spec of ``--config``, each checked before any work."""
    from ragsieve.methods import check_spec, parse_methods, spec_from_toml

    specs = [] if methods is None else parse_methods(methods)
    if methods is None and config is None:
        specs = parse_methods("naive")
    if config is not None:
        specs.append(spec_from_toml(config))
    run = {"k": k, "budget": budget, "retriever": retriever, "reranker": reranker}
    return [check_spec(s, **run) for s in specs]


@app.command("eval")
def eval_cmd(
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset", help="Built-in: squad, hotpotqa, hotpotqa-sent, qasper, quality, msmarco."
        ),
    ] = None,
    data: Annotated[Path | None, typer.Option(help="Generic questions JSONL.")] = None,
    corpus: Annotated[Path | None, typer.Option(help="Shared corpus JSONL (with --data).")] = None,
    methods: Annotated[
        str | None,
        typer.Option(help="Comma-separated methods; NAME[key=value,...] sets options (naive)."),
    ] = None,
    budget: Annotated[int | None, typer.Option(min=1, help="Context token budget.")] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000, help="Chunks (top-k).")] = 10,
    limit: Annotated[int | None, typer.Option(min=1, help="First N questions.")] = None,
    pool: Annotated[
        bool, typer.Option("--pool", help="All per-question documents as one open corpus.")
    ] = False,
    no_llm: Annotated[
        bool, typer.Option("--no-llm", help="Context metrics only (no answers).")
    ] = False,
    llm: Annotated[str, typer.Option(help="LLM spec (see ask).")] = "local",
    llm_ctx: LLMCtxOpt = None,
    llm_timeout: LLMTimeoutOpt = None,
    llm_retries: LLMRetriesOpt = None,
    retriever: MethodRetrieverOpt = None,
    reranker: Annotated[str | None, typer.Option(help="Rerank before selection.")] = None,
    chunker: Annotated[
        str, typer.Option(help="Chunker of the evaluation index: fixed | paragraph | sage.")
    ] = "fixed",
    chunk_tokens: Annotated[
        int | None,
        typer.Option(min=8, max=100_000, help="Chunk size in tokens (default: the chunker's)."),
    ] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="Answer length cap.")] = 64,
    total_budget: TotalBudgetOpt = None,
    price_in: Annotated[
        float, typer.Option(min=0, help="$ per 1M input tokens (SAGE Eq. 1).")
    ] = 10.0,
    price_out: Annotated[float, typer.Option(min=0, help="$ per 1M output tokens.")] = 30.0,
    data_dir: Annotated[
        Path | None, typer.Option(help="Benchmark data folder (default ../shared/data).")
    ] = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Where evaluation indexes live.")] = None,
    out: Annotated[Path | None, typer.Option(help="Write results, table and plot here.")] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", exists=True, dir_okay=False, help="Add the method spec of a TOML file."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Evaluate methods on a benchmark: context, ranked-list, answer and cost metrics."""
    from ragsieve.evaluate.runner import (
        EvalConfig,
        markdown_table,
        run_eval,
        select_dataset,
        write_outputs,
    )

    cfg = EvalConfig(
        methods=_eval_specs(methods, config, k, budget, retriever, reranker),
        k=k,
        budget=budget,
        retriever=retriever,
        reranker=reranker,
        no_llm=no_llm,
        llm=llm,
        llm_options=_llm_options(llm_timeout, llm_retries, llm_ctx),
        max_tokens=max_tokens,
        total_budget=total_budget,
        chunker=chunker,
        chunk_tokens=chunk_tokens,
        price_in_per_m=price_in,
        price_out_per_m=price_out,
        cache_dir=cache_dir,
    )
    if out is not None:
        _writable_target(out, "--out", is_dir=True)
    ds = select_dataset(dataset, data, corpus, limit, pool, data_dir)
    prog, cb = _progress()
    with prog:
        results = run_eval(ds, cfg, progress=cb)
    if out is not None:
        try:
            write_outputs(results, out)
        except OSError as e:
            raise InputError(f"--out {out}: {e.strerror or e}") from e
    if as_json:
        _print_json({k: v for k, v in results.items() if k != "per_question"})
    else:
        typer.echo(markdown_table(results))
        if out is not None:
            typer.echo(
                f"\nwrote {out}/results.json, per_question.jsonl, table.md, quality_vs_tokens.png"
            )


#: ``rm`` names this many removed documents, then the count of the rest.
RM_SHOWN = 10


@app.command()
def rm(
    doc_ids: Annotated[
        list[str],
        typer.Argument(
            help="Files, folders (every document under them), quoted globs ('notes/*.md': * "
            "stays in one folder, ** crosses folders) or document ids; a file need not exist "
            "any more."
        ),
    ],
    index_dir: IndexOpt,
    wait: WaitOpt = 60.0,
    as_json: JsonOpt = False,
) -> None:
    """Remove documents from an index: only those named. Globs follow the shell (``*`` stays in
    one folder, ``**`` crosses folders; a name that is an indexed file is taken literally); an
    empty name is refused. Naming one that is not there (a second rm of the same file) removes
    nothing and says so; it is not an error (exit 0), like rm -f."""
    from ragsieve.index import Index
    from ragsieve.index.sync import check_name, matching_documents

    for arg in doc_ids:  # before the index is opened: an empty variable removes nothing
        check_name(arg)
    idx = Index.open(index_dir)
    idx.lock_wait, idx.on_lock_wait = wait, _say
    docs = idx.documents()
    ids: list[str] = []
    seen: set[str] = set()
    missing: list[str] = []
    for arg in doc_ids:
        found = matching_documents(docs, arg)
        ids.extend(i for i in found if i not in seen)
        seen.update(found)
        if not found:
            missing.append(arg)
    removed = idx.remove(ids) if ids else []
    if as_json:
        _print_json({"removed": removed, "missing": missing})
        return
    line = f"removed {_plural(len(removed), 'document')}"
    if removed:
        more = len(removed) - RM_SHOWN
        line += ": " + ", ".join(removed[:RM_SHOWN])
        line += f" and {more} more (--json lists them all)" if more > 0 else ""
    typer.echo(line)
    if missing:
        typer.echo(f"not in the index {index_dir}: {', '.join(missing)}", err=True)


@app.command()
def info(
    index_dir: IndexOpt,
    documents: Annotated[
        bool, typer.Option("--documents", help="Also list every document (id, title, chunks).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Show what an index holds and how it was built."""
    import datetime as dt

    from ragsieve.index import Index

    idx = Index.open(index_dir)
    stats = idx.stats()
    docs = idx.documents() if documents else None
    if as_json:
        _print_json(stats if docs is None else {**stats, "document_list": docs})
        return
    for key, value in stats.items():
        if key == "updated" and isinstance(value, int | float):
            when = dt.datetime.fromtimestamp(value).astimezone()
            value = when.isoformat(sep=" ", timespec="seconds")
        typer.echo(f"{key}: {value}")
    if docs:
        from ragsieve.titles import display_names

        # A title two documents share gains the end of each one's path, as in search and ask.
        names = display_names((d["doc_id"], d["title"]) for d in docs)
    for d in docs or []:
        title = f"  {names[d['doc_id']]}" if d["title"] else ""
        typer.echo(f"  {d['doc_id']}{title}  ({_plural(d['n_chunks'], 'chunk')})")


@app.command()
def repair(index_dir: IndexOpt, wait: WaitOpt = 60.0, as_json: JsonOpt = False) -> None:
    """Rebuild a lost or damaged manifest from the newest agreeing versions of the tables."""
    import dataclasses

    from ragsieve.index.repair import repair as do_repair

    rep = do_repair(index_dir, wait=wait, on_wait=_say)
    if as_json:
        _print_json(dataclasses.asdict(rep))
        return
    for line in rep.lines():
        typer.echo(line)


def _register_plugins() -> None:
    """Commands that live beside their stage (``train-reranker`` etc.) add themselves here."""
    import importlib

    for mod in (
        "ragsieve.rerank.cli",
        "ragsieve.segment.cli",
        "ragsieve.serve.cli",
        "ragsieve.agent.cli",
        "ragsieve.tag.cli",
    ):
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise
            continue
        module.register(app)


_register_plugins()


def _usage_line(e: typer.TyperException) -> str:
    """A Typer/Click usage error as one line, with the ``--help`` to try."""
    msg = " ".join(str(e.format_message()).split())  # type: ignore[attr-defined]
    ctx = getattr(e, "ctx", None)
    where = f"{ctx.command_path} --help" if ctx is not None else "ragsieve --help"
    return f"error: {msg} (see '{where}')"


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


if __name__ == "__main__":
    main()
