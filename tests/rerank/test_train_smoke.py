"""The training code path on a handful of pairs: data building, a few steps, ONNX export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragsieve.data import paper_paragraphs
from ragsieve.rerank.cross_encoder import OnnxCrossEncoder
from ragsieve.rerank.train import (
    Group,
    TrainConfig,
    base_model_path,
    build_msmarco_groups,
    build_qasper_groups,
    export_onnx,
    train_model,
)

pytestmark = pytest.mark.integration


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


def test_train_few_steps_and_export(tmp_path: Path) -> None:
    groups = [
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
    ] * 2
    cfg = TrainConfig(max_length=32, groups_per_batch=2, infer_max_length=32)
    model, stats = train_model(groups, cfg, base_model_path(), log=lambda _: None, max_steps=2)
    assert stats["steps"] == 2 and stats["pairs"] == 16
    sizes = export_onnx(model, tmp_path, cfg.infer_max_length, quantize=False)
    assert sizes["model_fp32.onnx"] > 1e6
    (tmp_path / "tokenizer.json").write_bytes((base_model_path() / "tokenizer.json").read_bytes())
    s = OnnxCrossEncoder(tmp_path, variant="fp32", max_length=32).score(
        "capital of france", ["Paris is the capital of France.", "Water is wet."]
    )
    assert s.shape == (2,) and np.all((s >= 0) & (s <= 1))
