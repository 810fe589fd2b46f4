"""``ragsieve index``, ``rm``, ``info`` and ``repair``: the commands that write an index or
show what it holds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragsieve.cli.common import (
    FORMATS,
    IndexOpt,
    JsonOpt,
    WaitOpt,
    err_console,
    plural,
    print_json,
    progress,
    say,
)


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
    follow_symlinks: bool = False,
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
        return Index.open_or_create(index_dir, wanted, wait=wait, on_wait=say), None
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
        list_files(paths, follow_symlinks)
    else:
        loaded = load_paths(paths, progress, follow_symlinks=follow_symlinks)
    if force:
        return _rebuilt(index_dir, cfg, wait), loaded
    return Index.open_or_create(index_dir, cfg, wait=wait, on_wait=say), loaded


def _rebuilt(index_dir: str, cfg: Any, wait: float) -> Any:
    """``--force``: an index that is rebuilt beside the old one and swapped in by its commit
    (the old one answers until then); a directory with no readable index starts over."""
    from ragsieve.errors import IndexStoreError
    from ragsieve.index import Index
    from ragsieve.index.location import Location
    from ragsieve.index.store import MANIFEST

    if Location(index_dir).has_file(MANIFEST):
        try:
            return Index.open_for_rebuild(index_dir, cfg, wait=wait, on_wait=say)
        except IndexStoreError:
            pass  # unreadable: nothing to keep answering, start over as before
    return Index.create(index_dir, cfg, force=True, wait=wait, on_wait=say)


def _index_result(index_dir: str, idx: Any, report: Any, skipped: list) -> dict[str, Any]:
    stats = idx.stats()
    out = {
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
    if report.sentences is not None:  # the index has a sentence table (local engine)
        out["sentences_written"] = report.sentences.n_sentences
    if "sentence_rows" in stats:
        out["total_sentences"] = stats["sentence_rows"]
    return out


#: ``index``'s options, named once here so that the command reads as its steps.
PathsArg = Annotated[
    list[Path], typer.Argument(help=f"Files or folders (every {FORMATS} file under them).")
]
ChunkerOpt = Annotated[
    str | None, typer.Option("--chunker", help="fixed | paragraph | sage (new index: fixed).")
]
ChunkTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--chunk-tokens",
        min=8,
        max=100_000,
        help="Max tokens per chunk (fixed 200, paragraph 512, sage 400).",
    ),
]
EmbedderOpt = Annotated[
    str | None, typer.Option("--embedder", help="minilm | minilm-onnx | st:ORG/NAME.")
]
EngineOpt = Annotated[
    str, typer.Option("--engine", help="local (one process) | ray (see docs/scale-out.md).")
]
AddressOpt = Annotated[
    str | None,
    typer.Option(
        "--address", help="Ray cluster to join (HOST:PORT, ray://HOST:10001); --engine ray."
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option("--workers", min=1, help="Ray embedding workers (default: every CPU)."),
]
SentencesOpt = Annotated[
    bool,
    typer.Option(
        "--sentences",
        help="Also store sentences with Pareto vectors and SAKI links (added to an existing "
        "index from its stored chunks; needed by --method pareto / saki / full; local "
        "engine only).",
    ),
]
ParetoContextOpt = Annotated[
    str | None,
    typer.Option(
        "--pareto-context",
        help="With --sentences: late (default) | exact (the paper's) | mean.",
    ),
]
SentencePassageOpt = Annotated[
    str | None,
    typer.Option(
        "--sentence-passage",
        help="With --sentences: auto (default) | paragraph | chunk | document.",
    ),
]
ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Rebuild the index from scratch; the old one answers until the new one commits.",
    ),
]
KeepMissingOpt = Annotated[
    bool,
    typer.Option(
        "--keep-missing",
        help="Keep the documents of files that have left a FOLDER given here "
        "(by default they are removed from the index, and the command says so).",
    ),
]
FollowSymlinksOpt = Annotated[
    bool,
    typer.Option(
        "--follow-symlinks",
        help="Follow symlinks that point outside the folder (by default they are skipped "
        "with a warning, and documents read through them earlier are removed).",
    ),
]


def index(
    paths: PathsArg,
    index_dir: IndexOpt,
    chunker: ChunkerOpt = None,
    chunk_tokens: ChunkTokensOpt = None,
    embedder: EmbedderOpt = None,
    engine: EngineOpt = "local",
    address: AddressOpt = None,
    workers: WorkersOpt = None,
    sentences: SentencesOpt = False,
    pareto_context: ParetoContextOpt = None,
    sentence_passage: SentencePassageOpt = None,
    force: ForceOpt = False,
    keep_missing: KeepMissingOpt = False,
    follow_symlinks: FollowSymlinksOpt = False,
    wait: WaitOpt = 60.0,
    as_json: JsonOpt = False,
) -> None:
    """Add files to an index (created if missing); changed files are re-indexed, and files
    that have left a folder given here are removed from the index (--keep-missing keeps them).
    Symlinks out of a folder are not followed unless --follow-symlinks."""
    add_paths_ray = _check_engine(engine, address, workers)
    sent_opts = _sentence_options(index_dir, sentences, pareto_context, sentence_passage)
    settings = {"embedder": embedder, "chunker": chunker, "chunk_tokens": chunk_tokens}
    prog, cb = progress()
    with prog:  # reading a new index's files is a stage too (a 13 MB HTML page takes a while)
        idx, loaded = _index_to_write(
            index_dir,
            paths,
            settings,
            sentences,
            sent_opts,
            engine,
            force,
            wait,
            cb,
            follow_symlinks,
        )
        if add_paths_ray is not None:
            report, skipped = add_paths_ray(
                idx,
                paths,
                address=address,
                workers=workers,
                progress=cb,
                follow_symlinks=follow_symlinks,
            )
        else:
            report, skipped = _add_local(idx, paths, loaded, force, follow_symlinks, cb)
    con = err_console()
    for path, why in skipped:
        con.print(f"[yellow]warning:[/] skipped {path}: {why}", highlight=False, soft_wrap=True)
    linked = [] if follow_symlinks else _remove_linked_out(idx, paths, report, skipped, con)
    gone = [] if keep_missing else _remove_gone(idx, paths, report, skipped)
    result = _index_result(index_dir, idx, report, skipped)
    result["removed"] = linked + gone
    if as_json:
        print_json(result)
        return
    _say_indexed(result, report, paths, linked, gone)


def _add_local(
    idx: Any, paths: list[Path], loaded: Any, force: bool, follow_symlinks: bool, cb: Any
) -> tuple[Any, list]:
    """The local engine's add: the inputs (read now unless ``loaded`` holds them already)
    written to ``idx``; the add report and the files skipped, with why."""
    if loaded is None:
        from ragsieve.checks import check_paths
        from ragsieve.io import load_paths

        checked = check_paths("paths", paths)
        loaded = load_paths(checked, cb, follow_symlinks=follow_symlinks)
    _say_large_files(idx, loaded.documents, force)
    report = idx.add_loaded(loaded.documents, loaded.roots, follow_symlinks, cb)
    return report, loaded.skipped


def _say_indexed(
    result: dict[str, Any], report: Any, paths: list[Path], linked: list[str], gone: list[str]
) -> None:
    """``index``'s text report: what was written and what the index holds now, then the
    documents removed for a symlink out of a folder or a file that left it."""
    # With a sentence table, its rows too: ``index --sentences`` on an existing index writes
    # no chunks, only sentences.
    written = f"{report.n_chunks} chunks, {report.n_tokens} tokens"
    if "sentences_written" in result:
        written += f", {result['sentences_written']} sentences"
    held = f"{result['total_documents']} documents, {result['total_chunks']} chunks"
    if "total_sentences" in result:
        held += f", {result['total_sentences']} sentences"
    typer.echo(
        f"indexed {result['added']} new, {result['updated']} changed, "
        f"{result['unchanged']} unchanged document(s): {written} in {report.seconds:.1f}s; "
        f"index now has {held}"
    )
    if linked:
        typer.echo(
            f"removed {plural(len(linked), 'document')} read through a symlink out of "
            f"{', '.join(str(p) for p in paths if p.is_dir())} (--follow-symlinks keeps them): "
            + ", ".join(linked)
        )
    if gone:
        typer.echo(
            f"removed {plural(len(gone), 'document')} whose file has left "
            f"{', '.join(str(p) for p in paths if p.is_dir())} (--keep-missing keeps them): "
            + ", ".join(gone)
        )


def _remove_gone(idx: Any, paths: list[Path], report: Any, skipped: list) -> list[str]:
    """Remove the documents of files that have left the folders in ``paths``; their ids."""
    from ragsieve.index.sync import stale_documents

    folders = [p for p in paths if p.is_dir()]
    if not folders:
        return []
    read = set(report.added) | set(report.updated) | set(report.unchanged)
    stale = stale_documents(idx.documents(), folders, read, [s for s, _ in skipped])
    return idx.remove(stale) if stale else []


def _say_large_files(idx: Any, documents: list, force: bool) -> None:
    """One ``note:`` line per file large enough to take a while (its chunks, the rate they
    embed at and the time that makes), before the work starts (``force``: all is new)."""
    from ragsieve.index.estimate import large_files
    from ragsieve.segment import get_segmenter

    known = {} if force else idx.document_hashes()
    cut = get_segmenter(idx.config.chunker, chunk_tokens=idx.config.chunk_tokens)
    for e in large_files(documents, known, cut, idx.embedder):
        say(f"note: {e.line()}")


def _remove_linked_out(
    idx: Any, paths: list[Path], report: Any, skipped: list, con: Any
) -> list[str]:
    """Remove the documents read earlier through a symlink out of a folder in ``paths`` (this
    read did not follow it), warning as the walk does for a link it skips; their ids."""
    from ragsieve.index.sync import outside_documents
    from ragsieve.io import link_refusal

    folders = [p for p in paths if p.is_dir()]
    if not folders:
        return []
    read = set(report.added) | set(report.updated) | set(report.unchanged)
    found = outside_documents(idx.documents(), folders, read)
    warned = {p for p, _ in skipped}
    for _, link, file, root in found:
        if link not in warned:  # the walk warned already for a link still there
            why = link_refusal(link, file, root)
            con.print(f"[yellow]warning:[/] skipped {link}: {why}", highlight=False, soft_wrap=True)
    return idx.remove([d for d, *_ in found]) if found else []


#: ``rm`` names this many removed documents, then the count of the rest.
RM_SHOWN = 10


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
    idx.lock_wait, idx.on_lock_wait = wait, say
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
        print_json({"removed": removed, "missing": missing})
        return
    line = f"removed {plural(len(removed), 'document')}"
    if removed:
        more = len(removed) - RM_SHOWN
        line += ": " + ", ".join(removed[:RM_SHOWN])
        line += f" and {more} more (--json lists them all)" if more > 0 else ""
    typer.echo(line)
    if missing:
        typer.echo(f"not in the index {index_dir}: {', '.join(missing)}", err=True)


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
        print_json(stats if docs is None else {**stats, "document_list": docs})
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
        typer.echo(f"  {d['doc_id']}{title}  ({plural(d['n_chunks'], 'chunk')})")


def repair(index_dir: IndexOpt, wait: WaitOpt = 60.0, as_json: JsonOpt = False) -> None:
    """Rebuild a lost or damaged manifest from the newest agreeing versions of the tables."""
    import dataclasses

    from ragsieve.index.repair import repair as do_repair

    rep = do_repair(index_dir, wait=wait, on_wait=say)
    if as_json:
        print_json(dataclasses.asdict(rep))
        return
    for line in rep.lines():
        typer.echo(line)
