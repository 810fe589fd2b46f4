"""The on-disk index: LanceDB tables plus a manifest that makes every write atomic.

Layout of an index directory::

    DIR/ragsieve.json      manifest: config + the committed Lance version of each table
    DIR/chunks.lance/      one row per chunk: text, offsets, token count, vector (BM25 FTS index)
    DIR/documents.lance/   one row per document: full text, title, source, content hash
    DIR/sentences.lance/   only with ``IndexConfig(sentences=True)``: one row per sentence with
                           its core, Pareto context and weighted vectors and its SAKI links
                           (:mod:`ragsieve.index.sentences`); older indexes simply lack it

Why a manifest: a write touches several tables and several Lance commits (delete old chunks, add
new ones, rebuild the full-text index). Readers open every table *at the versions the manifest
names*, and a writer replaces the manifest with ``os.replace`` only after all its commits
succeeded. A write that is killed half-way therefore leaves newer, uncommitted Lance versions that
no reader sees; the next writer rolls each table back to its committed version before it starts.
Old versions are cleaned up only after the new manifest is in place.

The directory may also be an object-store URL (``s3://bucket/prefix``): see
:mod:`ragsieve.index.location` for what changes there. The writing protocol (``_writing``,
``_delete_documents``, ``_commit``) is shared with the Ray engine
(:mod:`ragsieve.index.ray_engine`), which appends the chunk and document rows with Ray instead
of :meth:`Index._write_documents`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragsieve.checks import check_documents, check_int, check_name, check_paths, check_real
from ragsieve.embed import Embedder, index_embedder
from ragsieve.errors import ConfigError, IndexStoreError, InputError
from ragsieve.index.diskfull import no_space_is_an_error
from ragsieve.index.location import Location
from ragsieve.index.sentences import (
    SENTENCE_COLUMNS,
    SENTENCES,
    SentenceOptions,
    SentenceTimings,
    build_sentence_rows,
    sentence_schema,
)
from ragsieve.segment import get_segmenter, segment_checked
from ragsieve.types import Chunk, Document

MANIFEST = "ragsieve.json"
LOCK = ".ragsieve.lock"
#: The manifest's temporary name while it is being replaced (Location.replace_text).
MANIFEST_TMP = f".{MANIFEST}.tmp"
#: Key of the chunks table's schema metadata that records the index's config and dimension,
#: so that ``ragsieve repair`` can rebuild a lost manifest (Lance keeps it in every version).
SCHEMA_KEY = "ragsieve"
#: How long a writer waits for another writer's lock by default (``--wait``), in seconds.
DEFAULT_LOCK_WAIT = 60.0
#: Test-only fault injection: ``RAGSIEVE_FAULT=POINT`` (or ``POINT@N``, the N-th time the point
#: is reached) makes the process SIGKILL itself there. See :data:`FAULT_POINTS`; used by
#: tests/index/test_fault_injection.py and benchmarks/bench_crash.py, never in normal use.
FAULT_ENV = "RAGSIEVE_FAULT"
#: The named points of a write, in the order a write reaches them (the table writes repeat per
#: batch, and deletes of changed or removed documents count as table writes).
FAULT_POINTS = (
    "after_chunks_write",
    "after_sentences_write",
    "after_documents_write",
    "after_fts_index",
    "before_manifest_replace",
    "after_manifest_replace",
)
#: A point of :meth:`Index.create` only: its empty tables exist, its first manifest does not.
CREATE_FAULT_POINT = "create_before_manifest"
FORMAT = "ragsieve-index"
FORMAT_VERSION = 1
CHUNKS = "chunks"
DOCUMENTS = "documents"
#: Documents are chunked, embedded and written in batches of this many chunks (bounded memory).
WRITE_BATCH_CHUNKS = int(os.environ.get("RAGSIEVE_WRITE_BATCH_CHUNKS", "2048"))
#: Old Lance versions younger than this survive clean-up, so a reader that opened the previous
#: manifest a moment ago can finish its query.
KEEP_OLD_VERSIONS = timedelta(minutes=10)
#: Environment override of :attr:`AnnSettings.min_chunks` (``off``: never build an ANN index).
ANN_ENV = "RAGSIEVE_ANN_MIN_CHUNKS"


@dataclass(frozen=True)
class AnnSettings:
    """When the chunk vectors get an approximate (ANN) index, and how it is built and searched.

    Below ``min_chunks`` search is exact (a Lance flat scan). Above it, a whole-index search
    (``ragsieve search``, the retrievers without a document pool) uses an IVF_HNSW_SQ index:
    a few large IVF partitions, an HNSW graph over 8-bit scalar-quantised vectors inside each.
    Searches restricted to a document pool stay exact. Chosen on real MiniLM vectors at
    10k-200k chunks (docs/scale-out.md, "Search at scale"): recall@10 0.97 at 200k, where
    IVF_PQ needed many more probes and a refine step to pass 0.95.
    """

    min_chunks: int = 25_000
    #: Recorded in the manifest; this is what is built (``lancedb.index.HnswSq``).
    index_type: str = "IVF_HNSW_SQ"
    m: int = 20
    ef_construction: int = 300
    #: Partitions searched: at least this many, and at least 60% of them, because recall
    #: falls slowly as the table grows at a fixed count (0.987 at 10k, 0.969 at 200k with 16).
    nprobes: int = 16
    ef: int = 50

    def partitions(self, n_rows: int) -> int:
        """IVF partitions: few and large, each an HNSW graph (about sqrt(rows) / 16: 10 at
        25k, 28 at 200k, 62 at 1M)."""
        return max(1, round(n_rows**0.5 / 16))

    def probes(self, partitions: int) -> int:
        """Partitions a query searches (see :attr:`nprobes`)."""
        return max(self.nprobes, -(-6 * partitions // 10))


def ann_settings() -> AnnSettings:
    """The defaults, with ``RAGSIEVE_ANN_MIN_CHUNKS`` (a number, or ``off``) applied."""
    raw = os.environ.get(ANN_ENV, "").strip().lower()
    if not raw:
        return AnnSettings()
    if raw == "off":
        return AnnSettings(min_chunks=2**62)
    try:
        n = int(raw)
    except ValueError:
        raise ConfigError(f"{ANN_ENV} must be a number of chunks or 'off', got {raw!r}") from None
    if n < 256:
        raise ConfigError(f"{ANN_ENV} must be at least 256 (to train the quantiser), got {n}")
    return AnnSettings(min_chunks=n)


#: Chunk size per chunker when none is given: Naive RAG's 200 (SAGE VII-A), a paragraph cap
#: of 512, and SAGE's coarse length l = 400 (VII-A hyper-parameters); ``sentences`` (two per
#: chunk, SAKI-RAG) only uses its cap for run-on sentences.
DEFAULT_CHUNK_TOKENS = {"fixed": 200, "paragraph": 512, "sage": 400, "sentences": 200}

#: Largest chunk size accepted (an embedder reads at most a few hundred tokens anyway).
MAX_CHUNK_TOKENS = 100_000

Progress = Callable[[str, int, int], None]
"""Progress callback: (stage, done, total)."""


@dataclass(frozen=True)
class IndexConfig:
    """What an index was built with; fixed at creation so queries embed like the chunks did."""

    embedder: str = "minilm"
    chunker: str = "fixed"
    #: None = the chunker's own default (:data:`DEFAULT_CHUNK_TOKENS`).
    chunk_tokens: int = None  # type: ignore[assignment]
    #: Also write the ``sentences`` table (ParetoRAG vectors, SAKI links); the fields below
    #: configure it and are recorded in the manifest only when it is on, so that indexes
    #: without it keep their configuration (and evaluation cache keys) unchanged.
    sentences: bool = False
    #: Pareto passage of a sentence: auto (= chunk for --chunker sage, else paragraph),
    #: paragraph, chunk or document.
    sentence_passage: str = "auto"
    #: Pareto context vector: late (the other sentences' token outputs from one reading of the
    #: passage), exact (embed the rest of the passage apart, the paper's form: one embedding
    #: per sentence) or mean (of the other sentences' vectors: no extra embedding). Late is the
    #: default since issue 19: the same recall as exact on development and held-out HotpotQA
    #: questions, where mean lost recall, for a third of exact's build time (BENCHMARKS.md,
    #: "Pareto context forms"; docs/sentence-retrieval.md).
    pareto_context: str = "late"
    #: ParetoRAG's core-sentence weight (Sec. 3.2; the paper's default 0.8).
    alpha: float = 0.8
    #: SAKI links stored per sentence (top-T of Eq. 4) and the farthest linked sentence.
    links: int = 8
    link_distance: int = 8

    def __post_init__(self) -> None:
        for name, expected in (
            ("embedder", "an embedder name such as 'minilm'"),
            ("chunker", "a chunker name such as 'fixed'"),
            ("sentence_passage", "a passage kind such as 'auto'"),
            ("pareto_context", "a context form such as 'late'"),
        ):
            check_name(name, getattr(self, name), expected=expected)
        check_real("alpha", self.alpha, lo=0, hi=1)
        check_int("links", self.links, lo=0)
        check_int("link_distance", self.link_distance)
        if self.chunk_tokens is None:
            size = DEFAULT_CHUNK_TOKENS.get(self.chunker, DEFAULT_CHUNK_TOKENS["fixed"])
            object.__setattr__(self, "chunk_tokens", size)
        n = self.chunk_tokens
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_CHUNK_TOKENS:
            raise ConfigError(f"chunk_tokens must be 1..{MAX_CHUNK_TOKENS}, got {n!r}")
        if not isinstance(self.sentences, bool):
            raise ConfigError(f"sentences must be true or false, got {self.sentences!r}")
        if isinstance(self.alpha, int):
            object.__setattr__(self, "alpha", float(self.alpha))
        self.sentence_options()  # validate

    def sentence_options(self) -> SentenceOptions:
        """The sentence-table options, with ``auto`` passages resolved for this chunker."""
        passage = self.sentence_passage
        if passage == "auto":
            passage = "chunk" if self.chunker == "sage" else "paragraph"
        return SentenceOptions(
            passage=passage,
            context=self.pareto_context,
            alpha=self.alpha,
            links=self.links,
            link_distance=self.link_distance,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "embedder": self.embedder,
            "chunker": self.chunker,
            "chunk_tokens": self.chunk_tokens,
        }
        if self.sentences:
            out.update(
                sentences=True,
                sentence_passage=self.sentence_passage,
                pareto_context=self.pareto_context,
                alpha=self.alpha,
                links=self.links,
                link_distance=self.link_distance,
            )
        return out


@dataclass
class AddReport:
    """Outcome of :meth:`Index.add`."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    n_chunks: int = 0
    n_tokens: int = 0
    seconds: float = 0.0
    #: Sentence rows written and the time per stage (only with a sentence table).
    sentences: SentenceTimings | None = None


_log = logging.getLogger(__name__)
_fault_hits: dict[str, int] = {}


def _fault(point: str) -> None:
    """Kill this process at ``point`` if ``RAGSIEVE_FAULT`` names it (test-only crash hook)."""
    want = os.environ.get(FAULT_ENV)
    if not want:
        return
    name, _, nth = want.partition("@")
    if name != point:
        return
    _fault_hits[point] = _fault_hits.get(point, 0) + 1
    if _fault_hits[point] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def lost_manifest_message(where: object) -> str:
    """The one-line refusal for Lance tables without a manifest, with both ways to recover."""
    return (
        f"{where} holds Lance tables but no {MANIFEST} (its manifest was lost): recover it "
        f"with `ragsieve repair --index {where}`, or rebuild it from scratch with "
        f"`ragsieve index PATHS --index {where} --force`"
    )


def config_mismatch(where: object, built: IndexConfig, asked: IndexConfig) -> str:
    """The one-line refusal of a write whose settings differ from the index's: every setting
    that differs, over both configurations' keys (a sentence table asked of an index without one
    names ``sentences``), and both ways forward."""
    old, new = built.to_dict(), asked.to_dict()
    keys = [k for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
    if not keys:  # equal as written down, different as objects: name every field
        old, new = asdict(built), asdict(asked)
        keys = [k for k in old if old[k] != new[k]]
    what = ", ".join(f"{k}={old.get(k, '(unset)')} (asked {new.get(k, '(unset)')})" for k in keys)
    return (
        f"index {where} was built with {what}; use a new --index directory, or rebuild this "
        "one with --force"
    )


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _nearest(column: str, q: np.ndarray, k: int, metric: str) -> dict[str, Any]:
    """Lance's ``nearest`` argument for an exact flat scan (callers may switch the index on)."""
    q = np.asarray(q, dtype=np.float32)
    return {"column": column, "q": q, "k": k, "metric": metric, "use_index": False}


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _in_clause(col: str, values: Sequence[str]) -> str:
    return f"{col} IN ({', '.join(_sql_str(v) for v in values)})"


def _status(doc_id: str, sha256: str, known: Mapping[str, str]) -> str:
    """``added``, ``updated`` or ``unchanged``: what a write does with one incoming document."""
    if doc_id not in known:
        return "added"
    return "unchanged" if known[doc_id] == sha256 else "updated"


def chunk_schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.string()),
            ("doc_id", pa.string()),
            ("idx", pa.int32()),
            ("title", pa.string()),
            ("text", pa.string()),
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("sent_start", pa.int32()),
            ("sent_end", pa.int32()),
            ("n_tokens", pa.int32()),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


DOC_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("title", pa.string()),
        ("source", pa.string()),
        ("sha256", pa.string()),
        ("n_chars", pa.int64()),
        ("n_chunks", pa.int32()),
        ("text", pa.string()),
    ]
)


def row_to_chunk(row: dict[str, Any]) -> Chunk:
    return Chunk(
        id=row["id"],
        doc_id=row["doc_id"],
        index=int(row["idx"]),
        text=row["text"],
        start=int(row["start"]),
        end=int(row["end"]),
        sent_start=int(row["sent_start"]),
        sent_end=int(row["sent_end"]),
        n_tokens=int(row["n_tokens"]),
        title=row.get("title") or "",
    )


CHUNK_COLUMNS = [
    "id",
    "doc_id",
    "idx",
    "title",
    "text",
    "start",
    "end",
    "sent_start",
    "sent_end",
    "n_tokens",
]


class Index:
    """A ragsieve index directory. Open with :meth:`open`, create with :meth:`create`.

    ``path`` is a local directory or an object-store URL (``s3://bucket/prefix``); for a URL,
    ``storage_options`` (Lance's keys) add to the credentials found in the environment.
    """

    def __init__(
        self,
        path: str | Path | Location,
        manifest: dict[str, Any],
        storage_options: Mapping[str, str] | None = None,
    ) -> None:
        loc = path if isinstance(path, Location) else Location(path, storage_options)
        self.location = loc
        #: A Path for a local index (as before), the URL string for an object store.
        self.path: Path | str = loc.path if loc.path is not None else loc.uri
        self.manifest = manifest
        self.config = IndexConfig(**manifest["config"])
        self._db_handle: Any = None
        #: The committed version of each table, as a Lance dataset (the read path).
        self._tables: dict[str, Any] = {}
        #: Seconds a write waits for another writer's lock, and who hears that it waits.
        self.lock_wait: float = DEFAULT_LOCK_WAIT
        self.on_lock_wait: Callable[[str], None] = _log.warning
        #: Set by :meth:`open_for_rebuild`: the config the next write starts over with.
        self._rebuild: IndexConfig | None = None
        #: Tables a rebuild leaves out of the manifest, removed after its commit.
        self._drop_after_commit: list[str] = []
        self._pin()

    # ------------------------------------------------------------------ open / create
    @classmethod
    def open(cls, path: str | Path, storage_options: Mapping[str, str] | None = None) -> Index:
        """Open an existing index for reading (and writing through :meth:`add`)."""
        p = Location(path, storage_options)
        manifest = _read_manifest(p)
        try:
            return cls(p, manifest)
        except IndexStoreError:
            raise
        except Exception as e:  # Lance raises many types for damaged files
            raise IndexStoreError(f"index {p} is corrupt: {str(e).splitlines()[0]}") from e

    @classmethod
    def create(
        cls,
        path: str | Path,
        config: IndexConfig | None = None,
        storage_options: Mapping[str, str] | None = None,
        *,
        force: bool = False,
        wait: float = DEFAULT_LOCK_WAIT,
        on_wait: Callable[[str], None] | None = None,
    ) -> Index:
        """Create an empty index at ``path`` (which must not exist, or be empty).

        Never deletes what it did not write: Lance tables that hold data but have no manifest
        (a manifest lost or deleted) are refused with :func:`lost_manifest_message`, unless
        ``force`` (rebuild from scratch; with ``force`` an existing index is replaced too).
        Tables that never held a row are what a first run killed before its first manifest
        leaves behind, and are started over without asking.
        """
        import lancedb

        if config is not None and not isinstance(config, IndexConfig):
            raise ConfigError(f"config must be an IndexConfig or None, got {type(config).__name__}")
        p = Location(path, storage_options)
        cfg = config or IndexConfig()
        get_segmenter(cfg.chunker, chunk_tokens=cfg.chunk_tokens)  # validate early
        ann_settings()  # a bad RAGSIEVE_ANN_MIN_CHUNKS fails before anything is written
        # A model that cannot load (a mistyped st: name) fails before anything is removed.
        embedder = index_embedder(cfg.embedder)
        if p.has_file(MANIFEST) and not force:
            raise IndexStoreError(f"{p} is already an index")
        if p.exists() and not p.is_dir():
            raise IndexStoreError(
                f"cannot create index directory {p}: it exists and is not a directory"
            )
        _check_only_ours(p)  # before the lock file is created in someone else's directory
        p.mkdir()
        on_wait = on_wait or _log.warning
        with p.write_lock(LOCK, wait, on_wait):
            if p.has_file(MANIFEST):
                if not force:
                    raise IndexStoreError(f"{p} is already an index")
                p.remove_file(MANIFEST)  # first, so that a crash below leaves no stale index
            leftovers = _check_only_ours(p)
            tables_left = [c for c in leftovers if c.endswith(".lance")]
            if not force and any(p.has_files_under(f"{c}/data") for c in tables_left):
                raise IndexStoreError(lost_manifest_message(p))
            for c in leftovers:  # forced, or empty tables of a first run that died
                if c.endswith(".lance"):
                    p.remove_tree(c)
                else:
                    p.remove_file(c)
            now = time.time()
            manifest = {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "config": cfg.to_dict(),
                "dim": embedder.dim,
                "tables": {},
                "n_documents": 0,
                "n_chunks": 0,
                "n_tokens": 0,
                "fts": False,
                "created": now,
                "updated": now,
            }
            db = lancedb.connect(p.uri, storage_options=p.storage_options or None)
            made = _empty_tables(db, cfg, embedder.dim, now)
            manifest["tables"] = {name: t.version for name, t in made.items()}
            _fault("create_before_manifest")
            _write_manifest(p, manifest)
        idx = cls(p, manifest)
        idx.lock_wait, idx.on_lock_wait = wait, on_wait
        return idx

    @classmethod
    def open_or_create(
        cls,
        path: str | Path,
        config: IndexConfig | None = None,
        storage_options: Mapping[str, str] | None = None,
        *,
        wait: float = DEFAULT_LOCK_WAIT,
        on_wait: Callable[[str], None] | None = None,
    ) -> Index:
        """Open ``path`` if it is an index (checking ``config`` agrees), else create it.

        Two processes that both find no index create it once: the second waits for the
        first's lock and then opens what it created.
        """
        if config is not None and not isinstance(config, IndexConfig):
            raise ConfigError(f"config must be an IndexConfig or None, got {type(config).__name__}")
        p = Location(path, storage_options)
        if not p.has_file(MANIFEST):
            try:
                return cls.create(path, config, storage_options, wait=wait, on_wait=on_wait)
            except IndexStoreError:
                if not p.has_file(MANIFEST):
                    raise
        idx = cls.open(path, storage_options)
        idx.lock_wait, idx.on_lock_wait = wait, on_wait or _log.warning
        if config is not None and config != idx.config:
            raise ConfigError(config_mismatch(p, idx.config, config))
        return idx

    @classmethod
    def open_for_rebuild(
        cls,
        path: str | Path,
        config: IndexConfig,
        storage_options: Mapping[str, str] | None = None,
        *,
        wait: float = DEFAULT_LOCK_WAIT,
        on_wait: Callable[[str], None] | None = None,
    ) -> Index:
        """An existing index whose next write starts over with ``config`` (``index --force``).

        The rebuild is one ordinary write: under the lock each table gets a new, empty Lance
        version (the new schema), the documents are written after it, and the manifest replace
        commits it. Until then every reader, and the manifest, name the old versions, so a
        rebuild that fails or is killed leaves the old index answering; the old versions are
        cleaned up only after the commit, like any write's. The chunker and the embedder are
        loaded here, before anything is touched.
        """
        get_segmenter(config.chunker, chunk_tokens=config.chunk_tokens)
        ann_settings()
        index_embedder(config.embedder)
        idx = cls.open(path, storage_options)
        idx.lock_wait, idx.on_lock_wait = wait, on_wait or _log.warning
        idx._rebuild = config
        return idx

    # ------------------------------------------------------------------ reading
    @property
    def _db(self) -> Any:
        """The LanceDB connection, for writes only: importing lancedb costs 1.4-2 s, which a
        read (``search``, ``ask``) does not pay; reads open the Lance datasets directly."""
        if self._db_handle is None:
            import lancedb

            loc = self.location
            self._db_handle = lancedb.connect(loc.uri, storage_options=loc.storage_options or None)
        return self._db_handle

    def _pin(self) -> None:
        """Open each table at its committed version (a read-only Lance dataset)."""
        import lance

        tables: dict[str, Any] = {}
        for name, version in self.manifest["tables"].items():
            try:
                tables[name] = lance.dataset(
                    self.location.child_uri(f"{name}.lance"),
                    version=int(version),
                    storage_options=self.location.storage_options or None,
                )
            except Exception as e:  # Lance raises several types for a missing or bad table
                if not self.location.has_files_under(f"{name}.lance"):
                    why = "is missing"
                else:
                    why = f"cannot be read at version {version} ({str(e).splitlines()[0]})"
                raise IndexStoreError(f"index {self.path} is corrupt: table {name!r} {why}") from e
        want = {CHUNKS: {*CHUNK_COLUMNS, "vector"}, DOCUMENTS: set(DOC_SCHEMA.names)}
        for name, columns in want.items():
            missing = sorted(columns - set(tables[name].schema.names))
            if missing:
                raise IndexStoreError(
                    f"index {self.path} is corrupt: table {name!r} is not a ragsieve table "
                    f"(no column {', '.join(missing)})"
                )
        self._tables = tables

    def reload(self) -> bool:
        """Re-read the manifest if another process committed; True if it changed."""
        m = _read_manifest(self.location)
        if m["tables"] == self.manifest["tables"]:
            return False
        self.manifest = m
        self.config = IndexConfig(**m["config"])  # a --force rebuild may have changed it
        self._pin()
        return True

    @property
    def chunks_table(self) -> Any:
        return self._tables[CHUNKS]

    @property
    def documents_table(self) -> Any:
        return self._tables[DOCUMENTS]

    @property
    def has_sentences(self) -> bool:
        """Whether the index holds a ``sentences`` table (``ragsieve index --sentences``)."""
        return SENTENCES in self._tables

    @property
    def sentences_table(self) -> Any:
        if not self.has_sentences:
            raise ConfigError(
                f"index {self.path} has no sentence table: sentence-level methods need an "
                "index built with --sentences (ragsieve index --sentences ...)"
            )
        return self._tables[SENTENCES]

    def sentence_rows(
        self, doc_ids: Sequence[str] | None = None, vectors: Sequence[str] = ()
    ) -> pa.Table:
        """Sentence rows (metadata plus the named vector columns), for some documents or all.

        Per-question pools are small (tens of sentences), so sentence-level methods score
        them exactly in numpy; see :meth:`sentence_search` for the whole index.
        """
        cols = [*SENTENCE_COLUMNS, *vectors]
        t = self.sentences_table
        if doc_ids is None:
            return t.to_table(columns=cols)
        if not doc_ids:
            return sentence_schema(int(self.manifest["dim"])).empty_table().select(cols)
        parts = []
        for i in range(0, len(doc_ids), 500):
            batch = list(doc_ids[i : i + 500])
            parts.append(t.to_table(columns=cols, filter=_in_clause("doc_id", batch)))
        return pa.concat_tables(parts)

    def sentence_search(self, qvec: np.ndarray, k: int, column: str = "pareto") -> pa.Table:
        """Top-``k`` sentences of the whole index by dot product with ``qvec`` on ``column``
        (exact flat scan, like :meth:`dense_search`), with a ``_distance`` column."""
        return self.sentences_table.to_table(
            columns=[*SENTENCE_COLUMNS, "vector", "context"],
            nearest=_nearest(column, qvec, k, "dot"),
        )

    @property
    def embedder(self) -> Any:
        """The embedder that writes this index's vectors and embeds queries against them: the
        int8 ONNX build for a MiniLM index (:func:`ragsieve.embed.index_embedder`)."""
        return index_embedder(self.config.embedder)

    def __len__(self) -> int:
        return int(self.manifest["n_chunks"])

    def stats(self) -> dict[str, Any]:
        m = self.manifest
        out = {
            "path": str(self.path),
            "documents": m["n_documents"],
            "chunks": m["n_chunks"],
            "tokens": m["n_tokens"],
            **m["config"],
            "updated": m["updated"],
        }
        if "n_sentences" in m:
            out["sentence_rows"] = m["n_sentences"]
        return out

    def document_hashes(self) -> dict[str, str]:
        """doc_id -> sha256 of its text, at the committed version."""
        return self.document_hashes_from(self.documents_table)

    def documents(self) -> list[dict[str, Any]]:
        """Every document at the committed version: ``doc_id``, ``title``, ``source``,
        ``n_chars``, ``n_chunks`` (no texts), in id order (``info --documents``, index sync)."""
        cols = ["doc_id", "title", "source", "n_chars", "n_chunks"]
        rows = self.documents_table.to_table(columns=cols).to_pylist()
        return sorted(rows, key=lambda r: r["doc_id"])

    def get_document(self, doc_id: str) -> Document | None:
        rows = self.documents_table.to_table(
            filter=f"doc_id = {_sql_str(doc_id)}", limit=1
        ).to_pylist()
        if not rows:
            return None
        r = rows[0]
        return Document(id=r["doc_id"], text=r["text"], title=r["title"], source=r["source"])

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        rows = self.chunks_table.to_table(
            columns=CHUNK_COLUMNS, filter=f"doc_id = {_sql_str(doc_id)}"
        ).to_pylist()
        return sorted((row_to_chunk(r) for r in rows), key=lambda c: c.index)

    def dense_search(
        self, qvecs: np.ndarray, k: int, doc_ids: Sequence[Sequence[str] | None] | None = None
    ) -> list[list[tuple[Chunk, float]]]:
        """Top-``k`` chunks by cosine similarity for each query vector.

        ``doc_ids[i]``, when given, restricts query ``i`` to those documents (a pre-filter, so
        the k results all come from the allowed documents): per-question document pools.
        """
        out: list[list[tuple[Chunk, float]]] = []
        if len(self) == 0:
            return [[] for _ in range(len(qvecs))]
        ann = self.manifest.get("ann")
        for i, q in enumerate(np.asarray(qvecs, dtype=np.float32)):
            allowed = doc_ids[i] if doc_ids is not None else None
            where = None
            if allowed is not None:
                if not allowed:
                    out.append([])
                    continue
                where = _in_clause("doc_id", list(allowed))
            nearest = _nearest("vector", q, k, "cosine")
            if ann and where is None:  # a pool is searched exactly: its few rows may all miss
                nearest.update(use_index=True, nprobes=ann["nprobes"], ef=ann["ef"])
            rows = self.chunks_table.to_table(
                columns=CHUNK_COLUMNS,
                nearest=nearest,
                filter=where,
                prefilter=where is not None,
            ).to_pylist()
            out.append([(row_to_chunk(r), 1.0 - float(r["_distance"])) for r in rows])
        return out

    def bm25_search(
        self, query: str, k: int, doc_ids: Sequence[str] | None = None
    ) -> list[tuple[Chunk, float]]:
        """Top-``k`` chunks by BM25 over the chunk text (Lance's native full-text index).

        Term statistics are those of the whole index, also when ``doc_ids`` restricts the
        result to some documents.
        """
        if len(self) == 0 or not self.manifest.get("fts"):
            return []
        if doc_ids is not None and not doc_ids:
            return []
        from lance.query import MatchQuery

        where = _in_clause("doc_id", list(doc_ids)) if doc_ids is not None else None
        rows = self.chunks_table.to_table(
            columns=CHUNK_COLUMNS,
            full_text_query=MatchQuery(query, "text"),
            filter=where,
            prefilter=where is not None,
            limit=k,
        ).to_pylist()
        return [(row_to_chunk(r), float(r["_score"])) for r in rows]

    def neighbours(self, chunk: Chunk, radius: int = 1) -> list[Chunk]:
        """Chunks of the same document within ``radius`` positions (source order)."""
        lo, hi = chunk.index - radius, chunk.index + radius
        rows = self.chunks_table.to_table(
            columns=CHUNK_COLUMNS,
            filter=f"doc_id = {_sql_str(chunk.doc_id)} AND idx >= {lo} AND idx <= {hi}",
        ).to_pylist()
        return sorted((row_to_chunk(r) for r in rows), key=lambda c: c.index)

    # ------------------------------------------------------------------ writing
    def _write_lock(self) -> contextlib.AbstractContextManager[None]:
        return self.location.write_lock(LOCK, self.lock_wait, self.on_lock_wait)

    def _writable_tables(self) -> dict[str, Any]:
        """Latest table handles, rolled back to the committed versions if a writer died."""
        self.manifest = _read_manifest(self.location)
        tables = {}
        for name, version in self.manifest["tables"].items():
            t = self._db.open_table(name)
            if t.version != version:
                t.restore(version)
            tables[name] = t
        return tables

    @contextlib.contextmanager
    def _writing(self) -> Iterator[dict[str, Any]]:
        """Hold the write lock and yield the writable tables; re-pin the readers afterwards.

        Every writer (``add``, ``remove``, the Ray engine) follows the same protocol inside:
        Lance commits on the yielded tables, then :meth:`_commit` as the last step. Nothing a
        reader sees changes until that commit replaces the manifest.
        """
        ann_settings()  # a bad RAGSIEVE_ANN_MIN_CHUNKS fails here, not after the table writes
        # A full disk is one line naming the index: nothing is committed, the old one answers.
        with no_space_is_an_error(self.location.display), self._write_lock():
            tables = self._writable_tables()
            if self._rebuild is not None:
                tables = self._start_over(tables, self._rebuild)
            try:
                yield tables
            finally:
                if self._rebuild is not None:  # not committed: back to what the manifest says
                    self.manifest = _read_manifest(self.location)
                    self.config = IndexConfig(**self.manifest["config"])
                    self._drop_after_commit = []
        self._pin()

    def _start_over(self, tables: dict[str, Any], cfg: IndexConfig) -> dict[str, Any]:
        """A new, empty version of every table for ``cfg`` (uncommitted: the manifest still
        names the old ones), and the in-memory manifest and config the write then uses."""
        now = time.time()
        dim = index_embedder(cfg.embedder).dim
        made = _empty_tables(self._db, cfg, dim, now)
        self._drop_after_commit = [n for n in tables if n not in made]
        self.manifest = {
            **self.manifest,
            "config": cfg.to_dict(),
            "dim": dim,
            "created": now,
            "ann": None,
        }
        self.manifest.pop("n_sentences", None)
        self.config = cfg
        return made

    @staticmethod
    def _delete_documents(tables: dict[str, Any], doc_ids: Sequence[str]) -> None:
        """Delete the chunks and document rows of ``doc_ids`` (uncommitted until ``_commit``)."""
        for i in range(0, len(doc_ids), 500):
            batch = list(doc_ids[i : i + 500])
            tables[CHUNKS].delete(_in_clause("doc_id", batch))
            _fault("after_chunks_write")
            if SENTENCES in tables:
                tables[SENTENCES].delete(_in_clause("doc_id", batch))
                _fault("after_sentences_write")
            tables[DOCUMENTS].delete(_in_clause("doc_id", batch))
            _fault("after_documents_write")

    def add(
        self,
        docs: Sequence[Document],
        progress: Progress | None = None,
        embedder: Embedder | None = None,
    ) -> AddReport:
        """Add new documents, re-index changed ones (same id, new text), skip unchanged ones.

        Atomic: either every document of the call becomes visible, or none does. ``embedder``
        overrides the configured one with another instance of the same model (a worker's own
        copy); it must produce vectors of the index's dimension.
        """
        docs = check_documents("docs", docs)
        t0 = time.perf_counter()
        report = AddReport()
        with self._writing() as tables:
            known = self.document_hashes_from(tables[DOCUMENTS])
            renamed = _legacy_jsonl_ids(tables[DOCUMENTS], docs, known)
            todo: list[Document] = []
            for d in docs:
                status = "updated" if d.id in renamed else _status(d.id, _sha256(d.text), known)
                getattr(report, status).append(d.id)
                if status != "unchanged":
                    todo.append(d)
            if not todo and self._rebuild is None:
                report.seconds = time.perf_counter() - t0
                return report
            self._delete_documents(tables, [renamed.get(d, d) for d in report.updated])
            if SENTENCES in tables:
                report.sentences = SentenceTimings()
            n_chunks, n_tokens = self._write_documents(
                tables, todo, progress, embedder, report.sentences
            )
            report.n_chunks, report.n_tokens = n_chunks, n_tokens
            self._commit(tables, progress)
        report.seconds = time.perf_counter() - t0
        return report

    def add_paths(
        self, paths: Sequence[str | Path], progress: Progress | None = None
    ) -> tuple[AddReport, list[tuple[str, str]]]:
        """Read files/folders (see :mod:`ragsieve.io`) and :meth:`add` them.

        Returns the add report and the skipped files with their reasons.
        """
        from ragsieve.io import load_paths

        loaded = load_paths(check_paths("paths", paths), progress)
        return self.add(loaded.documents, progress), loaded.skipped

    def remove(self, doc_ids: Sequence[str]) -> list[str]:
        """Remove documents by id; returns the ids that were present. Atomic like :meth:`add`."""
        with self._writing() as tables:
            known = self.document_hashes_from(tables[DOCUMENTS])
            present = [d for d in doc_ids if d in known]
            if not present:
                return []
            self._delete_documents(tables, present)
            self._commit(tables, None)
        return present

    @staticmethod
    def document_hashes_from(table: Any) -> dict[str, str]:
        """doc_id -> sha256 of a documents table (a Lance dataset or a LanceDB table)."""
        ds = table.to_lance() if hasattr(table, "to_lance") else table
        t = ds.to_table(columns=["doc_id", "sha256"])
        return dict(zip(t["doc_id"].to_pylist(), t["sha256"].to_pylist(), strict=True))

    def _write_documents(
        self,
        tables: dict[str, Any],
        docs: list[Document],
        progress: Progress | None,
        embedder: Embedder | None = None,
        sentence_timings: SentenceTimings | None = None,
    ) -> tuple[int, int]:
        segmenter = get_segmenter(self.config.chunker, chunk_tokens=self.config.chunk_tokens)
        embedder = embedder or self.embedder
        if embedder.dim != self.manifest["dim"]:
            raise ConfigError(
                f"embedder {embedder.name} gives {embedder.dim}-d vectors; "
                f"index {self.path} holds {self.manifest['dim']}-d"
            )
        total_chunks = total_tokens = 0
        pending_chunks: list[Chunk] = []
        pending_docs: list[tuple[Document, int]] = []
        done_docs = written_docs = 0
        n_docs = len(docs)

        def flush() -> None:
            nonlocal total_chunks, total_tokens, written_docs
            if not pending_docs:
                return
            # Slices bound the memory of one huge document (a 20 MB file is ~40,000 chunks).
            # Progress counts chunks embedded, then documents whose sentence rows are written
            # (the long stages: one slice is 256 chunks).
            n_all = total_chunks + len(pending_chunks)
            for i in range(0, len(pending_chunks), WRITE_BATCH_CHUNKS):
                part = pending_chunks[i : i + WRITE_BATCH_CHUNKS]
                texts = [c.text for c in part]
                steps = []  # a slice embeds for minutes on a laptop: progress every 256 chunks
                for j in range(0, len(texts), 256):
                    if progress:
                        progress("embed chunks", total_chunks + i + j, n_all)
                    steps.append(embedder.embed(texts[j : j + 256]))
                vecs = np.concatenate(steps) if len(steps) > 1 else steps[0]
                tables[CHUNKS].add(_chunks_to_arrow(part, vecs, self.manifest["dim"]))
                _fault("after_chunks_write")
            if progress:
                n = total_chunks + len(pending_chunks)
                progress("embed chunks", n, n)
            if SENTENCES in tables:
                if progress:
                    progress("sentence table", written_docs, n_docs)
                by_doc: dict[str, list[Chunk]] = {}
                for c in pending_chunks:
                    by_doc.setdefault(c.doc_id, []).append(c)
                rows = build_sentence_rows(
                    [d for d, _ in pending_docs],
                    by_doc,
                    self.config.sentence_options(),
                    embedder,
                    self.manifest["dim"],
                    sentence_timings,
                )
                if rows.num_rows:
                    tables[SENTENCES].add(rows)
                    _fault("after_sentences_write")
            tables[DOCUMENTS].add(_docs_to_arrow(pending_docs))
            _fault("after_documents_write")
            written_docs += len(pending_docs)
            if progress and SENTENCES in tables:
                progress("sentence table", written_docs, n_docs)
            total_chunks += len(pending_chunks)
            total_tokens += sum(c.n_tokens for c in pending_chunks)
            pending_chunks.clear()
            pending_docs.clear()

        for i in range(0, len(docs), 64):
            batch = docs[i : i + 64]
            if progress:  # before the work: one huge document can take a while to chunk
                progress("chunk documents", done_docs, n_docs)
            for d, chunks in zip(batch, segment_checked(segmenter, list(batch)), strict=True):
                pending_chunks.extend(chunks)
                pending_docs.append((d, len(chunks)))
            done_docs += len(batch)
            if progress:
                progress("chunk documents", done_docs, n_docs)
            if len(pending_chunks) >= WRITE_BATCH_CHUNKS:
                flush()
        flush()
        return total_chunks, total_tokens

    def _commit(self, tables: dict[str, Any], progress: Progress | None) -> None:
        from lancedb.index import FTS

        chunks = tables[CHUNKS]
        n_chunks = chunks.count_rows()
        if progress:
            progress("full-text index", 0, 1)
        if n_chunks:
            chunks.create_index("text", config=FTS(), replace=True)
            _fault("after_fts_index")
        n_tokens = 0
        if n_chunks:
            col = chunks.to_arrow().column("n_tokens")
            n_tokens = int(pc.sum(col).as_py() or 0)
        ann = _vector_index(chunks, n_chunks, self.manifest.get("ann"), progress)
        manifest = dict(self.manifest)
        manifest.update(
            tables={name: t.version for name, t in tables.items()},
            n_documents=tables[DOCUMENTS].count_rows(),
            n_chunks=n_chunks,
            n_tokens=n_tokens,
            fts=bool(n_chunks),
            ann=ann,
            updated=time.time(),
        )
        if SENTENCES in tables:
            manifest["n_sentences"] = tables[SENTENCES].count_rows()
        _fault("before_manifest_replace")
        _write_manifest(self.location, manifest)  # the commit point
        _fault("after_manifest_replace")
        self.manifest = manifest
        self._rebuild = None
        for name in self._drop_after_commit:  # a rebuild without the old sentence table
            with contextlib.suppress(Exception):
                self.location.remove_tree(f"{name}.lance")
        self._drop_after_commit = []
        for t in tables.values():
            with contextlib.suppress(Exception):  # clean-up is best effort
                t.to_lance().cleanup_old_versions(older_than=KEEP_OLD_VERSIONS)
        if progress:
            progress("full-text index", 1, 1)


def _legacy_jsonl_ids(
    documents: Any, docs: Sequence[Document], known: Mapping[str, str]
) -> dict[str, str]:
    """New JSONL id -> the bare id an index written before ids were namespaced by file holds
    for the same record (``7`` for ``/abs/a.jsonl#7``), so a write renames it instead of
    keeping both. Only a stored document that came from the same file (its ``source`` is
    ``/abs/a.jsonl:LINE``) is taken for the record."""
    want: dict[str, str] = {}
    for d in docs:
        path, sep, rid = d.id.rpartition("#")
        if sep and path and d.id not in known and rid in known:
            want[rid] = d.id
    if not want:
        return {}
    ds = documents.to_lance() if hasattr(documents, "to_lance") else documents
    out: dict[str, str] = {}
    olds = list(want)
    for i in range(0, len(olds), 500):
        batch = olds[i : i + 500]
        rows = ds.to_table(columns=["doc_id", "source"], filter=_in_clause("doc_id", batch))
        for old, source in zip(rows["doc_id"].to_pylist(), rows["source"].to_pylist(), strict=True):
            new = want[old]
            if (source or "").rpartition(":")[0] == new.rpartition("#")[0]:
                out[new] = old
    return out


def _empty_tables(db: Any, cfg: IndexConfig, dim: int, created: float) -> dict[str, Any]:
    """Empty tables for ``cfg`` (a new Lance version of each existing one, so the versions a
    manifest names stay readable); the chunks schema records the config for ``repair``."""
    note = {"format_version": FORMAT_VERSION, "config": cfg.to_dict(), "dim": dim}
    note["created"] = created
    schema = chunk_schema(dim).with_metadata({SCHEMA_KEY: json.dumps(note)})
    tables = {
        CHUNKS: db.create_table(CHUNKS, schema=schema, mode="overwrite"),
        DOCUMENTS: db.create_table(DOCUMENTS, schema=DOC_SCHEMA, mode="overwrite"),
    }
    if cfg.sentences:
        tables[SENTENCES] = db.create_table(
            SENTENCES, schema=sentence_schema(dim), mode="overwrite"
        )
    return tables


def _vector_index(
    chunks: Any, n_chunks: int, previous: dict[str, Any] | None, progress: Progress | None
) -> dict[str, Any] | None:
    """Build or extend the chunks' ANN index when the table is large enough (see
    :class:`AnnSettings`); returns what the manifest records of it, None for exact search.

    The IVF centroids and the quantiser are trained once and reused as the table grows (new rows
    are added to the index by ``optimize_indices``, much cheaper than a rebuild); the index is
    rebuilt when the table has doubled since, or when the settings changed.
    """
    s = ann_settings()
    if n_chunks < s.min_chunks:
        return None  # below the threshold, or shrunk below it: exact search
    want = {"index_type": s.index_type, "m": s.m, "ef_construction": s.ef_construction, "ef": s.ef}
    same = previous is not None and all(previous.get(k) == v for k, v in want.items())
    if progress:
        progress("vector index", 0, 1)
    if same and n_chunks <= 2 * int(previous["trained_rows"]):  # type: ignore[index]
        chunks.to_lance().optimize.optimize_indices()
        chunks.checkout_latest()
        trained = int(previous["trained_rows"])  # type: ignore[index]
        parts = int(previous["num_partitions"])  # type: ignore[index]
    else:
        from lancedb.index import HnswSq

        trained, parts = n_chunks, s.partitions(n_chunks)
        config = HnswSq(
            distance_type="cosine", num_partitions=parts, m=s.m, ef_construction=s.ef_construction
        )
        chunks.create_index("vector", config=config, replace=True)
    if progress:
        progress("vector index", 1, 1)
    return {**want, "num_partitions": parts, "nprobes": s.probes(parts), "trained_rows": trained}


def _chunks_to_arrow(chunks: list[Chunk], vecs: np.ndarray | None, dim: int) -> pa.Table:
    assert vecs is not None
    flat = pa.array(np.asarray(vecs, dtype=np.float32).reshape(-1), type=pa.float32())
    return pa.Table.from_arrays(
        [
            pa.array([c.id for c in chunks]),
            pa.array([c.doc_id for c in chunks]),
            pa.array([c.index for c in chunks], type=pa.int32()),
            pa.array([c.title for c in chunks]),
            pa.array([c.text for c in chunks]),
            pa.array([c.start for c in chunks], type=pa.int64()),
            pa.array([c.end for c in chunks], type=pa.int64()),
            pa.array([c.sent_start for c in chunks], type=pa.int32()),
            pa.array([c.sent_end for c in chunks], type=pa.int32()),
            pa.array([c.n_tokens for c in chunks], type=pa.int32()),
            pa.FixedSizeListArray.from_arrays(flat, dim),
        ],
        schema=chunk_schema(dim),
    )


def _docs_to_arrow(docs: list[tuple[Document, int]]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "doc_id": d.id,
                "title": d.title,
                "source": d.source,
                "sha256": _sha256(d.text),
                "n_chars": len(d.text),
                "n_chunks": n,
                "text": d.text,
            }
            for d, n in docs
        ],
        schema=DOC_SCHEMA,
    )


def _read_manifest(where: Location | str | Path) -> dict[str, Any]:
    p = where if isinstance(where, Location) else Location(where)
    if not p.exists():
        raise IndexStoreError(f"no index at {p} (create one with: ragsieve index PATH --index {p})")
    if not p.is_dir():
        raise IndexStoreError(f"{p} is not an index directory")
    if not p.has_file(MANIFEST):
        if any(c.endswith(".lance") for c in p.children()):
            raise IndexStoreError(lost_manifest_message(p))
        raise IndexStoreError(f"{p} is not a ragsieve index (no {MANIFEST})")
    try:
        m = json.loads(p.read_text(MANIFEST))
    except (OSError, ValueError, RecursionError) as e:
        raise IndexStoreError(f"index {p} is corrupt: unreadable {MANIFEST}") from e
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise IndexStoreError(f"index {p} is corrupt: {MANIFEST} is not a ragsieve manifest")
    if not _is_int(m.get("format_version", 0)):
        raise IndexStoreError(
            f"index {p} is corrupt: bad {MANIFEST} (format_version is "
            f"{json.dumps(m.get('format_version'))[:40]})"
        )
    if m.get("format_version", 0) > FORMAT_VERSION:
        raise IndexStoreError(
            f"index {p} was written by a newer ragsieve (format {m['format_version']})"
        )
    try:
        _check_manifest(m)
        IndexConfig(**m["config"])
    except (KeyError, TypeError, ValueError, ConfigError) as e:
        why = f"missing field {e.args[0]}" if isinstance(e, KeyError) else str(e)
        raise IndexStoreError(
            f"index {p} is corrupt: bad {MANIFEST} ({why}); "
            f"rebuild it with `ragsieve repair --index {p}`"
        ) from e
    return m


def _is_int(v: Any, lo: int = 0) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= lo


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


#: The manifest's keys and what each must hold (``_check_manifest``); ``ann`` is checked apart.
_MANIFEST_KEYS: dict[str, Callable[[Any], bool]] = {
    "format_version": lambda v: _is_int(v, 1),
    "config": lambda v: isinstance(v, dict),
    "dim": lambda v: _is_int(v, 1),
    "tables": lambda v: isinstance(v, dict),
    "n_documents": _is_int,
    "n_chunks": _is_int,
    "n_tokens": _is_int,
    "updated": _is_number,
}
_CONFIG_KEYS: dict[str, Callable[[Any], bool]] = {
    "embedder": lambda v: isinstance(v, str) and bool(v),
    "chunker": lambda v: isinstance(v, str) and bool(v),
    "chunk_tokens": lambda v: _is_int(v, 1),
    "sentences": lambda v: isinstance(v, bool),
    "sentence_passage": lambda v: isinstance(v, str),
    "pareto_context": lambda v: isinstance(v, str),
    "alpha": _is_number,
    "links": _is_int,
    "link_distance": _is_int,
}
_ANN_KEYS = ("index_type", "m", "ef_construction", "ef", "num_partitions", "nprobes")


def _check_manifest(m: dict[str, Any]) -> None:
    """Validate the manifest's shape before anything uses it; the error names the bad key
    (a ``tables`` list, a numeric ``embedder``, a bogus ``ann`` were tracebacks)."""
    for key, ok in _MANIFEST_KEYS.items():
        if key not in m:
            raise KeyError(key)
        if not ok(m[key]):
            raise TypeError(f"{key} is {json.dumps(m[key])[:40]}")
    for key, value in m["config"].items():
        if key in _CONFIG_KEYS and not _CONFIG_KEYS[key](value):  # IndexConfig checks names
            raise TypeError(f"config.{key} is {json.dumps(value)[:40]}")
    tables = m["tables"]
    for name in (CHUNKS, DOCUMENTS):
        if name not in tables:
            raise KeyError(f"tables.{name}")
    for name, version in tables.items():
        if name not in (CHUNKS, DOCUMENTS, SENTENCES) or not _is_int(version, 1):
            raise TypeError(f"tables.{name} is {json.dumps(version)[:40]}")
    ann = m.get("ann")
    if ann is not None:
        if not isinstance(ann, dict):
            raise TypeError(f"ann is {json.dumps(ann)[:40]}")
        for key in _ANN_KEYS:
            if key != "index_type" and not _is_int(ann.get(key), 1):
                raise TypeError(f"ann.{key} is {json.dumps(ann.get(key))[:40]}")
        if ann.get("index_type") != AnnSettings.index_type:
            raise TypeError(f"ann.index_type is {json.dumps(ann.get('index_type'))[:40]}")


def _write_manifest(where: Location | str | Path, manifest: dict[str, Any]) -> None:
    """Replace the manifest atomically: the commit point of every write."""
    p = where if isinstance(where, Location) else Location(where)
    p.replace_text(MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))


def _check_only_ours(p: Location) -> list[str]:
    """The entries of ``p`` a store may have written; refuses a directory holding anything else."""
    if not p.exists():
        return []
    leftovers = [c for c in p.children() if c != LOCK]
    if any(not (c.endswith(".lance") or c in (MANIFEST, MANIFEST_TMP)) for c in leftovers):
        raise InputError(f"{p} exists, is not empty and is not a ragsieve index")
    return leftovers
