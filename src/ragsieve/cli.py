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

from ragsieve.errors import InputError, RagsieveError

app = typer.Typer(
    name="ragsieve",
    help="Precise retrieval for RAG: index documents, search them, ask questions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


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


def _spec(method: str | None, config: Path | None, default: str) -> Any:
    """The method spec from ``--method`` or ``--config`` (not both), else ``default``."""
    from ragsieve.methods import parse_spec, spec_from_toml

    if method is not None and config is not None:
        raise InputError("give --method or --config, not both")
    if method is not None and not method.strip():
        raise InputError("--method is empty: give a method spec such as naive or 'sage[min_k=3]'")
    if config is not None:
        return spec_from_toml(config)
    return parse_spec(method or default)


def _llm_options(timeout: float | None, retries: int | None) -> dict[str, Any]:
    """The ``get_llm`` options the user set (a local backend refuses them with one line)."""
    opts: dict[str, Any] = {}
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
    """A rich progress bar on stderr and the callback that drives it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    prog = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_err_console(),
        transient=True,
        disable=not sys.stderr.isatty(),
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
) -> tuple[Any, Any]:
    """The index to add to (opened, or created after the inputs were checked) and, for a new
    local index, its inputs already read (so they are read once)."""
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
        loaded = load_paths(paths)
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
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (.txt, .md, .jsonl).")],
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
    wait: WaitOpt = 60.0,
    as_json: JsonOpt = False,
) -> None:
    """Add files to an index (created if missing); changed files are re-indexed."""
    add_paths_ray = _check_engine(engine, address, workers)
    sent_opts = _sentence_options(index_dir, sentences, pareto_context, sentence_passage)
    settings = {"embedder": embedder, "chunker": chunker, "chunk_tokens": chunk_tokens}
    idx, loaded = _index_to_write(
        index_dir, paths, settings, sentences, sent_opts, engine, force, wait
    )
    prog, cb = _progress()
    with prog:
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
    result = _index_result(index_dir, idx, report, skipped)
    if as_json:
        _print_json(result)
        return
    typer.echo(
        f"indexed {result['added']} new, {result['updated']} changed, "
        f"{result['unchanged']} unchanged document(s): {report.n_chunks} chunks, "
        f"{report.n_tokens} tokens in {report.seconds:.1f}s; index now has "
        f"{result['total_documents']} documents, {result['total_chunks']} chunks"
    )


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
            help="Select with a method instead (sage, carrot, pareto, saki, full; "
            "'carrot[iterations=20]'): prints the context it would give the LLM."
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
    from ragsieve.types import scored_json

    trace = None
    if method is not None or config is not None:
        from ragsieve.explain import explain as run_method
        from ragsieve.index import Index

        spec = _spec(method, config, "naive")
        run = {"k": k, "budget": budget, "retriever": retriever, "reranker": reranker}
        r, _ = run_method(query, Index.open(index_dir), spec, **run)
        hits, trace = list(r.context.chunks), r.trace
    else:
        if budget is not None:
            raise InputError("--budget needs --method (plain search returns the top --k)")
        retriever = retriever or "dense"
        hits = do_search(query, index_dir, k=k, retriever=retriever, reranker=reranker)
    if as_json:
        out = {"query": query, "retriever": retriever, "results": scored_json(hits)}
        if trace is not None:
            out.update(method=spec.label, trace=trace)
        _print_json(out)
        return
    if not hits:
        typer.echo("no results")
        return
    for rank, s in enumerate(hits, start=1):
        typer.echo(f"{rank:>3}. {s.score:.4f}  {s.chunk.title or s.chunk.doc_id}  [{s.chunk.id}]")
        typer.echo(f"     {_snippet(s.chunk.text)}")


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.", callback=_text)],
    index_dir: IndexOpt,
    method: Annotated[
        str | None,
        typer.Option(
            help="Method spec: naive, sage, carrot, pareto, saki, full, 'full[unit=passage]' "
            "(default naive)."
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
    llm_timeout: LLMTimeoutOpt = None,
    llm_retries: LLMRetriesOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer QUESTION from the index with an LLM; prints the answer, chunks and tokens."""
    from ragsieve.index import Index
    from ragsieve.llm import get_llm
    from ragsieve.methods import build_method, check_spec

    run = {"k": k, "budget": budget, "retriever": retriever, "reranker": reranker}
    spec = check_spec(_spec(method, config, "naive"), **run)
    idx = Index.open(index_dir)
    m = build_method(spec, idx, **run)
    model = get_llm(llm, **_llm_options(llm_timeout, llm_retries))
    answer = m.ask(question, model, max_tokens=max_tokens, total_budget=total_budget)
    if as_json:
        _print_json(answer.to_json())
        return
    typer.echo(answer.text or "(empty answer)")
    typer.echo("")
    typer.echo(f"context: {len(answer.context.chunks)} chunk(s), {answer.context.n_tokens} tokens")
    for s in answer.context.chunks:
        typer.echo(f"  [{s.chunk.id}] {s.score:.3f} {s.chunk.title}: {_snippet(s.chunk.text, 100)}")
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
            help="A method spec: sage, carrot, saki, full, 'sage[min_k=3]' (default sage)."
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
    spec = _spec(method, config, "sage")
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
        llm_options=_llm_options(llm_timeout, llm_retries),
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


@app.command()
def rm(
    doc_ids: Annotated[list[str], typer.Argument(help="Document ids (paths as indexed).")],
    index_dir: IndexOpt,
    wait: WaitOpt = 60.0,
    as_json: JsonOpt = False,
) -> None:
    """Remove documents from an index."""
    from ragsieve.index import Index

    idx = Index.open(index_dir)
    idx.lock_wait, idx.on_lock_wait = wait, _say
    ids = [str(Path(d).resolve()) if Path(d).exists() else d for d in doc_ids]
    removed = idx.remove(ids)
    missing = [d for d in ids if d not in removed]
    if missing and not removed:
        # Nothing matched: a typo, not a partial success; exit 2 like any other bad input.
        raise InputError(f"no such document in {index_dir}: {', '.join(missing)}")
    if as_json:
        _print_json({"removed": removed, "missing": missing})
    else:
        typer.echo(f"removed {len(removed)} document(s)")
        if missing:
            typer.echo(f"not in the index: {', '.join(missing)}", err=True)


@app.command()
def info(index_dir: IndexOpt, as_json: JsonOpt = False) -> None:
    """Show what an index holds and how it was built."""
    from ragsieve.index import Index

    stats = Index.open(index_dir).stats()
    if as_json:
        _print_json(stats)
        return
    for key, value in stats.items():
        typer.echo(f"{key}: {value}")


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
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()
