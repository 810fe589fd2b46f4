"""The training code path on a handful of pairs: data building, a few steps through the
training harness, a stop and a resume that end on the uninterrupted run's weights, ONNX
export (fp32 and per-channel int8) that the inference class loads, and ``train-reranker``
end to end with its model card."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run

from ragsieve.data import paper_paragraphs
from ragsieve.rerank.cross_encoder import OnnxCrossEncoder
from ragsieve.rerank.train import (
    Group,
    TrainConfig,
    build_msmarco_groups,
    build_qasper_groups,
    export_model,
    train_model,
)
from ragsieve.training import CHECKPOINT, RunOptions
from ragsieve.training.minilm import base_model_path

pytestmark = pytest.mark.integration

GROUPS = [
    Group(
        "how long do cats sleep",
        "Cats sleep sixteen hours a day.",
        ["Dogs are loyal.", "Paris is in France.", "Tea is a drink."],
        "t",
    ),
    Group(
        "capital of france",
        "Paris is the capital of France.",
        ["Cats sleep a lot.", "Rome is old.", "Water is wet."],
        "t",
    ),
] * 3
CFG = TrainConfig(max_length=32, groups_per_batch=2, infer_max_length=32)


def test_data_builders(tiny_data_dir: Path, tiny_paper: str) -> None:
    import random

    data = tiny_data_dir
    assert paper_paragraphs(tiny_paper)[0] == "We study cats and their sleeping habits."
    assert len(paper_paragraphs(tiny_paper)) == 4
    cfg = TrainConfig(msmarco_groups=5)
    q = build_qasper_groups(data, cfg, random.Random(0))
    assert len(q) == 1 and q[0].positive.startswith("Cats sleep")
    assert len(q[0].negatives) == 3 and q[0].positive not in q[0].negatives
    m = build_msmarco_groups(data, cfg, random.Random(0))
    assert len(m) == 5
    for g in m:
        assert g.positive not in g.negatives and len(g.negatives) == 3


def test_resumed_training_matches_and_exports(tmp_path: Path) -> None:
    quiet = lambda _: None  # noqa: E731
    whole, stats = train_model(GROUPS, CFG, tmp_path / "whole", log=quiet)
    assert stats["steps"] == 3 and stats["finished"] and stats["pairs"] == 24
    out = tmp_path / "split"
    _, first = train_model(GROUPS, CFG, out, RunOptions(stop_after=1), log=quiet)
    assert first["steps"] == 1 and not first["finished"] and (out / CHECKPOINT).is_file()
    logs: list[str] = []
    resumed, second = train_model(GROUPS, CFG, out, log=logs.append)
    assert any("resuming at step 1/3" in m for m in logs)
    assert second["finished"] and not (out / CHECKPOINT).exists()
    a, b = whole.state_dict(), resumed.state_dict()
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)

    sizes = export_model(resumed, out)
    assert sizes["model_fp32.onnx"] > 3 * sizes["model.onnx"] > 3e6
    (out / "tokenizer.json").write_bytes((base_model_path() / "tokenizer.json").read_bytes())
    pair = ["Paris is the capital of France.", "Water is wet."]
    scores = [
        OnnxCrossEncoder(out, variant=v, max_length=32).score("capital of france", pair)
        for v in ("fp32", "int8")
    ]
    assert all(s.shape == (2,) and np.all((s >= 0) & (s <= 1)) for s in scores)
    assert np.allclose(scores[0], scores[1], atol=0.05)  # per-channel int8 stays close


def test_train_reranker_cli_time_limit_resume_and_card(tiny_data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "model"
    args = ["--out", str(out), "--data", str(tiny_data_dir), "--msmarco-groups", "5"]
    first = run("train-reranker", *args, "--max-length", "32", "--time-limit", "0.000001")
    assert first.returncode == 0, first.stderr
    assert "stopped early (rerun to resume)" in first.stdout
    assert (out / CHECKPOINT).is_file() and (out / "model.onnx").is_file()
    assert "stopped early" in (out / "MODEL_CARD.md").read_text("utf-8")
    # Other options than the checkpoint's: refused in one line, the checkpoint kept.
    bad = run("train-reranker", *args, "--max-length", "48")
    last = bad.stderr.strip().splitlines()[-1]  # after the progress lines
    assert bad.returncode != 0 and last.startswith("error: ") and "Traceback" not in bad.stderr
    assert "other training options" in last and (out / CHECKPOINT).is_file()
    second = run("train-reranker", *args, "--max-length", "32", "--json")
    assert second.returncode == 0, second.stderr
    info = json.loads(second.stdout)
    assert "resuming at step 1/2" in second.stderr
    assert info["train"]["finished"] and info["train"]["steps"] == 2
    assert info["seed"] == 13 and info["device"] == "cpu" and not (out / CHECKPOINT).exists()
    card = (out / "MODEL_CARD.md").read_text("utf-8")
    for rel, digest in info["data_sha256"].items():
        assert f"| `{rel}` | `{digest}` |" in card
    assert len(info["data_sha256"]) == 3 and "2/2 steps (finished)" in card
    assert OnnxCrossEncoder(out).score("query 1 topic1", ["passage topic1 text"]).shape == (1,)
