"""Sentence rows built at query time from the chunks a method was handed, for an index built
without a sentence table (``ragsieve index`` without ``--sentences``).

What ``--sentences`` stores for every sentence of the corpus, :class:`ChunkSentences` builds for
the sentences of the chunks retrieved for one question, with the same code:

* the same split: :func:`~ragsieve.segment.base.sentences_of` over the stored document text, so a
  sentence's number agrees with the chunks' ``sent_start``/``sent_end`` and with the table's;
* the same passages (:func:`~ragsieve.index.sentences.passages_of`, the index's passage kind);
* the same vectors: the core embedding of each sentence, ParetoRAG's context vector of the rest
  of its passage (:func:`~ragsieve.index.sentences.context_vectors` or
  :func:`~ragsieve.index.sentences.late_context_vectors`, the index's form) blended 0.8 / 0.2 by
  the Pareto retriever as with the table;
* when asked, the same SAKI links (the index's linker, distance and number of links).

Deviation from a stored table (why: no 10x indexing cost for a user who never asked for it):
the sentence index is limited to the handed chunks. A passage's "rest" holds only its sentences
inside those chunks, and a link reaches only sentences inside them: links are computed over each
run of consecutive handed sentences, so they never cross a gap between two handed chunks. The
rows have the columns of :meth:`~ragsieve.index.Index.sentence_rows` with the ``vector`` and
``context`` vectors (and empty links when not asked for), so the methods read them unchanged.

A sentence without words (:func:`ragsieve.text.has_words`) gets its row too, as in the table: it
is part of its passage's context vector, of a link run and of what the tagger reads, so that
every sentence with words has the vectors and links the table gives it. It is never a
candidate: the Pareto ranking (:mod:`ragsieve.retrieve.pareto`) and the methods skip it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ragsieve.errors import ConfigError
from ragsieve.index.sentences import (
    SENTENCE_COLUMNS,
    context_vectors,
    late_context_vectors,
    passages_of,
    sentence_id,
    sentence_schema,
)
from ragsieve.progress import Progress, reported
from ragsieve.segment.base import sentences_of
from ragsieve.text import count_tokens_batch
from ragsieve.types import Chunk, Document, Sentence

if TYPE_CHECKING:
    from ragsieve.index import Index

#: Where a sentence-level method takes its sentences: ``table`` (the index's sentence table),
#: ``chunks`` (built from the retrieved chunks at query time) or ``auto`` (the table when the
#: index has one, else the chunks).
SOURCES = ("auto", "table", "chunks")
#: Documents whose split (sentences and paragraph passages) is kept between questions.
DOC_CACHE = 64


def check_source(source: str, source_chunks: object = ...) -> None:
    """A sentence-level method's ``source`` option and, where it has one (any value but the
    default ``...``, None included), ``source_chunks``."""
    if source not in SOURCES:
        raise ConfigError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    if source_chunks is not ... and (
        not isinstance(source_chunks, int) or isinstance(source_chunks, bool) or source_chunks < 1
    ):
        raise ConfigError(f"source_chunks must be a positive integer, got {source_chunks!r}")


def use_table(index: Index, source: str) -> bool:
    """Whether a method with sentence source ``source`` reads the index's table; ``table`` on
    an index without one raises the index's one-line error."""
    if source == "table":
        index.sentences_table  # noqa: B018  (raises the one-line "build with --sentences" error)
        return True
    return source == "auto" and index.has_sentences


def rows_by_doc(rows: pa.Table | list[dict[str, Any]]) -> dict[str, dict[int, dict[str, Any]]]:
    """Sentence rows as ``{doc_id: {idx: row}}`` (what the sentence-level methods look up)."""
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for r in rows.to_pylist() if isinstance(rows, pa.Table) else rows:
        out.setdefault(r["doc_id"], {})[int(r["idx"])] = r
    return out


def _runs(idxs: list[int]) -> list[list[int]]:
    """Consecutive runs of sorted sentence numbers: [1, 2, 5] -> [[1, 2], [5]]."""
    runs: list[list[int]] = []
    for i in idxs:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


class ChunkSentences:
    """Builds the sentence rows of handed chunks (see the module doc); one per method."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.opts = index.config.sentence_options()
        self.dim = int(index.manifest["dim"])
        self._docs: dict[str, tuple[Document, list[Sentence], list[int]]] = {}
        self._linker: Any = None

    def _doc(self, doc_id: str) -> tuple[Document, list[Sentence], list[int]] | None:
        """The stored document, its sentences and their paragraph passages (cached)."""
        if doc_id in self._docs:
            return self._docs[doc_id]
        doc = self.index.get_document(doc_id)
        if doc is None:
            return None
        sents = sentences_of(doc)
        paras = passages_of(doc, sents, "paragraph") if self.opts.passage == "paragraph" else []
        if len(self._docs) >= DOC_CACHE:
            self._docs.pop(next(iter(self._docs)))
        self._docs[doc_id] = (doc, sents, paras)
        return self._docs[doc_id]

    def _passages(self, doc_id: str, idxs: list[int], chunks: list[Chunk]) -> list[int]:
        """The passage of each handed sentence, by the index's rule (a ``chunk`` passage: the
        first handed chunk that holds the sentence)."""
        doc, sents, paras = self._docs[doc_id]
        kind = self.opts.passage
        every = paras if kind == "paragraph" else passages_of(doc, sents, kind, chunks)
        return [every[i] for i in idxs]

    def build(
        self,
        chunks: Sequence[Chunk],
        *,
        vectors: bool = True,
        links: bool = False,
        progress: Progress | None = None,
        label: str = "",
    ) -> pa.Table:
        """The sentence rows of ``chunks`` (each sentence once, in document order) with their
        ``vector`` and ``context`` columns (zeros when ``vectors`` is false) and, with
        ``links``, their SAKI links among the handed sentences."""
        per_doc: dict[str, list[Chunk]] = {}
        for c in chunks:
            per_doc.setdefault(c.doc_id, []).append(c)
        docs: list[tuple[Document, list[Sentence], list[int]]] = []
        for doc_id, cs in per_doc.items():
            found = self._doc(doc_id)
            if found is None:
                continue
            doc, sents, _ = found
            idxs = sorted({i for c in cs for i in range(c.sent_start, min(c.sent_end, len(sents)))})
            if idxs:
                docs.append((doc, [sents[i] for i in idxs], self._passages(doc_id, idxs, cs)))
        cols = [*SENTENCE_COLUMNS, "vector", "context"]
        schema = sentence_schema(self.dim)
        out_schema = pa.schema([schema.field(c) for c in cols])
        if not docs:
            return out_schema.empty_table()
        stage = f"{label}embed {sum(len(s) for _, s, _ in docs)} sentences of {len(chunks)} chunks"
        texts = [s.text for _, sents, _ in docs for s in sents]
        n = len(texts)
        with reported(progress if vectors else None, stage):
            if vectors:
                embedder = self.index.embedder
                core = np.asarray(embedder.embed(texts), dtype=np.float32)
                if self.opts.context == "late":
                    parts = late_context_vectors(
                        [[s.text for s in sents] for _, sents, _ in docs],
                        [ps for _, _, ps in docs],
                        embedder,
                        self.dim,
                    )
                else:
                    parts, pos, form = [], 0, self.opts.context
                    for _, sents, ps in docs:
                        k = len(sents)
                        cut = slice(pos, pos + k)
                        parts.append(context_vectors(core[cut], ps, texts[cut], form, embedder))
                        pos += k
                context = np.concatenate(parts).astype(np.float32)
            else:
                core = context = np.zeros((n, self.dim), dtype=np.float32)
        link_idx, link_w = self._links(docs) if links else ([[]] * n, [[]] * n)
        every = [(d, s, p) for d, sents, ps in docs for s, p in zip(sents, ps, strict=True)]
        values = {
            "id": [sentence_id(s.doc_id, s.index) for _, s, _ in every],
            "doc_id": [s.doc_id for _, s, _ in every],
            "idx": [s.index for _, s, _ in every],
            "passage": [p for _, _, p in every],
            "title": [d.title for d, _, _ in every],
            "text": texts,
            "start": [s.start for _, s, _ in every],
            "end": [s.end for _, s, _ in every],
            "n_tokens": count_tokens_batch(texts),
            "link_idx": link_idx,
            "link_w": link_w,
        }
        arrays = [pa.array(values[c], type=schema.field(c).type) for c in SENTENCE_COLUMNS]
        for a in (core, context):
            flat = pa.array(np.ascontiguousarray(a).reshape(-1), type=pa.float32())
            arrays.append(pa.FixedSizeListArray.from_arrays(flat, self.dim))
        return pa.Table.from_arrays(arrays, schema=out_schema)

    def _links(
        self, docs: list[tuple[Document, list[Sentence], list[int]]]
    ) -> tuple[list[list[int]], list[list[float]]]:
        """SAKI links of every handed sentence, computed per run of consecutive sentences."""
        from ragsieve.link import get_linker

        if self._linker is None:
            self._linker = get_linker(self.opts.linker, self.opts.link_distance)
        runs: list[list[Sentence]] = []
        for _, sents, _ in docs:
            by_idx = {s.index: s for s in sents}
            runs.extend([by_idx[i] for i in run] for run in _runs(sorted(by_idx)))
        found = self._linker.link([[s.text for s in run] for run in runs])
        idx: list[list[int]] = []
        w: list[list[float]] = []
        pos: dict[tuple[str, int], tuple[list[int], list[float]]] = {}
        for run, lk in zip(runs, found, strict=True):
            for s, row in zip(run, lk.top(self.opts.links), strict=True):
                pos[(s.doc_id, s.index)] = ([run[j].index for j, _ in row], [x for _, x in row])
        for _, sents, _ in docs:
            for s in sents:
                a, b = pos.get((s.doc_id, s.index), ([], []))
                idx.append(a)
                w.append(b)
        return idx, w
