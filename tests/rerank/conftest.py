"""Fixtures of the reranker tests: a miniature training-data folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def tiny_training_data(root: Path) -> Path:
    """A miniature shared/data folder: one QASPER train paper with questions, MS MARCO rows."""
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


@pytest.fixture()
def tiny_paper() -> str:
    return PAPER


@pytest.fixture()
def tiny_data_dir(tmp_path: Path) -> Path:
    return tiny_training_data(tmp_path / "data")
