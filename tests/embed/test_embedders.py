from __future__ import annotations

import numpy as np
import pytest

from ragsieve.embed import get_embedder
from ragsieve.errors import ConfigError

pytestmark = pytest.mark.integration


def test_packaged_minilm_gives_normalised_384d_vectors_that_rank_sensibly() -> None:
    e = get_embedder("minilm")
    v = e.embed(["A cat sat on the mat.", "A kitten rested on the rug.", "Stock prices fell."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    assert e.embed([]).shape == (0, 384)


def test_onnx_int8_build_matches_torch_vectors() -> None:
    texts = ["Honey bees dance to share where flowers are.", "Voyager 1 left the heliosphere."]
    a = get_embedder("minilm").embed(texts)
    b = get_embedder("minilm-onnx").embed(texts)
    assert b.shape == a.shape
    assert float((a * b).sum(axis=1).min()) > 0.99


def test_unknown_embedder_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown embedder"):
        get_embedder("no-such-model")


def test_index_vectors_use_the_int8_build_unless_asked_for_the_exact_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ragsieve.embed import index_build, index_embedder
    from ragsieve.embed.base import EXACT_ENV

    assert index_embedder("minilm").name == "minilm-onnx" == index_build("minilm")
    assert index_embedder("minilm-onnx").name == "minilm-onnx"
    monkeypatch.setenv(EXACT_ENV, "1")
    assert index_embedder("minilm").name == "minilm" == index_build("minilm")


def test_int8_batches_bounded_by_tokens_give_the_vectors_of_single_texts() -> None:
    emb = get_embedder("minilm-onnx")
    texts = [("word " * n).strip() + f" {n}" for n in (3, 400, 40, 120, 7, 250, 60)]
    together = emb.embed(texts, batch_size=4)
    alone = np.concatenate([emb.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
