"""The on-disk index: Lance tables (in LanceDB's layout) and a manifest that makes writes atomic.

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
``_delete_documents``, ``_commit``, in :mod:`ragsieve.index.writer`) is shared with the Ray
engine (:mod:`ragsieve.index.ray_engine`), which appends the chunk and document rows with Ray
instead of :meth:`Index._write_documents`.

This module holds :class:`Index` (opening, creating and reading); the rest lives beside it:
:mod:`~ragsieve.index.config` (``IndexConfig``, ANN settings), :mod:`~ragsieve.index.manifest`
(the manifest and file names), :mod:`~ragsieve.index.tables` (schemas, row conversions) and
:mod:`~ragsieve.index.writer` (every write). Their public names are importable from here too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ragsieve.embed import index_embedder
from ragsieve.errors import ConfigError, IndexStoreError
from ragsieve.index.config import (
    ANN_ENV,
    DEFAULT_CHUNK_TOKENS,
    MAX_CHUNK_TOKENS,
    AnnSettings,
    IndexConfig,
    ann_settings,
    config_mismatch,
)
from ragsieve.index.lance_tables import LanceDir
from ragsieve.index.location import Location
from ragsieve.index.manifest import (
    CHUNKS,
    CREATE_FAULT_POINT,
    DEFAULT_LOCK_WAIT,
    DOCUMENTS,
    FAULT_ENV,
    FAULT_POINTS,
    FORMAT,
    FORMAT_VERSION,
    KEEP_OLD_VERSIONS,
    LOCK,
    MANIFEST,
    MANIFEST_TMP,
    ROOTS,
    ROOTS_PARTIAL,
    SCHEMA_KEY,
    _check_only_ours,
    _fault,
    _read_manifest,
    _write_manifest,
    lost_manifest_message,
)
from ragsieve.index.sentences import SENTENCE_COLUMNS, SENTENCES, sentence_schema
from ragsieve.index.sync import outside_roots
from ragsieve.index.tables import (
    CHUNK_COLUMNS,
    DOC_SCHEMA,
    WRITE_BATCH_CHUNKS,
    _empty_tables,
    _in_clause,
    _nearest,
    _sql_str,
    chunk_schema,
    row_to_chunk,
    sha256_text,
)
from ragsieve.index.writer import AddReport, IndexWriter
from ragsieve.progress import Progress
from ragsieve.segment import get_segmenter
from ragsieve.types import Chunk, Document

#: Names other modules import from here (the store before it was split along its seams).
__all__ = [
    "ANN_ENV",
    "CHUNKS",
    "CHUNK_COLUMNS",
    "CREATE_FAULT_POINT",
    "DEFAULT_CHUNK_TOKENS",
    "DEFAULT_LOCK_WAIT",
    "DOCUMENTS",
    "DOC_SCHEMA",
    "FAULT_ENV",
    "FAULT_POINTS",
    "FORMAT",
    "FORMAT_VERSION",
    "KEEP_OLD_VERSIONS",
    "LOCK",
    "MANIFEST",
    "MANIFEST_TMP",
    "MAX_CHUNK_TOKENS",
    "SCHEMA_KEY",
    "WRITE_BATCH_CHUNKS",
    "AddReport",
    "AnnSettings",
    "Index",
    "IndexConfig",
    "Progress",
    "ann_settings",
    "chunk_schema",
    "config_mismatch",
    "lost_manifest_message",
    "row_to_chunk",
    "sha256_text",
]

_log = logging.getLogger(__name__)


def _check_config(config: object) -> None:
    """Refuse a ``config`` that is neither an :class:`IndexConfig` nor None (one line)."""
    if config is not None and not isinstance(config, IndexConfig):
        raise ConfigError(f"config must be an IndexConfig or None, got {type(config).__name__}")


class Index(IndexWriter):
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
        _check_config(config)
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
                ROOTS: {},
                "created": now,
                "updated": now,
            }
            db = LanceDir(p)
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

        A ``config`` that only adds a sentence table to the index's makes the next write add
        it from the stored chunks (as :meth:`add_sentences`): ``ragsieve index --sentences`` on
        an index built without.

        Two processes that both find no index create it once: the second waits for the
        first's lock and then opens what it created.
        """
        _check_config(config)
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
            # Only a sentence table asked of an index without one is accepted: the next write
            # adds it (add_sentences); any other difference is the one-line refusal.
            idx._sentences_to_add = idx._sentences_config(config)
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
        """The tables' folder, for writes (:class:`~ragsieve.index.lance_tables.LanceDir`);
        reads open the Lance datasets pinned at the manifest's versions directly."""
        if self._db_handle is None:
            self._db_handle = LanceDir(self.location)
        return self._db_handle

    def _pin(self) -> None:
        """Open each table at its committed version (a read-only Lance dataset)."""
        import lance

        self._hidden: list[str] | None = None  # computed on the first read (hidden_ids)
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
                f"index {self.path} has no sentence table (pareto, saki and full need one): add "
                f"it with `ragsieve index PATHS --index {self.path} --sentences` (the PATHS it "
                "was built from; only the sentences are computed)"
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
            return t.to_table(columns=cols, filter=self._fenced(None))
        hidden = set(self.hidden_ids())
        doc_ids = [d for d in doc_ids if d not in hidden] if hidden else doc_ids
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
        where = self._fenced(None)
        return self.sentences_table.to_table(
            columns=[*SENTENCE_COLUMNS, "vector", "context"],
            nearest=_nearest(column, qvec, k, "dot"),
            filter=where,
            prefilter=where is not None,
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

    def hidden_ids(self) -> list[str]:
        """Ids of the documents whose file resolves outside the roots this index was read
        from, when it was read without ``--follow-symlinks``: no read returns their text. An
        index written before the roots were recorded hides nothing until its next ``index``,
        and then only what was read through a symlink (its other roots are unknown)."""
        if self._hidden is None:
            roots = self.manifest.get(ROOTS)
            if not roots or all(roots.values()):
                self._hidden = []
            else:
                rows = self.documents_table.to_table(columns=["doc_id", "source"]).to_pylist()
                partial = bool(self.manifest.get(ROOTS_PARTIAL))
                self._hidden = outside_roots(rows, roots, linked_only=partial)
        return self._hidden

    def _fenced(self, where: str | None) -> str | None:
        """``where`` and "not a hidden document" (:meth:`hidden_ids`)."""
        hidden = self.hidden_ids()
        if not hidden:
            return where
        fence = f"NOT ({_in_clause('doc_id', hidden)})"
        return fence if where is None else f"({where}) AND {fence}"

    def documents(self) -> list[dict[str, Any]]:
        """Every document at the committed version: ``doc_id``, ``title``, ``source``,
        ``n_chars``, ``n_chunks`` (no texts), in id order (``info --documents``, index sync)."""
        cols = ["doc_id", "title", "source", "n_chars", "n_chunks"]
        rows = self.documents_table.to_table(columns=cols).to_pylist()
        return sorted(rows, key=lambda r: r["doc_id"])

    def get_document(self, doc_id: str) -> Document | None:
        if doc_id in self.hidden_ids():
            return None
        rows = self.documents_table.to_table(
            filter=f"doc_id = {_sql_str(doc_id)}", limit=1
        ).to_pylist()
        if not rows:
            return None
        r = rows[0]
        return Document(id=r["doc_id"], text=r["text"], title=r["title"], source=r["source"])

    def chunks_of(self, doc_id: str) -> list[Chunk]:
        if doc_id in self.hidden_ids():
            return []
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
            where = self._fenced(where)
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
        where = self._fenced(where)
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
        if chunk.doc_id in self.hidden_ids():
            return []
        lo, hi = chunk.index - radius, chunk.index + radius
        rows = self.chunks_table.to_table(
            columns=CHUNK_COLUMNS,
            filter=f"doc_id = {_sql_str(chunk.doc_id)} AND idx >= {lo} AND idx <= {hi}",
        ).to_pylist()
        return sorted((row_to_chunk(r) for r in rows), key=lambda c: c.index)
