"""Retrievers over an :class:`~ragsieve.index.Index`.

Batch-first: ``retrieve(queries, k)`` returns one ranked list per query, so dense retrieval
embeds all queries of an evaluation run in one pass. Raw scores are kept in ``Scored.scores``
under the retriever's name; ``Scored.score`` is the retriever's own score (cosine for dense,
BM25 for bm25, RRF for hybrid) until a reranker replaces it with a calibrated [0, 1] score.

A chunk without words (:func:`ragsieve.text.has_words`: a table of bare numbers, rules, pipes, a
code fence alone) is layout, never a candidate: dense and BM25 skip it and search deeper for
the ``k`` they were asked for, so every method that starts from chunks (naive, sage, saki's
static axis, the chunks whose sentences pareto and full read) never starts from junk. A chunk
with words is returned exactly as before: the deeper search runs only where junk was found.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ragsieve.checks import invisible, invisible_note
from ragsieve.errors import ConfigError, InputError
from ragsieve.text import has_words
from ragsieve.types import Chunk, Scored

if TYPE_CHECKING:
    from ragsieve.index import Index

#: Reciprocal rank fusion constant from Cormack et al. (2009), used by most hybrid search stacks.
RRF_K = 60

DocFilter = Sequence[Sequence[str] | None] | None
"""Per query, the document ids it may retrieve from (None: the whole index)."""


def _check_queries(queries: list[str], doc_ids: DocFilter = None) -> None:
    for q in queries:
        if invisible(q):
            raise InputError(f"the query is empty{invisible_note(q)}")
    if doc_ids is None:
        return
    # A flat list of ids (one query's pool, not wrapped) would be read as one pool *per query*
    # and each id string as a pool of characters: silently nothing found. Refuse it.
    if isinstance(doc_ids, str) or any(isinstance(ids, str) for ids in doc_ids):
        raise InputError("doc_ids must hold one list of document ids (or None) per query")
    if len(doc_ids) != len(queries):
        raise InputError(f"doc_ids has {len(doc_ids)} entries for {len(queries)} queries")


Hits = list[tuple[Chunk, float]]


def with_words(search: Callable[[int], Hits], k: int, hits: Hits | None = None) -> Hits:
    """The top ``k`` hits of ``search(depth)`` whose chunk has words: ``search(k)`` (or
    ``hits``, its result already at hand) alone when it holds no chunk without words, so
    nothing changes for text; else deeper, doubling the depth until ``k`` remain or the search
    runs dry."""
    depth = k
    if hits is None:
        hits = search(depth)
    while True:
        kept = [h for h in hits if has_words(h[0].text)]
        if len(kept) == len(hits) or len(kept) >= k or len(hits) < depth:
            return kept[:k]
        depth *= 2
        hits = search(depth)


@runtime_checkable
class Retriever(Protocol):
    name: str

    def retrieve(
        self, queries: list[str], k: int, doc_ids: DocFilter = None
    ) -> list[list[Scored]]: ...


class DenseRetriever:
    """Cosine similarity between the query embedding and the chunk vectors."""

    name = "dense"

    def __init__(self, index: Index) -> None:
        self.index = index

    def retrieve(self, queries: list[str], k: int, doc_ids: DocFilter = None) -> list[list[Scored]]:
        _check_queries(queries, doc_ids)
        qv = self.index.embedder.embed(queries)
        found = self.index.dense_search(qv, k, doc_ids)
        out = []
        for i, first in enumerate(found):

            def search(depth: int, i: int = i) -> Hits:
                pool = None if doc_ids is None else [doc_ids[i]]
                return self.index.dense_search(qv[i : i + 1], depth, pool)[0]

            hits = with_words(search, k, first)
            out.append([Scored(c, s, {"dense": s}) for c, s in hits])
        return out


class BM25Retriever:
    """Okapi BM25 over chunk text (Lance's native inverted index: stemmed, stop words removed)."""

    name = "bm25"

    def __init__(self, index: Index) -> None:
        self.index = index

    def retrieve(self, queries: list[str], k: int, doc_ids: DocFilter = None) -> list[list[Scored]]:
        _check_queries(queries, doc_ids)
        filters = doc_ids if doc_ids is not None else [None] * len(queries)
        return [
            [
                Scored(c, s, {"bm25": s})
                for c, s in with_words(lambda d, q=q, f=f: self.index.bm25_search(q, d, f), k)
            ]
            for q, f in zip(queries, filters, strict=True)
        ]


class HybridRetriever:
    """Reciprocal rank fusion of dense and BM25: score = sum 1 / (RRF_K + rank)."""

    name = "hybrid"

    def __init__(self, index: Index, depth: int | None = None) -> None:
        self.dense = DenseRetriever(index)
        self.bm25 = BM25Retriever(index)
        self.depth = depth

    def retrieve(self, queries: list[str], k: int, doc_ids: DocFilter = None) -> list[list[Scored]]:
        depth = self.depth or max(2 * k, 20)
        dense = self.dense.retrieve(queries, depth, doc_ids)
        sparse = self.bm25.retrieve(queries, depth, doc_ids)
        out: list[list[Scored]] = []
        for dl, sl in zip(dense, sparse, strict=True):
            fused: dict[str, float] = {}
            chunks: dict[str, Chunk] = {}
            raw: dict[str, dict[str, float]] = {}
            for lst in (dl, sl):
                for rank, s in enumerate(lst, start=1):
                    cid = s.chunk.id
                    fused[cid] = fused.get(cid, 0.0) + 1.0 / (RRF_K + rank)
                    chunks[cid] = s.chunk
                    raw.setdefault(cid, {}).update(s.scores)
            ranked = sorted(fused, key=lambda c: (-fused[c], c))[:k]
            out.append([Scored(chunks[c], fused[c], {**raw[c], "rrf": fused[c]}) for c in ranked])
        return out


_REGISTRY = {"dense": DenseRetriever, "bm25": BM25Retriever, "hybrid": HybridRetriever}


def known_retrievers() -> list[str]:
    return list(_REGISTRY)


def get_retriever(name: str, index: Index) -> Retriever:
    if name not in _REGISTRY:
        raise ConfigError(f"unknown retriever {name!r}: use one of {', '.join(_REGISTRY)}")
    return _REGISTRY[name](index)
