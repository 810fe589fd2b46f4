"""Distributed indexing: the local engine's pipeline as Ray Data stages, same index format.

Stages, and where they run:

1. *list* (driver): expand the input folders, as the local engine does, so that bad paths fail
   before anything starts.
2. *read* (Ray tasks): read and parse each file, hash its text and tag it ``added``, ``updated``
   or ``unchanged`` against the committed document hashes. The result is materialised: the
   driver needs every document's status before it may write (changed documents lose their old
   rows first), and the later stages must not read the files a second time.
3. *split + segment + embed* (Ray actors, :class:`ChunkAndEmbed`): one callable class per worker
   loads the segmenter and the embedding model once and turns batches of documents into chunk
   rows with their vectors (a ``FixedSizeList``, as Lance's vector indexes need).
4. *write* (Ray tasks, ``lance-ray``): fragments are written in parallel and committed as one
   Lance append per table. Ray's own ``Dataset.write_lance`` does not work with pylance 14.
5. *sentences* (Ray actors, :class:`SentenceRows`; only for an index built with
   ``--sentences``): each worker reads back the chunks stage 4 wrote for its documents (a
   sentence's passage may be its chunk, and segmenting twice would cost a second model pass)
   and builds the sentence rows with the local engine's own :func:`build_sentence_rows`: core
   vectors, Pareto contexts and attention links. They are written like the chunks.

The commit is the store's own (:meth:`Index._commit`): the full-text index is rebuilt and the
manifest is replaced only after every Lance commit above succeeded, under the same write lock.
A job that fails or is killed at any point before that leaves the previous index intact, and the
next writer rolls the tables back to the committed versions, exactly as with the local engine.

On a multi-node cluster every node reads the input files and writes Lance fragments itself, so
the inputs must be on storage all nodes see (a shared file system) and the index on shared
storage or an object store (``s3://...``); see docs/scale-out.md.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ragsieve.embed import index_embedder
from ragsieve.errors import ConfigError, IndexStoreError, InputError, RagsieveError
from ragsieve.index.manifest import CHUNKS, DOCUMENTS
from ragsieve.index.sentences import (
    SENTENCES,
    SentenceOptions,
    build_sentence_rows,
    sentence_schema,
)
from ragsieve.index.store import Index
from ragsieve.index.tables import (
    DOC_SCHEMA,
    _chunks_to_arrow,
    _docs_to_arrow,
    _status,
    chunk_schema,
    chunks_by_doc,
    sha256_text,
)
from ragsieve.index.writer import AddReport
from ragsieve.io import check_documents, read_source, walk_paths
from ragsieve.progress import Progress
from ragsieve.segment import get_segmenter
from ragsieve.types import Document

log = logging.getLogger(__name__)

#: Documents per batch handed to a worker: the local engine segments 64 at a time too.
BATCH_DOCS = 64
#: Rows per Lance fragment file written by one write task. Large enough that a corpus becomes a
#: few fragments, small enough that writing starts before the last batch is embedded.
ROWS_PER_FILE = 100_000

#: Columns of the read stage's output. ``file_no``/``pos`` restore the input order (Ray does not
#: keep it); ``skipped``/``error`` carry a folder file's skip reason or an explicit file's error
#: back to the driver, which reports them as the local engine would.
_READ_TEXT = ("path", "doc_id", "title", "source", "text", "sha256", "status", "skipped", "error")
READ_SCHEMA = pa.schema(
    [("file_no", pa.int64()), ("pos", pa.int64()), *((n, pa.string()) for n in _READ_TEXT)]
)
_META = [c for c in READ_SCHEMA.names if c != "text"]


def read_files(batch: pa.Table, known: Mapping[str, str]) -> pa.Table:
    """Read stage: one row per document (or per skipped file) of the listed files in ``batch``."""
    rows: list[dict[str, Any]] = []
    for file_no, path, explicit in zip(
        batch["file_no"].to_pylist(),
        batch["path"].to_pylist(),
        batch["explicit"].to_pylist(),
        strict=True,
    ):
        base = {"file_no": file_no, "path": path}
        try:
            docs, skipped = read_source(Path(path), explicit)
        except InputError as e:
            rows.append({**base, "pos": 0, "error": str(e)})
            continue
        if skipped is not None:
            rows.append({**base, "pos": 0, "skipped": skipped})
        for pos, d in enumerate(docs):
            sha = sha256_text(d.text)
            rows.append(
                {
                    **base,
                    "pos": pos,
                    "doc_id": d.id,
                    "title": d.title,
                    "source": d.source,
                    "text": d.text,
                    "sha256": sha,
                    "status": _status(d.id, sha, known),
                }
            )
    return pa.Table.from_pylist(rows, schema=READ_SCHEMA)


def keep_todo(batch: pa.Table) -> pa.Table:
    """The documents to (re-)index: added or updated ones."""
    todo = pc.and_(pc.is_valid(batch["doc_id"]), pc.not_equal(batch["status"], "unchanged"))
    return batch.filter(pc.fill_null(todo, False))


def _documents(batch: pa.Table) -> list[Document]:
    return [
        Document(id=i, text=t, title=ti or "", source=s or "")
        for i, t, ti, s in zip(
            batch["doc_id"].to_pylist(),
            batch["text"].to_pylist(),
            batch["title"].to_pylist(),
            batch["source"].to_pylist(),
            strict=True,
        )
    ]


class ChunkAndEmbed:
    """Split, segment and embed stage: the models load once per Ray worker, in ``__init__``.

    The same registries as the local engine (:func:`get_segmenter`, :func:`index_embedder`) and
    the same row builder (:func:`_chunks_to_arrow`) keep the two engines' output identical.
    """

    def __init__(self, chunker: str, chunk_tokens: int, embedder: str, dim: int) -> None:
        self.segmenter = get_segmenter(chunker, chunk_tokens=chunk_tokens)
        self.embedder = index_embedder(embedder)
        self.dim = dim
        if self.embedder.dim != dim:
            raise ConfigError(
                f"embedder {embedder} gives {self.embedder.dim}-d vectors; the index holds {dim}-d"
            )

    def __call__(self, batch: pa.Table) -> pa.Table:
        docs = _documents(batch)
        chunks = [c for cs in self.segmenter.segment(docs) for c in cs]
        if not chunks:
            return chunk_schema(self.dim).empty_table()
        vecs = self.embedder.embed([c.text for c in chunks])
        return _chunks_to_arrow(chunks, vecs, self.dim)


class SentenceRows:
    """Sentence stage: the sentence table's rows for a batch of documents, as the local engine
    builds them (:func:`build_sentence_rows`), from the chunks already written for them.

    ``chunks_uri``/``chunks_version`` name the chunks table as stage 4 left it (uncommitted: the
    manifest still points at the previous version, but the Lance version exists); reading it
    back gives exactly the chunks the local engine would hand over, without segmenting again.
    """

    def __init__(
        self,
        embedder: str,
        dim: int,
        options: SentenceOptions,
        chunks_uri: str,
        chunks_version: int,
        storage_options: Mapping[str, str] | None = None,
    ) -> None:
        import lance

        self.embedder = index_embedder(embedder)
        self.dim = dim
        self.options = options
        self.chunks = lance.dataset(
            chunks_uri, version=chunks_version, storage_options=dict(storage_options or {})
        )

    def __call__(self, batch: pa.Table) -> pa.Table:
        docs = _documents(batch)
        if not docs:
            return sentence_schema(self.dim).empty_table()
        chunks_of = chunks_by_doc(self.chunks, [d.id for d in docs])
        return build_sentence_rows(docs, chunks_of, self.options, self.embedder, self.dim)


def document_rows(batch: pa.Table, n_chunks: Mapping[str, int]) -> pa.Table:
    """Write stage of the documents table: the local engine's rows, with each chunk count."""
    docs = _documents(batch)
    return _docs_to_arrow([(d, int(n_chunks.get(d.id, 0))) for d in docs])


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[None]:
    """Connect to a cluster at ``address``, or start a private local Ray instance.

    ``address="local"`` is passed when none is given, so that a cluster left behind by another
    program (``/tmp/ray/ray_current_cluster``) is never joined by accident. When the caller has
    already initialised Ray (a benchmark, a notebook), that connection is used and left open.
    """
    import ray

    if ray.is_initialized():
        yield
        return
    kwargs: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
    }
    with warnings.catch_warnings():
        # ray.init starts its daemons by fork + exec, which Lance's and LanceDB's at-fork hooks
        # warn about; the exec makes them harmless, and the warnings would only confuse users.
        warnings.filterwarnings("ignore", message=".*fork", category=UserWarning)
        warnings.filterwarnings("ignore", message=".*fork", category=RuntimeWarning)
        if address:
            check_address(address)
            try:
                ray.init(address=address, **kwargs)
            except Exception as e:
                raise ConfigError(
                    f"cannot join the Ray cluster at {address}: {_first_line(e)}"
                ) from e
        else:
            with _env_default(WORKER_NICENESS_ENV, "0"):
                ray.init(address="local", num_cpus=num_cpus, **kwargs)
    try:
        yield
    finally:
        ray.shutdown()


#: Ray starts its workers at nice 15. Beside other busy processes they then get about 1% of a
#: core each, and a private index build crawls while its driver runs at the user's priority
#: (a 20-second test took over 10 minutes at a load of 8). A private Ray's workers run at the
#: driver's priority instead, unless the user set this variable; a cluster keeps its own.
WORKER_NICENESS_ENV = "RAY_worker_niceness"


@contextlib.contextmanager
def _env_default(name: str, value: str) -> Iterator[None]:
    """``os.environ[name] = value`` while the block runs (Ray's daemons, started in it, read
    it), unless it is already set; the environment is as it was afterwards."""
    if name in os.environ:
        yield
        return
    os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)


def check_address(address: str) -> None:
    """Fail at once when nothing listens at ``HOST:PORT``.

    ``ray.init`` retries an unreachable address for many minutes before it gives up; a plain
    TCP connect tells a wrong address or a stopped cluster apart in seconds.
    """
    hostport = address.split("://", 1)[-1]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" or another form Ray resolves itself
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=10):
            pass
    except OSError as e:
        raise ConfigError(
            f"cannot join the Ray cluster at {address}: {e.strerror or e} "
            "(is `ray start --head` running there?)"
        ) from None


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _user_error(e: BaseException) -> RagsieveError:
    """The ragsieve error inside a Ray failure (Ray wraps a worker's exception, sometimes twice),
    or a one-line index error: the CLI prints user errors as one line, not a Ray traceback."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [e]
    while todo:
        cur = todo.pop()
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, RagsieveError):
            return cur
        todo += [getattr(cur, "cause", None), cur.__cause__, cur.__context__]
    return IndexStoreError(f"the Ray indexing job failed, nothing was committed: {_first_line(e)}")


def _quiet_ray_data() -> None:
    """No progress bars or per-dataset banners on the CLI's stderr; errors still propagate."""
    from ray.data import DataContext

    ctx = DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    # It says, once, that progress bars are off: that is the point.
    logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)


def _collect(ds: Any) -> pa.Table:
    import ray

    tables = [t for t in ray.get(ds.to_arrow_refs()) if t.num_rows]
    return pa.concat_tables(tables) if tables else pa.table({})


def add_paths_ray(
    index: Index,
    paths: Sequence[str | Path],
    *,
    address: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
    follow_symlinks: bool = False,
) -> tuple[AddReport, list[tuple[str, str]]]:
    """Index files into ``index`` with Ray: :meth:`Index.add_paths`'s result and semantics
    (symlinks out of a folder too, and the roots recorded).

    ``address`` joins a running cluster (``HOST:PORT`` or ``ray://HOST:10001``); without it a
    local Ray instance is started for the call. ``workers`` is the number of split/segment/embed
    actors (one CPU each; default: every CPU of the cluster; on a cluster, the job waits until
    that many CPUs are free). An index built with ``--sentences`` gets its sentence rows from
    the workers too (:class:`SentenceRows`).
    """
    t0 = time.perf_counter()
    listing = walk_paths(paths, follow_symlinks)
    files = listing.files
    index._roots_to_add = dict.fromkeys(listing.roots, follow_symlinks)
    # A private instance gets every core, or as many CPUs as workers were asked for: each worker
    # takes one, and an actor pool larger than the cluster would wait for CPUs forever.
    local_cpus = None if address else max(os.cpu_count() or 1, workers or 0)
    try:
        with index._writing(progress) as tables, ray_session(address, local_cpus):
            report, skipped = _index_files(index, tables, files, paths, workers, progress)
    except RagsieveError:
        raise
    except Exception as e:
        raise _user_error(e) from e
    finally:
        index._roots_to_add = None
    report.seconds = time.perf_counter() - t0
    return report, [*listing.refused, *skipped]


def _index_files(
    index: Index,
    tables: dict[str, Any],
    files: list[tuple[Path, bool]],
    paths: Sequence[str | Path],
    workers: int | None,
    progress: Progress | None,
) -> tuple[AddReport, list[tuple[str, str]]]:
    """The stages, inside the write lock and a Ray session; ends with the store's commit."""
    import ray

    _quiet_ray_data()
    known = Index.document_hashes_from(tables[DOCUMENTS])
    read, report, skipped = _read(files, paths, known)
    todo_ids = report.added + report.updated
    if not todo_ids:
        if index._roots_changed():
            index._commit(tables, progress)
        return report, skipped
    if progress:
        progress("index", 0, len(todo_ids))
    index._delete_documents(tables, report.updated)

    # One block per file comes out of the read stage, so a single large .jsonl file would reach
    # one worker only: cut the documents to embed into blocks for every worker.
    n_workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    n_blocks = min(len(todo_ids), max(4 * n_workers, math.ceil(len(todo_ids) / 1024)))
    todo = read.map_batches(keep_todo, batch_format="pyarrow").repartition(n_blocks)
    todo = todo.materialize()
    del read  # its object-store copy of the unchanged documents is no longer needed

    cfg, dim = index.config, int(index.manifest["dim"])
    chunks = _on_workers(
        todo,
        n_workers,
        ChunkAndEmbed,
        chunker=cfg.chunker,
        chunk_tokens=cfg.chunk_tokens,
        embedder=cfg.embedder,
        dim=dim,
    )
    _append(index, CHUNKS, chunks, chunk_schema(dim))
    tables[CHUNKS].checkout_latest()

    n_chunks = _written_chunks(tables[CHUNKS], todo_ids, report)

    if SENTENCES in tables:
        sentences = _on_workers(
            todo,
            n_workers,
            SentenceRows,
            embedder=cfg.embedder,
            dim=dim,
            options=cfg.sentence_options(),
            chunks_uri=index.location.child_uri(f"{CHUNKS}.lance"),
            chunks_version=tables[CHUNKS].version,
            storage_options=index.location.storage_options or None,
        )
        _append(index, SENTENCES, sentences, sentence_schema(dim))
        tables[SENTENCES].checkout_latest()

    doc_rows = todo.map_batches(
        document_rows, fn_kwargs={"n_chunks": n_chunks}, batch_format="pyarrow"
    )
    _append(index, DOCUMENTS, doc_rows, DOC_SCHEMA)
    tables[DOCUMENTS].checkout_latest()
    if progress:
        progress("index", len(todo_ids), len(todo_ids))
    index._commit(tables, progress)
    return report, skipped


def _on_workers(todo: Any, n_workers: int, actor: type, **kwargs: Any) -> Any:
    """``todo`` through a pool of ``n_workers`` one-CPU ``actor``s (each loads its models
    once), ``BATCH_DOCS`` documents a call."""
    import ray

    return todo.map_batches(
        actor,
        fn_constructor_kwargs=kwargs,
        batch_size=BATCH_DOCS,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=n_workers),
        num_cpus=1,
    )


def _written_chunks(chunks: Any, todo_ids: list[str], report: AddReport) -> dict[str, int]:
    """Chunk counts per document, read back from the new rows of the ``chunks`` table (the
    old rows of updated documents are deleted already): the documents table stores them, and
    ``report`` gets their sums (chunks and tokens)."""
    written = chunks.to_lance().to_table(columns=["doc_id", "n_tokens"])
    written = written.filter(pc.is_in(written["doc_id"], pa.array(todo_ids)))
    per_doc = written.group_by("doc_id").aggregate([("n_tokens", "count")])
    counts = per_doc["n_tokens_count"].to_pylist()
    n_chunks = dict(zip(per_doc["doc_id"].to_pylist(), counts, strict=True))
    report.n_chunks = written.num_rows
    report.n_tokens = int(pc.sum(written["n_tokens"]).as_py() or 0)
    return n_chunks


def _read(
    files: list[tuple[Path, bool]], paths: Sequence[str | Path], known: Mapping[str, str]
) -> tuple[Any, AddReport, list[tuple[str, str]]]:
    """Read stage, materialised; the report's added/updated/unchanged and the skipped files.

    Fails, before anything is written, as the local engine's reader does: on an unreadable
    explicit file, duplicate document ids, or no documents at all.
    """
    import ray

    listed = [
        {"file_no": i, "path": str(p.absolute()), "explicit": explicit}
        for i, (p, explicit) in enumerate(files)
    ]
    read = (
        ray.data.from_items(listed)
        .map_batches(read_files, fn_kwargs={"known": known}, batch_format="pyarrow", batch_size=16)
        .materialize()
    )
    meta = _collect(read.select_columns(_META))
    if meta.num_rows:
        meta = meta.sort_by([("file_no", "ascending"), ("pos", "ascending")])
    rows = meta.to_pylist()
    errors = [r["error"] for r in rows if r["error"]]
    if errors:
        raise InputError(errors[0])
    skipped = [(r["path"], r["skipped"]) for r in rows if r["skipped"]]
    docs = [r for r in rows if r["doc_id"] is not None]
    check_documents([(r["doc_id"], r["source"]) for r in docs], paths)
    report = AddReport()
    for r in docs:
        getattr(report, r["status"]).append(r["doc_id"])
    return read, report, skipped


def _append(index: Index, table: str, ds: Any, schema: pa.Schema) -> None:
    """Write stage: ``lance-ray`` writes fragments in parallel and commits one Lance append.

    Write tasks take no CPU slot: the embedding actors hold them all, and writing is mostly I/O.
    """
    import lance_ray

    lance_ray.write_lance(
        ds,
        index.location.child_uri(f"{table}.lance"),
        mode="append",
        schema=schema,
        min_rows_per_file=ROWS_PER_FILE,
        max_rows_per_file=ROWS_PER_FILE,
        storage_options=index.location.storage_options or None,
        ray_remote_args={"num_cpus": 0},
    )
