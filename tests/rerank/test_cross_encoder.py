"""The shipped cross-encoder (real int8 ONNX model, no mocks)."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from ragsieve.errors import ConfigError
from ragsieve.rerank.bm25 import BM25Reranker
from ragsieve.rerank.cross_encoder import OnnxCrossEncoder, shipped_model_dir, sigmoid
from ragsieve.rerank.factory import get_reranker

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def ce() -> OnnxCrossEncoder:
    model = get_reranker("cross-encoder")
    assert isinstance(model, OnnxCrossEncoder)
    return model


def test_shipped_files_and_size() -> None:
    d = shipped_model_dir()
    for name in ("model.onnx", "tokenizer.json", "MODEL_CARD.md", "reference_scores.json"):
        assert (d / name).is_file(), name
    total = sum(p.stat().st_size for p in d.iterdir() if p.is_file())
    assert total <= 30 * 1024 * 1024


def test_relevant_beats_irrelevant(ce: OnnxCrossEncoder) -> None:
    q = "When was the Eiffel Tower built?"
    texts = [
        "Bananas are rich in potassium and are a popular breakfast fruit.",
        "The Eiffel Tower was constructed from 1887 to 1889 as the entrance arch to the 1889 "
        "World's Fair in Paris.",
        "The Louvre is the world's most-visited museum.",
    ]
    s = ce.score(q, texts)
    assert s.dtype == np.float32 and s.shape == (3,)
    assert np.all((s >= 0) & (s <= 1))
    assert int(np.argmax(s)) == 1
    assert s[1] > 0.5 > s[0]


def test_empty_and_batching(ce: OnnxCrossEncoder) -> None:
    assert ce.score("q", []).shape == (0,)
    q = "Which river flows through Vienna?"
    texts = [f"Passage number {i} mentions the river Danube {'and more ' * i}" for i in range(9)]
    texts.append("The Danube flows through Vienna, the capital of Austria.")
    full = ce.score(q, texts)
    small = OnnxCrossEncoder(batch_size=2).score(q, texts)
    # Known limitation: dynamic int8 quantises activations per batch, so a score moves a little
    # with its batch-mates (measured up to ~0.1 here); the clear winner stays the winner.
    np.testing.assert_allclose(full, small, atol=0.15)
    assert int(np.argmax(full)) == int(np.argmax(small)) == 9
    np.testing.assert_array_equal(ce.score(q, texts), full)  # deterministic for the same call


def test_a_pair_scores_the_same_alone_or_in_a_pool(ce: OnnxCrossEncoder) -> None:
    """One pair a run (the default): a passage's score does not depend on the other passages
    of its call, and the cached pairwise scorer (CARROT's) gives the same logits."""
    q = "Which river flows through Vienna?"
    texts = [f"Passage number {i} mentions the river Danube {'and more ' * i}" for i in range(9)]
    texts.append("The Danube flows through Vienna, the capital of Austria.")
    assert ce.batch_size == 1
    pooled = ce.logits(q, texts)
    alone = np.concatenate([ce.logits(q, [t]) for t in texts])
    np.testing.assert_array_equal(pooled, alone)
    pairwise, ran = ce.anchored(q, texts).logits(texts + texts[:2])
    assert ran == len(texts)  # the repeated texts ran once
    np.testing.assert_array_equal(pairwise[: len(texts)], pooled.astype(np.float64))
    assert int(np.argmax(pooled)) == 9


def test_int8_consistent_with_fp32_reference(ce: OnnxCrossEncoder) -> None:
    ref = json.loads((shipped_model_dir() / "reference_scores.json").read_text())
    pairs = [(r["query"], r["passage"]) for r in ref]
    fp32 = sigmoid(np.array([r["fp32_logit"] for r in ref]))
    int8 = ce.score_pairs(pairs)
    # int8 (weights and embeddings) moves a borderline probe by up to ~0.26; on average < 0.05
    assert np.mean(np.abs(int8 - fp32)) < 0.06
    assert np.max(np.abs(int8 - fp32)) < 0.35
    # probes come as (relevant, irrelevant) pairs: the order agrees with fp32 on every one
    for i in range(0, len(pairs), 2):
        assert (int8[i] > int8[i + 1]) == (fp32[i] > fp32[i + 1])
    assert np.corrcoef(int8, fp32)[0, 1] > 0.95


def test_thread_safe(ce: OnnxCrossEncoder) -> None:
    q = "capital of italy"
    texts = ["Rome is the capital of Italy.", "Oslo is in Norway.", "Pasta is Italian food."]
    expected = ce.score(q, texts)
    out: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: out.append(ce.score(q, texts))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 4
    for s in out:
        np.testing.assert_allclose(s, expected, atol=1e-6)


def test_get_reranker_names() -> None:
    from ragsieve.rerank.fusion import FusionReranker

    assert isinstance(get_reranker(), FusionReranker)
    assert isinstance(get_reranker("cross-encoder"), OnnxCrossEncoder)
    assert isinstance(get_reranker("bm25"), BM25Reranker)
    with pytest.raises(ConfigError, match="unknown reranker"):
        get_reranker("no-such-reranker")
    with pytest.raises(ConfigError, match="does not exist"):
        get_reranker("cross-encoder:/no/such/dir")
