"""The Linker protocol: sentence-to-sentence relation weights inside one document (SAKI-RAG).

SAKI-RAG (Sec. 3.1) stores, per sentence, the other sentences of its document sorted by an
"attention contribution" ``A_ij`` (Eq. 3) with their weights (Eq. 4). A :class:`Linker` produces
that relation for a batch of documents given as sentence lists; :func:`top_links` turns it into
the stored top-T metadata. The relation is kept sparse (per sentence: candidate indices and
weights) so that a windowed transformer (:mod:`ragsieve.link.attention`, a band around the
diagonal) and a true sentence-level model (SentenceVAE's SLLM: a dense n x n matrix) fit the
same type.

Two baselines for measuring links live here too: :class:`AdjacentLinker` (the neighbouring
sentences) and :class:`CosineLinker` (the most similar sentences by embedding).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ragsieve.errors import ConfigError


@dataclass(frozen=True)
class SentenceLinks:
    """Relation weights of one document's sentences.

    ``neighbours[i]`` are the sentence indices ``j != i`` that sentence ``i`` relates to and
    ``weights[i]`` their weights (a row of ``A``, normalised to sum to 1 over ``neighbours[i]``
    unless the row is empty). Indices are positions in the document's sentence list.
    """

    neighbours: tuple[np.ndarray, ...]
    weights: tuple[np.ndarray, ...]

    def __len__(self) -> int:
        return len(self.neighbours)

    def dense(self) -> np.ndarray:
        """The full ``n x n`` matrix (tests and small documents only)."""
        n = len(self)
        out = np.zeros((n, n), dtype=np.float32)
        for i, (nb, w) in enumerate(zip(self.neighbours, self.weights, strict=True)):
            out[i, nb] = w
        return out

    def top(self, t: int) -> list[list[tuple[int, float]]]:
        """Eq. 4: per sentence, its ``t`` strongest links ``[(j, A_ij), ...]``, strongest first
        (ties: the nearer sentence first, then the earlier one)."""
        return top_links(self, t)


def top_links(links: SentenceLinks, t: int) -> list[list[tuple[int, float]]]:
    """Eq. 4 of SAKI-RAG for every sentence of a document; see :meth:`SentenceLinks.top`."""
    if t < 0:
        raise ConfigError(f"the number of links must be >= 0, got {t}")
    out: list[list[tuple[int, float]]] = []
    for i, (nb, w) in enumerate(zip(links.neighbours, links.weights, strict=True)):
        if t == 0 or len(nb) == 0:
            out.append([])
            continue
        order = np.lexsort((nb, np.abs(nb - i), -w))[:t]
        out.append([(int(nb[o]), float(w[o])) for o in order])
    return out


@runtime_checkable
class Linker(Protocol):
    """Relates the sentences of each document. Batch-first: one result per document."""

    name: str

    def link(self, documents: Sequence[Sequence[str]]) -> list[SentenceLinks]: ...


def _normalised_rows(rows: list[tuple[np.ndarray, np.ndarray]]) -> SentenceLinks:
    nbs, ws = [], []
    for nb, w in rows:
        w = np.asarray(w, dtype=np.float32)
        total = float(w.sum())
        if total > 0:
            w = w / total
        nbs.append(np.asarray(nb, dtype=np.int32))
        ws.append(w.astype(np.float32))
    return SentenceLinks(tuple(nbs), tuple(ws))


class AdjacentLinker:
    """Baseline: each sentence links to its neighbours, nearer first (weight ~ 1 / distance)."""

    name = "adjacent"

    def __init__(self, distance: int = 1) -> None:
        if distance < 1:
            raise ConfigError(f"distance must be >= 1, got {distance}")
        self.distance = distance

    def link(self, documents: Sequence[Sequence[str]]) -> list[SentenceLinks]:
        out = []
        for sents in documents:
            n = len(sents)
            rows = []
            for i in range(n):
                nb = np.array(
                    [j for j in range(i - self.distance, i + self.distance + 1) if 0 <= j < n]
                )
                nb = nb[nb != i]
                rows.append((nb, 1.0 / np.abs(nb - i)))
            out.append(_normalised_rows(rows))
        return out


class CosineLinker:
    """Baseline: each sentence links to every other by the cosine of their embeddings
    (negative cosines clipped to 0), optionally only within ``distance`` sentences."""

    name = "cosine"

    def __init__(self, embedder: str = "minilm", distance: int | None = None) -> None:
        from ragsieve.embed import get_embedder

        self.embedder = get_embedder(embedder)
        self.distance = distance

    def link(self, documents: Sequence[Sequence[str]]) -> list[SentenceLinks]:
        flat = [s for sents in documents for s in sents]
        vecs = self.embedder.embed(flat) if flat else np.zeros((0, 1), dtype=np.float32)
        out, pos = [], 0
        for sents in documents:
            n = len(sents)
            v = vecs[pos : pos + n]
            pos += n
            sim = np.clip(v @ v.T, 0.0, None)
            rows = []
            for i in range(n):
                nb = np.arange(n)
                keep = nb != i
                if self.distance is not None:
                    keep &= np.abs(nb - i) <= self.distance
                rows.append((nb[keep], sim[i, keep]))
            out.append(_normalised_rows(rows))
        return out
