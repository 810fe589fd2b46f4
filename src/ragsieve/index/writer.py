"""The write path of an index: the lock, the writable tables, adding and removing documents,
adding a sentence table to an index built without one, and the commit (see
:mod:`ragsieve.index.store` for the protocol). :class:`IndexWriter` is a base of
:class:`~ragsieve.index.store.Index`; the Ray engine and ``repair`` use its protocol too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc

from ragsieve.checks import check_documents, check_flag, check_paths
from ragsieve.embed import Embedder, index_embedder
from ragsieve.errors import ConfigError
from ragsieve.index.config import IndexConfig, ann_settings, config_mismatch
from ragsieve.index.diskfull import no_space_is_an_error
from ragsieve.index.location import Location
from ragsieve.index.manifest import (
    CHUNKS,
    DOCUMENTS,
    KEEP_OLD_VERSIONS,
    LOCK,
    ROOTS,
    ROOTS_PARTIAL,
    SCHEMA_KEY,
    _fault,
    _read_manifest,
    _write_manifest,
)
from ragsieve.index.sentences import (
    SENTENCES,
    SentenceTimings,
    build_sentence_rows,
    sentence_schema,
)
from ragsieve.index.tables import (
    WRITE_BATCH_CHUNKS,
    _chunks_to_arrow,
    _docs_to_arrow,
    _empty_tables,
    _in_clause,
    _legacy_jsonl_ids,
    _status,
    _vector_index,
    chunks_by_doc,
    schema_note,
    sha256_text,
)
from ragsieve.progress import Progress
from ragsieve.segment import get_segmenter, segment_checked
from ragsieve.types import Chunk, Document


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


class IndexWriter:
    """The writes of an index (a base of :class:`~ragsieve.index.store.Index`, which sets
    these attributes and provides ``embedder``, ``_db`` and ``_pin``)."""

    location: Location
    path: Path | str
    manifest: dict[str, Any]
    config: IndexConfig
    lock_wait: float
    on_lock_wait: Callable[[str], None]
    _rebuild: IndexConfig | None
    _drop_after_commit: list[str]
    #: Set by :meth:`add_sentences` (or ``open_or_create`` asked for a sentence table): the
    #: config the next write adds the sentence table with, from the chunks already stored.
    _sentences_to_add: IndexConfig | None = None
    #: Set by :meth:`add_paths`: the roots the paths resolve to, each with whether links out
    #: of it were followed; the commit records them in the manifest (``roots``).
    _roots_to_add: dict[str, bool] | None = None
    embedder: Any
    _db: Any

    def _pin(self) -> None:
        raise NotImplementedError

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
    def _writing(
        self, progress: Progress | None = None, timings: SentenceTimings | None = None
    ) -> Iterator[dict[str, Any]]:
        """Hold the write lock and yield the writable tables; re-pin the readers afterwards.

        Every writer (``add``, ``remove``, the Ray engine) follows the same protocol inside:
        Lance commits on the yielded tables, then :meth:`_commit` as the last step. Nothing a
        reader sees changes until that commit replaces the manifest. A sentence table asked for
        (:meth:`add_sentences`) is written first, from the stored chunks, inside the same write.
        """
        ann_settings()  # a bad RAGSIEVE_ANN_MIN_CHUNKS fails here, not after the table writes
        # A full disk is one line naming the index: nothing is committed, the old one answers.
        with no_space_is_an_error(self.location.display), self._write_lock():
            tables = self._writable_tables()
            try:
                if self._rebuild is not None:
                    tables = self._start_over(tables, self._rebuild)
                elif self._sentences_to_add is not None:
                    asked = self._sentences_to_add
                    self.config = IndexConfig(**self.manifest["config"])
                    if SENTENCES not in tables:
                        self._start_sentences(tables, asked, progress, timings)
                    elif asked != self.config:  # another writer added it, differently
                        raise ConfigError(config_mismatch(self.location, self.config, asked))
                yield tables
            finally:
                if self._rebuild is not None or self._sentences_to_add is not None:
                    # not committed: back to what the manifest says
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
        self.manifest[ROOTS] = {}  # a rebuild records the roots it reads anew
        self.manifest.pop(ROOTS_PARTIAL, None)
        self.config = cfg
        return made

    def _start_sentences(
        self,
        tables: dict[str, Any],
        cfg: IndexConfig,
        progress: Progress | None,
        timings: SentenceTimings | None,
    ) -> None:
        """Add a sentence table for ``cfg`` to ``tables`` and fill it from the stored chunks
        and document texts (nothing is read, chunked or embedded again but the sentences).

        Uncommitted like any write: the manifest names no sentence table until the commit, so
        a failed or killed build leaves the index as it was. The chunks schema records the new
        config for ``repair``."""
        dim = int(self.manifest["dim"])
        tables[SENTENCES] = self._db.create_table(
            SENTENCES, schema=sentence_schema(dim), mode="overwrite"
        )
        chunks = tables[CHUNKS]
        ds = chunks.to_lance()
        old = json.loads((ds.schema.metadata or {}).get(SCHEMA_KEY.encode(), b"{}"))
        created = old.get("created", self.manifest.get("created", time.time()))
        ds.update_schema_metadata(schema_note(cfg, dim, created))
        chunks.checkout_latest()
        self.manifest = {**self.manifest, "config": cfg.to_dict()}
        self.config = cfg
        self._fill_sentences(tables, progress, timings)

    def _fill_sentences(
        self, tables: dict[str, Any], progress: Progress | None, timings: SentenceTimings | None
    ) -> None:
        """Write the sentence rows of every stored document, about
        :data:`~ragsieve.index.tables.WRITE_BATCH_CHUNKS` chunks' worth at a time."""
        docs_ds, chunks_ds = tables[DOCUMENTS].to_lance(), tables[CHUNKS].to_lance()
        meta = docs_ds.to_table(columns=["doc_id", "n_chunks"])
        sizes = dict(zip(meta["doc_id"].to_pylist(), meta["n_chunks"].to_pylist(), strict=True))
        ids = sorted(sizes)
        batches: list[list[str]] = [[]]
        held = 0
        for d in ids:
            if batches[-1] and (held + sizes[d] > WRITE_BATCH_CHUNKS or len(batches[-1]) >= 500):
                batches.append([])
                held = 0
            batches[-1].append(d)
            held += sizes[d]
        done, embedder, dim = 0, self.embedder, int(self.manifest["dim"])
        for batch in batches:
            if not batch:
                continue
            rows = docs_ds.to_table(
                columns=["doc_id", "title", "source", "text"], filter=_in_clause("doc_id", batch)
            ).to_pylist()
            docs = [Document(r["doc_id"], r["text"], r["title"], r["source"]) for r in rows]
            by_doc = chunks_by_doc(chunks_ds, batch)
            self._sentence_rows(
                tables, docs, by_doc, embedder, dim, timings, progress, done, len(ids)
            )
            done += len(batch)

    def _sentence_rows(
        self,
        tables: dict[str, Any],
        docs: list[Document],
        by_doc: dict[str, list[Chunk]],
        embedder: Embedder,
        dim: int,
        timings: SentenceTimings | None,
        progress: Progress | None,
        done: int,
        n_all: int,
    ) -> None:
        """Build and append the sentence rows of ``docs``; progress counts documents, and moves
        within the batch as its stages finish (``done`` documents were written before it)."""

        def step(frac: float) -> None:
            if progress:
                progress("sentence table", done + int(frac * len(docs)), n_all)

        step(0.0)
        rows = build_sentence_rows(
            docs, by_doc, self.config.sentence_options(), embedder, dim, timings, step
        )
        if rows.num_rows:
            tables[SENTENCES].add(rows)
            _fault("after_sentences_write")
        if progress:
            progress("sentence table", done + len(docs), n_all)

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
        timings = SentenceTimings()
        adding_sentences = self._sentences_to_add is not None and not self.config.sentences
        with self._writing(progress, timings) as tables:
            known = self.document_hashes_from(tables[DOCUMENTS])
            renamed = _legacy_jsonl_ids(tables[DOCUMENTS], docs, known)
            todo: list[Document] = []
            for d in docs:
                status = "updated" if d.id in renamed else _status(d.id, sha256_text(d.text), known)
                getattr(report, status).append(d.id)
                if status != "unchanged":
                    todo.append(d)
            if SENTENCES in tables:
                report.sentences = timings
            new_roots = self._roots_changed()
            if not todo and self._rebuild is None and not adding_sentences and not new_roots:
                report.seconds = time.perf_counter() - t0
                return report
            self._delete_documents(tables, [renamed.get(d, d) for d in report.updated])
            n_chunks, n_tokens = self._write_documents(
                tables, todo, progress, embedder, report.sentences
            )
            report.n_chunks, report.n_tokens = n_chunks, n_tokens
            self._commit(tables, progress)
        report.seconds = time.perf_counter() - t0
        return report

    def _roots_changed(self) -> bool:
        """Whether the commit would record roots the manifest does not hold yet."""
        if self._roots_to_add is None:
            return False
        held = self.manifest.get(ROOTS)
        return held is None or {**held, **self._roots_to_add} != held

    def add_sentences(
        self, config: IndexConfig | None = None, progress: Progress | None = None
    ) -> AddReport:
        """Add the sentence table (``ragsieve index --sentences``) to an index built without
        it, from the chunks and texts it holds: nothing is re-read, re-chunked or re-embedded
        but the sentences. One atomic write like :meth:`add`: a build that fails or is killed
        leaves the index as it was. ``config``: the sentence options (the defaults if None);
        its embedder and chunker must be the index's. A no-op if the table is there with the
        same options."""
        cfg = self._sentences_config(config or dataclasses.replace(self.config, sentences=True))
        if cfg is None:
            return AddReport(sentences=SentenceTimings())
        self._sentences_to_add = cfg
        try:
            return self.add([], progress)
        finally:
            self._sentences_to_add = None

    def _sentences_config(self, asked: IndexConfig) -> IndexConfig | None:
        """``asked`` if it only adds a sentence table to this index's config, None if this
        index already is ``asked``; else the one-line refusal naming the options that differ."""
        if asked == self.config:
            return None
        plain = dataclasses.replace(asked, sentences=False)
        if not asked.sentences or self.config.sentences or plain.to_dict() != self.config.to_dict():
            raise ConfigError(config_mismatch(self.location, self.config, asked))
        return asked

    def add_paths(
        self,
        paths: Sequence[str | Path],
        progress: Progress | None = None,
        *,
        follow_symlinks: bool = False,
    ) -> tuple[AddReport, list[tuple[str, str]]]:
        """Read files/folders (see :mod:`ragsieve.io`) and :meth:`add` them.

        Returns the add report and the skipped files with their reasons. A symlink out of a
        folder is skipped (reported) unless ``follow_symlinks``; the index records the roots
        read and that choice, and answers no text from outside them without it.
        """
        from ragsieve.io import load_paths

        check_flag("follow_symlinks", follow_symlinks)
        loaded = load_paths(check_paths("paths", paths), progress, follow_symlinks=follow_symlinks)
        return self.add_loaded(loaded.documents, loaded.roots, follow_symlinks, progress), (
            loaded.skipped
        )

    def add_loaded(
        self,
        docs: Sequence[Document],
        roots: Sequence[str],
        follow_symlinks: bool,
        progress: Progress | None = None,
    ) -> AddReport:
        """:meth:`add` for documents read from ``roots`` (:func:`ragsieve.io.load_paths`):
        the commit records the roots, and whether links out of them were followed."""
        self._roots_to_add = dict.fromkeys(roots, follow_symlinks)
        try:
            return self.add(docs, progress)
        finally:
            self._roots_to_add = None

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
            # Progress counts chunks embedded, then documents whose sentence rows are written
            # (the long stages).
            self._embed_chunks(tables, pending_chunks, embedder, total_chunks, progress)
            docs_now = [d for d, _ in pending_docs]
            if SENTENCES in tables:
                by_doc: dict[str, list[Chunk]] = {}
                for c in pending_chunks:
                    by_doc.setdefault(c.doc_id, []).append(c)
                self._sentence_rows(
                    tables,
                    docs_now,
                    by_doc,
                    embedder,
                    self.manifest["dim"],
                    sentence_timings,
                    progress,
                    written_docs,
                    n_docs,
                )
            tables[DOCUMENTS].add(_docs_to_arrow(pending_docs))
            _fault("after_documents_write")
            written_docs += len(pending_docs)
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

    def _embed_chunks(
        self,
        tables: dict[str, Any],
        chunks: list[Chunk],
        embedder: Embedder,
        done: int,
        progress: Progress | None,
    ) -> None:
        """``chunks`` embedded and added to the chunks table in slices, which bound the memory
        of one huge document (a 20 MB file is ~40,000 chunks); ``progress`` counts the chunks
        embedded after the ``done`` ones, every 256."""
        n_all = done + len(chunks)
        for i in range(0, len(chunks), WRITE_BATCH_CHUNKS):
            part = chunks[i : i + WRITE_BATCH_CHUNKS]
            texts = [c.text for c in part]
            steps = []  # a slice embeds for minutes on a laptop: progress every 256 chunks
            for j in range(0, len(texts), 256):
                if progress:
                    progress("embed chunks", done + i + j, n_all)
                steps.append(embedder.embed(texts[j : j + 256]))
            vecs = np.concatenate(steps) if len(steps) > 1 else steps[0]
            tables[CHUNKS].add(_chunks_to_arrow(part, vecs, self.manifest["dim"]))
            _fault("after_chunks_write")
        if progress:
            progress("embed chunks", n_all, n_all)

    def _commit(self, tables: dict[str, Any], progress: Progress | None) -> None:
        from ragsieve.index.lance_tables import FTS

        chunks = tables[CHUNKS]
        n_chunks = chunks.count_rows()
        if progress:
            progress("full-text index", 0, 1)
        if n_chunks:
            chunks.create_index("text", config=FTS(), replace=True)
            _fault("after_fts_index")
        n_tokens = 0
        if n_chunks:
            col = chunks.to_lance().to_table(columns=["n_tokens"]).column("n_tokens")
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
        if self._roots_to_add is not None:
            if ROOTS not in manifest:  # written before roots were recorded
                manifest[ROOTS_PARTIAL] = True
            manifest[ROOTS] = {**manifest.get(ROOTS, {}), **self._roots_to_add}
        _fault("before_manifest_replace")
        _write_manifest(self.location, manifest)  # the commit point
        _fault("after_manifest_replace")
        self.manifest = manifest
        self._rebuild = self._sentences_to_add = None
        for name in self._drop_after_commit:  # a rebuild without the old sentence table
            with contextlib.suppress(Exception):
                self.location.remove_tree(f"{name}.lance")
        self._drop_after_commit = []
        for t in tables.values():
            with contextlib.suppress(Exception):  # clean-up is best effort
                t.to_lance().cleanup_old_versions(older_than=KEEP_OLD_VERSIONS)
        if progress:
            progress("full-text index", 1, 1)
