"""The span head's fit on frozen features (``python -m ragsieve.tag.fit.span``), on a handful of
training questions here: the rows it learns from, the folder it writes (the head added, every
other output unchanged, ``span.json``), its measurement, and its bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_one_line_error, run
from tagger_helpers import PASSAGES, QUESTION

from ragsieve.data import find_data_dir
from ragsieve.tag.fit.data import Example, save_examples
from ragsieve.tag.fit.pools import train_pools
from ragsieve.tag.fit.span import (
    SPAN_FILE,
    Reader,
    apply_head,
    fit_head,
    main,
    read_head,
    training_rows,
)
from ragsieve.tag.graph import drop_span_head, with_hidden_output
from ragsieve.tag.model import OnnxTagger, shipped_model_dir
from ragsieve.tag.span import SPAN_OUTPUT


def _examples(n: int) -> list[Example]:
    """Training examples with answers from ``n`` training pools of each set: every gold
    passage, labelled by its gold sentences, with the question's answer."""
    out = []
    for name, pools in train_pools(find_data_dir(), n).items():
        for q in pools[:n]:
            for title, sents, gold in q["pool"]:
                if any(gold):
                    out.append(
                        Example(
                            q["question"], title, sents, gold, 1, name, "train", q["answers"][0]
                        )
                    )
    return out


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fit_span")
    folder = root / "tagger"
    shutil.copytree(shipped_model_dir(), folder)
    drop_span_head(folder / "model.onnx", folder / "model.onnx")
    examples = root / "examples.jsonl.xz"
    save_examples(examples, _examples(6))
    argv = ["--model", str(folder), "--examples", str(examples), "--head", "linear"]
    assert main([*argv, "--limit", "3", "--dev-squad", "3"]) == 0
    return folder


def test_rows_hold_the_answer_pieces_of_train_examples_only() -> None:
    reader = Reader(shipped_model_dir())
    examples = _examples(3)
    dev = [
        Example(e.question, e.title, e.sentences, e.labels, 1, e.source, "dev", e.answer)
        for e in examples
    ]
    rows = training_rows(reader, examples + dev)
    assert 0 < len(rows.hidden) <= len(examples)  # no dev example, yes/no answers have no row
    for h, a, b in zip(rows.hidden, rows.start, rows.end, strict=True):
        assert h.shape[1] == 384 and 0 <= a <= b < h.shape[0]
    layers = fit_head(rows, "linear", epochs=30)
    assert [w.shape for w, _ in layers] == [(384, 2)]
    hits = [
        int(np.argmax(apply_head(layers, h.astype(np.float32))[:, 0]) == a)
        for h, a in zip(rows.hidden, rows.start, strict=True)
    ]
    assert np.mean(hits) > 0.5  # it learns its own rows (384 weights, a few dozen windows)
    assert [w.shape for w, _ in fit_head(rows, "mlp", epochs=1)] == [(384, 256), (256, 2)]


def test_the_fitted_folder_adds_the_head_and_changes_nothing_else(fitted: Path) -> None:
    info = json.loads((fitted / SPAN_FILE).read_text("utf-8"))
    assert info["head"] == "linear" and info["output"] == SPAN_OUTPUT
    assert info["train_rows"] > 0 and info["data"]["examples"].endswith("examples.jsonl.xz")
    dev = info["dev"]["linear"]["all/all"]
    assert dev["n"] == 6 and 0 <= dev["em"] <= dev["f1"] <= 1
    assert "--examples" in info["command"]
    assert (fitted / "MODEL_CARD.md").read_text("utf-8").count("## Span head") == 1
    old, new = OnnxTagger(), OnnxTagger(fitted)
    assert new.has_span
    for x, y in zip(old.tag(QUESTION, PASSAGES), new.tag(QUESTION, PASSAGES), strict=True):
        assert np.array_equal(x.probs, y.probs) and x.relevance == y.relevance
    # the graph computes the head fitted on the hidden states the fit read
    import onnxruntime as ort

    graph, name = with_hidden_output(fitted / "model.onnx")
    sess = ort.InferenceSession(graph, providers=["CPUExecutionProvider"])
    enc = Reader(fitted).enc
    arr = enc.batch(enc.windows(QUESTION, PASSAGES[1:2]))
    feed = {k: arr[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    span, hidden = sess.run([SPAN_OUTPUT, name], feed)
    assert np.allclose(span[0], apply_head(read_head(fitted), hidden[0]), atol=1e-4)
    # read back into torch, the added linear head is the network's span head (strict load)
    from ragsieve.tag.fit.net import build_net, onnx_state_dict

    state = onnx_state_dict(fitted / "model.onnx")
    build_net().load_state_dict(state, strict=True)
    ((w, b),) = read_head(fitted)
    assert np.allclose(state["span_head.weight"].numpy(), w.T) and np.allclose(
        state["span_head.bias"].numpy(), b
    )


def test_measure_scores_a_head_given_gold_and_through_prune(fitted: Path) -> None:
    p = run(
        "--model",
        str(fitted),
        "--measure",
        "dev",
        "--limit",
        "2",
        "--dev-squad",
        "2",
        module="ragsieve.tag.fit.span",
    )
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["split"] == "dev"
    assert report["given_gold_passages"]["all/all"]["n"] == 4
    for name in ("hotpot", "squad"):
        got = report["through_prune"][name]
        assert got["n"] == 2 and got["with_span"] == 2 and 0 <= got["em"] <= got["f1"] <= 1


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--model", "{tmp}/no-model"], "model.onnx is missing"),
        (["--examples", "{tmp}/none.jsonl.xz"], "not found"),
        (["--head", "cubic"], "invalid choice"),
        (["--rows", "0"], "--rows must be a positive integer"),
        (["--model", "{plain}", "--measure", "dev"], "has no span head"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    plain = tmp_path / "plain"
    shutil.copytree(shipped_model_dir(), plain)
    drop_span_head(plain / "model.onnx", plain / "model.onnx")
    before = {p.name: p.read_bytes() for p in plain.iterdir()}
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{plain}", str(plain)) for a in args]
    if "--model" not in argv:
        argv = ["--model", str(plain), *argv]
    p = run(*argv, module="ragsieve.tag.fit.span")
    assert_one_line_error(p, 2, fragment)
    assert {p.name: p.read_bytes() for p in plain.iterdir()} == before
