"""The passage head's graph edits on the shipped tagger: reading the head's input changes no
output, and a replaced head computes exactly its new weights over that input."""

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
from ragsieve.tag.graph import pooled_tensor, replace_passage_head, with_pooled_output
from ragsieve.tag.model import shipped_model_dir

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
