"""Combination cosines pooled from the parts' token states, with the real int8 MiniLM.

The pooled cosine is an approximation of embedding the concatenation (attention across parts
is lost); these tests pin what is exact about it (singles, the 256-piece window, the model
runs) and bound how far it strays on real chunks of the sample corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragsieve.embed import index_embedder
from ragsieve.rerank import get_reranker
from ragsieve.rerank.base import CachedCosines
from ragsieve.rerank.pooled import PooledCosines
from ragsieve.select.benefit import SEPARATOR, BenefitScorer

pytestmark = pytest.mark.integration

QUESTION = "When was Voyager 1 launched and what did it find?"


@pytest.fixture(scope="module")
def chunks(sample_index_dir: Path) -> list[str]:
    from ragsieve.index import Index
    from ragsieve.retrieve import get_retriever

    hits = get_retriever("dense", Index.open(sample_index_dir)).retrieve([QUESTION], 6)[0]
    return [h.chunk.text for h in hits]


def _pooled() -> PooledCosines:
    return PooledCosines(CachedCosines(index_embedder("minilm"), QUESTION))


def test_singles_are_exact_and_combinations_close_to_the_joined_text(chunks: list[str]) -> None:
    pooled, exact = _pooled(), CachedCosines(index_embedder("minilm"), QUESTION)
    assert pooled.can_pool
    singles, _ = pooled.cosines_parts([(c,) for c in chunks], SEPARATOR)
    assert singles.tolist() == exact.cosines(chunks)[0].tolist()
    combos = [(chunks[0], chunks[1]), (chunks[2], chunks[0], chunks[3]), (chunks[4], chunks[5])]
    got, ran = pooled.cosines_parts(combos, SEPARATOR)
    want, _ = exact.cosines([SEPARATOR.join(p) for p in combos])
    # Six distinct parts, each read once (the singles came from the exact cache).
    assert ran == 6
    # Measured on these chunks: 0.01-0.06 from the joined text's cosine after calibration
    # (0.04-0.09 above it before); the bound leaves room for int8 noise, not a broken window.
    assert np.abs(got - want).max() < 0.15
    again, ran_again = pooled.cosines_parts(combos, SEPARATOR)
    assert again.tolist() == got.tolist() and ran_again == 0


def test_the_window_is_the_concatenations(chunks: list[str]) -> None:
    """A first part of 254+ pieces fills MiniLM's window: what follows is never read, and the
    cosine is that part's own, as with the joined text."""
    pooled = _pooled()
    long = " ".join(chunks) * 3
    assert index_embedder("minilm").token_lengths([long])[0] >= pooled.window
    (alone,), _ = pooled.exact.cosines([long])
    both, _ = pooled.cosines_parts([(long, chunks[0]), (long, chunks[1])], SEPARATOR)
    assert both.tolist() == [alone, alone]
    joined, _ = pooled.exact.cosines([SEPARATOR.join((long, chunks[0]))])
    assert joined[0] == alone


def test_the_pooled_benefit_is_batch_invariant_and_scores_singles_as_before(
    chunks: list[str],
) -> None:
    pool = chunks[:4]
    combos = [(0,), (1, 0), (2, 3, 1), (3,)]
    ens = get_reranker("ensemble")
    batch = BenefitScorer(ens, QUESTION, pool, combination_cosine="pooled")
    together = batch.score(combos)
    alone = BenefitScorer(ens, QUESTION, pool, combination_cosine="pooled")
    alone.score([(0,), (1,), (2,), (3,)])
    assert together == pytest.approx([alone.score([c])[0] for c in combos], abs=1e-6)
    exact = BenefitScorer(ens, QUESTION, pool)
    singles = [(i,) for i in range(4)]
    assert alone.score(singles).tolist() == pytest.approx(exact.score(singles).tolist(), abs=1e-6)
    assert batch.stats()["combination_cosine"] == "pooled"
    assert exact.stats()["combination_cosine"] == "exact"
    # The bi-encoder alone pools too; its scores stay cosines clipped to [0, 1].
    bi = BenefitScorer(
        get_reranker("bi-encoder"), QUESTION, pool, combination_cosine="pooled"
    ).score(combos)
    assert all(0.0 <= w <= 1.0 for w in bi)
