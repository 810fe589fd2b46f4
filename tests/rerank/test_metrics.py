"""Ranking metrics against hand-computed cases, and the BM25 reranker."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from ragsieve.rerank.bm25 import BM25Index, BM25Reranker, tokenize
from ragsieve.rerank.evaluate import (
    RankTask,
    evaluate_scores,
    mrr_at_k,
    ndcg_at_k,
    ranking,
    recall_at_k,
    task_metrics,
)


def test_single_gold_at_rank_3() -> None:
    scores = [0.9, 0.8, 0.7, 0.1]
    m = task_metrics(scores, {2})
    assert m["mrr@10"] == pytest.approx(1 / 3)
    assert m["ndcg@10"] == pytest.approx(1 / math.log2(4))  # 0.5
    assert m["recall@1"] == 0.0


def test_two_gold_hand_computed() -> None:
    # order: 1, 0, 3, 2 -> gold {0, 2} at ranks 2 and 4
    scores = [0.8, 0.9, 0.1, 0.5]
    gold = {0, 2}
    order = ranking(scores, gold)
    assert order == [1, 0, 3, 2]
    assert mrr_at_k(order, gold) == pytest.approx(0.5)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3)
    assert ndcg_at_k(order, gold) == pytest.approx(dcg / idcg)
    assert recall_at_k(order, gold, 1) == 0.0
    assert recall_at_k([0, 1], gold, 1) == 0.5
    # sklearn agrees when there are no ties
    assert ndcg_at_k(order, gold) == pytest.approx(ndcg_score([[1, 0, 1, 0]], [scores], k=10))


def test_cutoff_and_ties_are_pessimistic() -> None:
    scores = [1.0] * 12
    assert ranking(scores, {0}) == [*range(1, 12), 0]  # the gold one goes last among ties
    assert task_metrics(scores, {0}) == {"mrr@10": 0.0, "ndcg@10": 0.0, "recall@1": 0.0}
    assert task_metrics([0.0, 1.0], {1})["recall@1"] == 1.0


def test_evaluate_scores_averages() -> None:
    tasks = [
        RankTask("a", "q", ("x", "y"), frozenset({0})),
        RankTask("b", "q", ("x", "y"), frozenset({0})),
    ]
    out = evaluate_scores(tasks, [np.array([1.0, 0.0]), np.array([0.0, 1.0])])
    assert out == {"mrr@10": 0.75, "ndcg@10": round((1 + 1 / math.log2(3)) / 2, 4), "recall@1": 0.5}


def test_bm25_hand_computed() -> None:
    texts = ["apple banana", "banana cherry cherry", "durian"]
    idx = BM25Index(texts, k1=1.2, b=0.75)
    s = idx.scores("cherry")
    # cherry: df=1, N=3 -> idf = ln(1 + 2.5/1.5); doc 1: tf=2, len 3, avgdl (2+3+1)/3 = 2
    idf = math.log(1 + 2.5 / 1.5)
    norm = 1.2 * (1 - 0.75 + 0.75 * 3 / 2)
    assert s[1] == pytest.approx(idf * 2 * 2.2 / (2 + norm))
    assert s[0] == 0.0 and s[2] == 0.0
    assert list(idx.top("banana cherry", 2)) == [1, 0]
    assert tokenize("The Cat, the HAT!") == ["cat", "hat"]


def test_bm25_reranker_squashes_to_unit_interval() -> None:
    r = BM25Reranker(k=5.0)
    texts = ["the eiffel tower is in paris", "bananas are yellow", "paris paris paris"]
    s = r.score("eiffel tower paris", texts)
    raw = r.raw_scores("eiffel tower paris", texts)
    assert s.dtype == np.float32 and s.shape == (3,)
    assert np.all((s >= 0) & (s < 1))
    np.testing.assert_allclose(s, raw / (raw + 5.0), rtol=1e-6)
    assert s[0] > s[2] > s[1] == 0.0
    assert r.score("x", []).shape == (0,)
