"""``train-segmenter`` on a few real documents from ../shared/data: frozen head and fine-tuned.

Small samples keep it fast; the point is the code path that reproduces the shipped head
(seeded, so the same inputs give the same weights, also across a time-limit stop and a resume
through the training harness) and the ``--finetune-embedder`` path that saves a
sentence-transformers folder beside the head, which the SAGE chunker then loads.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragsieve.segment import sentences_of
from ragsieve.segment.model import SegmenterHead
from ragsieve.segment.sage import SageSegmenter
from ragsieve.segment.train import SegTrainConfig, train_segmenter
from ragsieve.training import RunOptions
from ragsieve.types import Document

pytestmark = pytest.mark.integration

TEXT = (
    "Bees collect nectar from flowers. They turn it into honey inside the hive. "
    "The queen lays the eggs.\n\n"
    "Volcanoes erupt when magma rises. Lava flows down the slopes and cools into rock."
)


def _cfg(**kw: object) -> SegTrainConfig:
    base = dict(qasper_papers=2, squality_stories=0, wikitext_articles=1, val_papers=2, epochs=2)
    return SegTrainConfig(**{**base, **kw})  # type: ignore[arg-type]


RUN = RunOptions(seed=5, threads=2, log=lambda _: None)


def _train_all(
    out: Path, data: Path, cache: Path, opts: RunOptions = RUN, **cfg: object
) -> dict[str, Any]:
    """A run on the ``all`` feature set with pair embeddings cached in ``cache``."""
    return train_segmenter(out, data, _cfg(**cfg), ["all"], cache_dir=cache, opts=opts)


def test_frozen_training_is_seeded_resumable_and_loadable(
    shared_data: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    whole = _train_all(tmp_path / "run0", shared_data, cache)
    assert whole["train_pairs"] > 100 and whole["finished"] and whole["seed"] == 5
    row = whole["table_x"]["all"]
    assert 0.0 <= row["acc_natural"] <= 1.0 and 0.0 <= row["boundary_f1"] <= 1.0
    # A run stopped by its time limit ships nothing, keeps a checkpoint, and resumes.
    out = tmp_path / "run1"
    limited = replace(RUN, time_limit_min=1e-9)
    first = _train_all(out, shared_data, cache, opts=limited)
    assert not first["finished"] and first["train"]["steps"] == 1
    assert not (out / "head.npz").exists() and list(out.glob("checkpoint-*.pt"))
    logs: list[str] = []
    second = _train_all(out, shared_data, cache, opts=replace(RUN, log=logs.append))
    assert second["finished"] and any("resuming at step 1/" in m for m in logs)
    assert not list(out.glob("checkpoint-*.pt"))
    a = SegmenterHead.load(tmp_path / "run0")
    b = SegmenterHead.load(out)
    for wa, wb in zip(a.weights, b.weights, strict=True):
        np.testing.assert_array_equal(wa, wb)
    card = (out / "MODEL_CARD.md").read_text("utf-8")
    assert "qasper/validation_papers_fulltext.jsonl" in card
    assert second["data_sha256"]["wikitext2/wiki.test.raw"] in card
    seg = SageSegmenter(model_dir=str(out))
    chunks = seg.segment([Document("d", TEXT)])[0]
    assert chunks and re.sub(r"\s", "", "".join(c.text for c in chunks)) == re.sub(r"\s", "", TEXT)


def test_finetune_embedder_saves_a_usable_pair(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "ft"
    cfg = _cfg(finetune_embedder=True, finetune_pairs=96)
    info = train_segmenter(out, shared_data, cfg, opts=RUN)
    assert (out / "embedder").is_dir() and (out / "head.npz").is_file()
    assert info["train_pairs"] == 96 and info["train"]["steps"] == 3
    assert "all, fine-tuned embedder" in info["table_x"]
    head = SegmenterHead.load(out)
    assert Path(head.embedder) == out / "embedder"  # resolved relative to the folder
    seg = SageSegmenter(model_dir=str(out))
    scores = seg.pair_scores([sentences_of(Document("d", TEXT))])[0]
    assert scores.shape == (4,) and np.all((scores >= 0) & (scores <= 1))
    # Stopped after one step and resumed: the same head as the uninterrupted run.
    split = tmp_path / "split"
    first = train_segmenter(split, shared_data, cfg, opts=replace(RUN, stop_after=1))
    assert not first["finished"] and not (split / "head.npz").exists()
    assert train_segmenter(split, shared_data, cfg, opts=RUN)["finished"]
    for wa, wb in zip(head.weights, SegmenterHead.load(split).weights, strict=True):
        np.testing.assert_array_equal(wa, wb)


def test_paper_protocol_trains_on_balanced_random_negatives(
    shared_data: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    adj = _train_all(tmp_path / "adj", shared_data, cache)
    pap = _train_all(tmp_path / "pap", shared_data, cache, protocol="paper")
    assert pap["config"]["protocol"] == "paper"
    # Every same-paragraph pair once with label 1 and once beside a random negative.
    assert pap["train_pairs"] % 2 == 0 and pap["train_pairs"] != adj["train_pairs"]
    assert 0.0 <= pap["table_x"]["all"]["acc_paper_protocol"] <= 1.0
    a, b = SegmenterHead.load(tmp_path / "adj"), SegmenterHead.load(tmp_path / "pap")
    assert not np.array_equal(a.weights[0], b.weights[0])


def test_unknown_protocol_is_a_config_error(shared_data: Path, tmp_path: Path) -> None:
    from ragsieve.errors import ConfigError

    with pytest.raises(ConfigError, match="protocol"):
        train_segmenter(tmp_path / "x", shared_data, _cfg(protocol="loose"), ["all"])
