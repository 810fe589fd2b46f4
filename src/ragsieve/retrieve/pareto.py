"""ParetoRAG's retriever (Sec. 3): sentences ranked by sentence-context weighted vectors.

Each sentence of the index's ``sentences`` table carries its core vector ``h_core`` and the
vector of the rest of its passage ``h_context`` (:mod:`ragsieve.index.sentences`). A sentence
scores ``q . (alpha * h_core + (1 - alpha) * h_context)`` (``q . h_core`` without a context; the
paper's dot product). :class:`ParetoRetriever` ranks them; the ``pareto`` method
(:mod:`ragsieve.methods.pareto`) selects its context from that ranking, and ``full`` draws its
sentence candidates from it.

Scoring is exact. With a per-question pool (the evaluation harness's document filter) the pool's
sentences are scored in numpy; over the whole index, Lance's flat scan ranks the stored
``pareto`` column (the index's ``alpha``). A different ``alpha`` re-scores the union of the top
candidates of the ``pareto`` and core columns, which is exact for the returned set's members
but may miss a sentence ranked low by both columns (documented in docs/sentence-retrieval.md).

A sentence without words (:func:`ragsieve.text.has_words`: a bare page number, a table rule, a
pipe, a code fence alone) is never ranked: it stays in the table and in the rows (a passage's
context vector and the links are made with it, as the index made them) but is no candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ragsieve.index.sentences import sentence_id
from ragsieve.retrieve.base import DocFilter
from ragsieve.text import has_words
from ragsieve.types import Chunk, Scored

if TYPE_CHECKING:
    from ragsieve.index import Index


def row_sentence_chunk(row: dict[str, Any]) -> Chunk:
    """A sentence row as a sentence-sized :class:`Chunk` (its own doc offsets and index)."""
    idx = int(row["idx"])
    return Chunk(
        id=row.get("id") or sentence_id(row["doc_id"], idx),
        doc_id=row["doc_id"],
        index=idx,
        text=row["text"],
        start=int(row["start"]),
        end=int(row["end"]),
        sent_start=idx,
        sent_end=idx + 1,
        n_tokens=int(row["n_tokens"]),
        title=row.get("title") or "",
    )


def weighted_scores(
    q: np.ndarray, core: np.ndarray, context: np.ndarray, alpha: float
) -> np.ndarray:
    """ParetoRAG's ``Sim = h_weighted . q`` for every row (core alone where no context)."""
    has = np.any(context != 0, axis=1)
    sc = core @ q
    sx = context @ q
    return np.where(has, alpha * sc + (1.0 - alpha) * sx, sc).astype(np.float32)


def _vectors(table: pa.Table, column: str) -> np.ndarray:
    col = table.column(column).combine_chunks()
    if len(col) == 0:
        return np.zeros((0, 1), dtype=np.float32)
    dim = col.type.list_size
    return col.values.to_numpy(zero_copy_only=False).reshape(-1, dim).astype(np.float32)


def group_in_source_order(items: Sequence[Scored]) -> list[Scored]:
    """Sentences grouped per document (best-scored document first), source order inside."""
    best: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, s in enumerate(items):
        d = s.chunk.doc_id
        if d not in best:
            best[d], first[d] = s.score, i
        best[d] = max(best[d], s.score)
    return sorted(
        items, key=lambda s: (-best[s.chunk.doc_id], first[s.chunk.doc_id], s.chunk.start)
    )


class ParetoRetriever:
    """Exact ParetoRAG scores of an index's sentences (see the module doc).

    ``alpha`` None uses the index's (its stored ``pareto`` vectors); ``depth`` is how many
    candidates a whole-index search fetches per column before exact re-scoring. Whether the
    index has a sentence table is the method's question
    (:func:`~ragsieve.retrieve.chunk_sentences.use_table`).
    """

    def __init__(self, index: Index, alpha: float | None = None, depth: int = 200) -> None:
        self.index = index
        self.alpha = float(index.config.alpha if alpha is None else alpha)
        self.depth = depth

    def rank(self, qvecs: np.ndarray, doc_ids: DocFilter = None) -> list[list[Scored]]:
        """Every candidate sentence of each query, best first, with its Pareto score."""
        out: list[list[Scored]] = []
        pooled: pa.Table | None = None
        if doc_ids is not None:
            wanted = sorted({d for ids in doc_ids if ids for d in ids})
            pooled = self.index.sentence_rows(wanted, vectors=["vector", "context"])
            doc_col = np.asarray(pooled.column("doc_id").to_pylist(), dtype=object)
            core_all, ctx_all = _vectors(pooled, "vector"), _vectors(pooled, "context")
        for i, q in enumerate(np.asarray(qvecs, dtype=np.float32)):
            allowed = doc_ids[i] if doc_ids is not None else None
            if pooled is not None and allowed is not None:
                mask = np.isin(doc_col, list(allowed))
                rows = pooled.filter(pa.array(mask))
                core, ctx = core_all[mask], ctx_all[mask]
            else:
                rows = self._search_all(q)
                core, ctx = _vectors(rows, "vector"), _vectors(rows, "context")
            out.append(self._scored(q, rows, core, ctx))
        return out

    def rank_rows(self, qvecs: np.ndarray, tables: Sequence[pa.Table]) -> list[list[Scored]]:
        """Like :meth:`rank`, over one table of sentence rows per query (with ``vector`` and
        ``context`` columns): the rows built from a question's handed chunks
        (:mod:`ragsieve.retrieve.chunk_sentences`)."""
        return [
            self._scored(q, rows, _vectors(rows, "vector"), _vectors(rows, "context"))
            for q, rows in zip(np.asarray(qvecs, dtype=np.float32), tables, strict=True)
        ]

    def _scored(
        self, q: np.ndarray, rows: pa.Table, core: np.ndarray, ctx: np.ndarray
    ) -> list[Scored]:
        """``rows`` with words best first by their Pareto score for ``q``."""
        words = [has_words(t) for t in rows.column("text").to_pylist()]
        if not all(words):
            mask = np.asarray(words, dtype=bool)
            rows, core, ctx = rows.filter(pa.array(mask)), core[mask], ctx[mask]
        if rows.num_rows == 0:
            return []
        scores = weighted_scores(q, core, ctx, self.alpha)
        order = np.argsort(-scores, kind="stable")
        dicts = rows.select(["id", "doc_id", "idx", "title", "text", "start", "end", "n_tokens"])
        pyrows = dicts.to_pylist()
        return [
            Scored(
                row_sentence_chunk(pyrows[j]),
                float(scores[j]),
                {"pareto": float(scores[j]), "core": float(core[j] @ q)},
            )
            for j in order
        ]

    def _search_all(self, q: np.ndarray) -> pa.Table:
        depth = self.depth
        found = self.index.sentence_search(q, depth, column="pareto")
        if abs(self.alpha - float(self.index.config.alpha)) > 1e-9:
            more = self.index.sentence_search(q, depth, column="vector")
            found = pa.concat_tables([found, more])
            ids = found.column("id").to_pylist()
            keep = [ids.index(x) for x in dict.fromkeys(ids)]
            found = found.take(pa.array(keep))
        return found
