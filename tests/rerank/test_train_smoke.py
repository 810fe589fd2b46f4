"""The training code path on a handful of pairs: data building, a few steps, ONNX export."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragsieve.rerank.cross_encoder import OnnxCrossEncoder
from ragsieve.rerank.train import (
    Group,
    TrainConfig,
    base_model_path,
    build_msmarco_groups,
    build_qasper_groups,
    export_onnx,
    paper_paragraphs,
    train_model,
)

pytestmark = pytest.mark.integration

PAPER = """# A paper

**Paper ID:** 1

## Abstract

We study cats and their sleeping habits.

## Method

We count hours of sleep with a camera.

Cats sleep sixteen hours a day on average.

## Related

Dogs are loyal animals.
"""


def _tiny_data(root: Path) -> Path:
    (root / "qasper").mkdir(parents=True)
    (root / "msmarco").mkdir()
    (root / "qasper/train_papers_fulltext.jsonl").write_text(
        json.dumps({"paper_id": "p1", "text": PAPER}) + "\n"
    )
    (root / "qasper/questions_train.json").write_text(
        json.dumps(
            [
                {
                    "paper_id": "p1",
                    "question": "How long do cats sleep?",
                    "answers": [
                        {
                            "evidence": [
                                "Cats sleep sixteen hours a day on average.",
                                "FLOAT SELECTED: x",
                            ]
                        }
                    ],
                },
                {"paper_id": "p1", "question": "No evidence here?", "answers": [{"evidence": []}]},
            ]
        )
    )
    rows = [
        {"id": i, "query": f"query {i} topic{i}", "positive": [f"passage topic{i} text"]}
        for i in range(60)
    ]
    (root / "msmarco/msmarco_dev_small_eng_query_positive.json").write_text(json.dumps(rows))
    return root


def test_data_builders(tmp_path: Path) -> None:
    import random

    data = _tiny_data(tmp_path)
    assert paper_paragraphs(PAPER)[0] == "We study cats and their sleeping habits."
    assert len(paper_paragraphs(PAPER)) == 4
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
