"""The head graph edits on the shipped tagger: reading a head's input changes no output, a
replaced passage head computes exactly its new weights over that input, and an added span head
its weights over the last hidden state."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tagger_helpers import PASSAGES, QUESTION

from ragsieve.errors import ConfigError
from ragsieve.rerank.cross_encoder import shipped_model_dir as reranker_dir
from ragsieve.tag.encode import PassageEncoder, load_tokenizer
from ragsieve.tag.graph import (
    add_span_head,
    has_span_output,
    hidden_tensor,
    pooled_tensor,
    replace_passage_head,
    with_hidden_output,
    with_pooled_output,
)
from ragsieve.tag.model import shipped_model_dir
from ragsieve.tag.span import SPAN_HEAD, SPAN_OUTPUT

FEEDS = ("input_ids", "attention_mask", "token_type_ids")


def _feeds() -> list[dict[str, np.ndarray]]:
    enc = PassageEncoder(load_tokenizer(shipped_model_dir() / "tokenizer.json"), 256)
    out = []
    for w in enc.windows(QUESTION, PASSAGES):
        arr = enc.batch([w])
        out.append({k: arr[k] for k in FEEDS})
    return out


def _session(model: Path | bytes) -> ort.InferenceSession:
    src = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(src, providers=["CPUExecutionProvider"])


def test_the_pooled_output_changes_no_other_output() -> None:
    model = shipped_model_dir() / "model.onnx"
    graph, name = with_pooled_output(model)
    plain, pooled = _session(model), _session(graph)
    for feed in _feeds():
        a = plain.run(None, feed)
        tok, passage, hidden = pooled.run(["token_logits", "passage_logit", name], feed)
        assert np.array_equal(a[0], tok) and np.array_equal(a[1], passage)
        assert hidden.shape == (1, 384) and np.isfinite(hidden).all()


def test_a_replaced_head_is_its_weights_over_the_pooled_state(tmp_path: Path) -> None:
    src = shipped_model_dir() / "model.onnx"
    rng = np.random.default_rng(0)
    weight, bias = rng.normal(size=384), 0.25
    out = tmp_path / "model.onnx"
    replace_passage_head(src, out, weight, bias)
    graph, name = with_pooled_output(src)
    old, new = _session(graph), _session(out)
    for feed in _feeds():
        tok, _, hidden = old.run(["token_logits", "passage_logit", name], feed)
        tok2, passage = new.run(["token_logits", "passage_logit"], feed)
        assert np.array_equal(tok, tok2)  # the encoder and the token head are untouched
        assert passage.shape == (1,)
        assert passage[0] == pytest.approx(float(hidden[0] @ weight + bias), abs=1e-4)
    # the old int8 head is gone: its quantised weight no longer ships
    import onnx

    ops = [n.name for n in onnx.load(str(out)).graph.node if "passage_head" in n.name]
    assert ops == []


def test_a_graph_without_a_passage_head_is_refused(tmp_path: Path) -> None:
    import onnx

    reranker = reranker_dir() / "model.onnx"
    with pytest.raises(ConfigError, match="not a tagger graph"):
        pooled_tensor(onnx.load(str(reranker)).graph)
    shutil.copy(reranker, tmp_path / "model.onnx")
    with pytest.raises(ConfigError, match="not a tagger graph"):
        replace_passage_head(tmp_path / "model.onnx", tmp_path / "out.onnx", np.zeros(384), 0.0)
    assert not (tmp_path / "out.onnx").exists()


def test_the_hidden_output_changes_no_other_output() -> None:
    model = shipped_model_dir() / "model.onnx"
    graph, name = with_hidden_output(model)
    plain, hidden = _session(model), _session(graph)
    for feed in _feeds():
        a = plain.run(["token_logits", "passage_logit"], feed)
        tok, passage, h = hidden.run(["token_logits", "passage_logit", name], feed)
        assert np.array_equal(a[0], tok) and np.array_equal(a[1], passage)
        assert h.shape == (1, feed["input_ids"].shape[1], 384) and np.isfinite(h).all()


def test_a_span_head_is_its_weights_over_the_hidden_state_and_changes_nothing_else(
    tmp_path: Path,
) -> None:
    """``span_logits = hidden @ W + b`` (and through a ReLU layer for two layers); the token
    and passage outputs stay bit-identical, and a second head replaces the first."""
    import onnx

    src = shipped_model_dir() / "model.onnx"
    rng = np.random.default_rng(1)
    linear = [(rng.normal(size=(384, 2)), rng.normal(size=2))]
    mlp = [(rng.normal(size=(384, 8)), rng.normal(size=8)), (rng.normal(size=(8, 2)), np.zeros(2))]
    one, two = tmp_path / "one.onnx", tmp_path / "two.onnx"
    add_span_head(src, one, linear)
    add_span_head(one, two, mlp)  # replaces the linear head
    assert has_span_output(one) and has_span_output(two)
    assert not has_span_output(reranker_dir() / "model.onnx")
    graph, name = with_hidden_output(src)
    base, s1, s2 = _session(graph), _session(one), _session(two)
    for feed in _feeds():
        tok, passage, h = base.run(["token_logits", "passage_logit", name], feed)
        for sess, layers in ((s1, linear), (s2, mlp)):
            tok2, passage2, span = sess.run(["token_logits", "passage_logit", SPAN_OUTPUT], feed)
            assert np.array_equal(tok, tok2) and np.array_equal(passage, passage2)
            want = h[0] @ layers[0][0] + layers[0][1]
            if len(layers) == 2:
                want = np.maximum(want, 0) @ layers[1][0] + layers[1][1]
            assert span.shape == (1, h.shape[1], 2)
            assert np.allclose(span[0], want, atol=1e-3 * (1 + np.abs(want).max()))
    m = onnx.load(str(two))
    assert [o.name for o in m.graph.output] == ["token_logits", "passage_logit", SPAN_OUTPUT]
    heads = {i.name for i in m.graph.initializer if i.name.startswith(SPAN_HEAD)}
    assert heads == {f"{SPAN_HEAD}{k}.{p}" for k in (0, 1) for p in ("weight", "bias")}


def test_a_span_head_needs_two_outputs_and_a_tagger_graph(tmp_path: Path) -> None:
    src = shipped_model_dir() / "model.onnx"
    with pytest.raises(ConfigError, match="2 outputs"):
        add_span_head(src, tmp_path / "out.onnx", [(np.zeros((384, 3)), np.zeros(3))])
    import onnx

    reranker = onnx.load(str(reranker_dir() / "model.onnx"))
    with pytest.raises(ConfigError, match="not a tagger graph"):
        hidden_tensor(reranker.graph)
    assert not (tmp_path / "out.onnx").exists()
