"""The ``ensemble`` reranker: shipped weights, real cross-encoder + bi-encoder + BM25 features."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragsieve.errors import ConfigError
from ragsieve.rerank import get_reranker
from ragsieve.rerank.base import DEFAULT_RERANKER
from ragsieve.rerank.fusion import (
    FEATURES,
    FusionReranker,
    FusionWeights,
    TrainList,
    fit_weights,
    list_features,
    shipped_fusion_path,
    train_fusion,
)

pytestmark = pytest.mark.integration

Q = "Which river flows through Vienna?"
TEXTS = [
    "The stock market closed higher on Friday after strong earnings.",
    "The Danube flows through Vienna, the capital of Austria.",
    "Vienna is known for its coffee houses and classical music.",
    "The Nile is the longest river in Africa.",
]


@pytest.fixture(scope="module")
def ens() -> FusionReranker:
    return FusionReranker()


def test_shipped_weights_are_complete_and_documented() -> None:
    obj = json.loads(shipped_fusion_path().read_text())
    w = FusionWeights.load()
    assert set(w.features) <= set(FEATURES) and len(w.coef) == len(w.features)
    assert obj["training"]["pairs"] > 1000 and obj["training"]["command"].startswith("ragsieve")
    # the cross-encoder logit is part of the fusion and pulls the score up
    assert w.coef[w.features.index("ce_logit")] > 0


def test_scores_rank_the_answer_first_and_are_probabilities(ens: FusionReranker) -> None:
    s = ens.score(Q, TEXTS)
    assert s.shape == (4,) and np.all((s > 0) & (s < 1))
    assert int(np.argmax(s)) == 1
    assert s[1] > 0.5 > s[0]
    assert ens.score(Q, []).shape == (0,)
    np.testing.assert_array_equal(ens.score(Q, TEXTS), s)  # deterministic


def test_score_is_the_logistic_of_the_features(ens: FusionReranker) -> None:
    f = ens.features(Q, TEXTS)
    x = np.stack([f[n] for n in ens.weights.features], axis=1)
    z = x @ np.array(ens.weights.coef) + ens.weights.intercept
    np.testing.assert_allclose(ens.score(Q, TEXTS), 1 / (1 + np.exp(-z)), rtol=1e-5)
    np.testing.assert_allclose(f["ce_logit"], ens.cross_encoder.logits(Q, TEXTS), rtol=1e-6)


def test_list_features_by_hand() -> None:
    f = list_features(np.array([2.0, -1.0]), np.array([0.5, 0.2]), np.array([5.0, 0.0]))
    np.testing.assert_allclose(f["bm25"], [0.5, 0.0])  # s / (s + 5)
    np.testing.assert_allclose(f["bm25_rel"], [1.0, 0.0])
    np.testing.assert_allclose(f["cosine_rel"], [0.0, -0.3])
    none = list_features(np.zeros(2), np.zeros(2), np.zeros(2))
    np.testing.assert_array_equal(none["bm25_rel"], [0.0, 0.0])  # no query term anywhere


def test_fit_weights_learns_the_informative_feature() -> None:
    rng = np.random.default_rng(0)
    lists, feats = [], []
    for i in range(40):
        gold = int(rng.integers(0, 5))
        signal = rng.normal(0, 1, 5)
        signal[gold] += 4.0
        noise = rng.normal(0, 1, 5)
        lists.append(TrainList(f"q{i}", tuple(f"p{j}" for j in range(5)), frozenset({gold}), "s"))
        feats.append(list_features(signal, noise, np.abs(noise)))
    w = fit_weights(lists, feats, ("ce_logit", "cosine"))
    assert w.coef[0] > 1.0 > abs(w.coef[1])


def test_get_reranker_default_is_the_ensemble() -> None:
    assert DEFAULT_RERANKER == "ensemble"
    assert isinstance(get_reranker(), FusionReranker)
    assert get_reranker("ensemble").name == "ensemble"


def test_missing_weights_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="fusion weights"):
        FusionWeights.load(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"features": ["nope"], "coef": [1.0], "intercept": 0.0}))
    with pytest.raises(ConfigError, match="malformed"):
        FusionWeights.load(bad)


def test_train_fusion_end_to_end_on_tiny_data(tiny_data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "fusion.json"
    info = train_fusion(out, tiny_data_dir, qasper=5, msmarco=20, negatives=4, log=lambda _: None)
    assert info["training"]["pairs"] == 4 + 20 * 5  # one paper of 4 paragraphs; 20 lists of 5
    w = FusionWeights.load(out)
    s = FusionReranker(w).score("How long do cats sleep?", ["Dogs are loyal.", "Cats sleep 16h."])
    assert s.shape == (2,) and np.all((s >= 0) & (s <= 1))


def test_dense_cosines_replace_embedding_and_give_the_same_ranking(
    ens: FusionReranker, sample_index_dir: Path
) -> None:
    """rerank() hands the dense retriever's cosines (the index's stored int8 vectors) to the
    ensemble instead of embedding each chunk again; the scores are those of a fresh embed."""
    from ragsieve.index import Index
    from ragsieve.rerank.base import rerank
    from ragsieve.retrieve import get_retriever

    q = "When did Champollion announce the decipherment?"
    hits = get_retriever("dense", Index.open(sample_index_dir)).retrieve([q], 6)[0]
    texts = [h.chunk.text for h in hits]
    fresh = ens.score(q, texts)
    reranked = rerank(ens, q, hits)
    by_id = {s.chunk.id: s.score for s in reranked}
    np.testing.assert_allclose([by_id[h.chunk.id] for h in hits], fresh, atol=1e-4)
    known = ens.bi_encoder.cosines(q, texts, [h.scores["dense"] for h in hits])
    np.testing.assert_allclose(known, ens.bi_encoder.cosines(q, texts, [None] * 6), atol=1e-4)


def test_anchored_bm25_of_joined_texts_matches_tokenising_them_whole() -> None:
    """CARROT's combinations reuse each blank-line piece's cached statistics; the result is
    the BM25 of the whole text, as if tokenised at once."""
    from ragsieve.rerank.bm25 import AnchoredBM25, tokenize

    pool = [*TEXTS, "Vienna, Vienna and the Danube.\n\nA river runs through Vienna."]
    bm = AnchoredBM25(Q, pool)
    texts = ["\n\n".join(pool[i] for i in order) for order in ((1, 2), (2, 1, 4), (4,), (0,))]
    got = bm.raw(texts)
    for text, value in zip(texts, got, strict=True):
        toks = tokenize(text)
        norm = bm.k1 * (1 - bm.b + bm.b * len(toks) / bm.avgdl)
        want = sum(
            bm.idf[t] * toks.count(t) * (bm.k1 + 1) / (toks.count(t) + norm)
            for t in bm.terms
            if t in toks
        )
        assert value == pytest.approx(want, rel=1e-12)
    assert got[0] > 0 and np.array_equal(bm.raw(texts), got)  # cached pieces: same values
