"""The query's cached cosines per ``combination_cosine``, with the real MiniLM builds."""

from __future__ import annotations

import numpy as np
import pytest

from ragsieve.embed import get_embedder, index_embedder
from ragsieve.errors import ConfigError
from ragsieve.rerank import get_reranker
from ragsieve.rerank.base import anchored, cosine_scorer

pytestmark = pytest.mark.integration

QUESTION = "When was the first Fresnel lens installed?"
TEXTS = [
    "The first Fresnel lens was installed in the Cordouan lighthouse in 1823.",
    "Honey bees dance to share where flowers are.",
]


def test_int8_reads_unknown_texts_with_int8_activations_and_keeps_known_ones() -> None:
    exact = cosine_scorer(index_embedder("minilm"), QUESTION, "exact")
    int8 = cosine_scorer(index_embedder("minilm"), QUESTION, "int8")
    assert (exact.kind, int8.kind) == ("exact", "int8")
    # The query vector is the index build's in both, so seeded (index) cosines mean the same.
    assert np.array_equal(exact.query_vector(), int8.query_vector())
    e, ran_e = exact.cosines(TEXTS)
    i, ran_i = int8.cosines(TEXTS)
    assert ran_e == ran_i == 2
    assert np.allclose(e, i, atol=0.03) and not np.array_equal(e, i)
    assert i[0] > i[1] + 0.3  # the answer sentence, far above the off-topic one
    # A cosine the index already holds is taken as it is, not embedded again.
    seeded = cosine_scorer(index_embedder("minilm"), QUESTION, "int8")
    seeded.seed(TEXTS[:1], [0.5])
    got, ran = seeded.cosines(TEXTS[:1])
    assert (float(got[0]), ran) == (0.5, 0)


def test_int8_falls_back_to_exact_for_a_build_without_int8_activations() -> None:
    scorer = cosine_scorer(get_embedder("minilm"), QUESTION, "int8")  # fp32 torch
    assert scorer.kind == "exact"


def test_an_unknown_combination_cosine_is_a_one_line_error() -> None:
    with pytest.raises(ConfigError, match="combination_cosine must be one of") as e:
        anchored(get_reranker("bi-encoder"), QUESTION, TEXTS, "approx")
    assert "\n" not in str(e.value)
