"""``train-segmenter`` on a few real documents from ../shared/data: frozen head and fine-tuned.

Small samples keep it fast; the point is the code path that reproduces the shipped head
(seeded, so the same inputs give the same weights) and the ``--finetune-embedder`` path that
saves a sentence-transformers folder beside the head, which the SAGE chunker then loads.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ragsieve.segment import sentences_of
from ragsieve.segment.model import SegmenterHead
from ragsieve.segment.sage import SageSegmenter
from ragsieve.segment.train import SegTrainConfig, train_segmenter
from ragsieve.types import Document

pytestmark = pytest.mark.integration

TEXT = (
    "Bees collect nectar from flowers. They turn it into honey inside the hive. "
    "The queen lays the eggs.\n\n"
    "Volcanoes erupt when magma rises. Lava flows down the slopes and cools into rock."
)


def _cfg(**kw: object) -> SegTrainConfig:
    base = dict(
        qasper_papers=2, squality_stories=0, wikitext_articles=1, val_papers=2, epochs=2, seed=5
    )
    return SegTrainConfig(**{**base, **kw})  # type: ignore[arg-type]


def test_frozen_training_is_seeded_and_loadable(shared_data: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    infos = [
        train_segmenter(tmp_path / f"run{i}", shared_data, _cfg(), ["all"], cache_dir=cache)
        for i in range(2)
    ]
    assert infos[0]["train_pairs"] > 100
    row = infos[0]["table_x"]["all"]
    assert 0.0 <= row["acc_natural"] <= 1.0 and 0.0 <= row["boundary_f1"] <= 1.0
    a = SegmenterHead.load(tmp_path / "run0")
    b = SegmenterHead.load(tmp_path / "run1")
    for wa, wb in zip(a.weights, b.weights, strict=True):
        np.testing.assert_array_equal(wa, wb)
    seg = SageSegmenter(model_dir=str(tmp_path / "run0"))
    chunks = seg.segment([Document("d", TEXT)])[0]
    assert chunks and re.sub(r"\s", "", "".join(c.text for c in chunks)) == re.sub(r"\s", "", TEXT)


def test_finetune_embedder_saves_a_usable_pair(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "ft"
    info = train_segmenter(
        out, shared_data, _cfg(finetune_embedder=True, finetune_pairs=64), log=lambda _: None
    )
    assert (out / "embedder").is_dir() and (out / "head.npz").is_file()
    assert info["train_pairs"] == 64
    assert "all, fine-tuned embedder" in info["table_x"]
    head = SegmenterHead.load(out)
    assert Path(head.embedder) == out / "embedder"  # resolved relative to the folder
    seg = SageSegmenter(model_dir=str(out))
    scores = seg.pair_scores([sentences_of(Document("d", TEXT))])[0]
    assert scores.shape == (4,) and np.all((scores >= 0) & (scores <= 1))


def test_paper_protocol_trains_on_balanced_random_negatives(
    shared_data: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    adj = train_segmenter(tmp_path / "adj", shared_data, _cfg(), ["all"], cache_dir=cache)
    pap = train_segmenter(
        tmp_path / "pap", shared_data, _cfg(protocol="paper"), ["all"], cache_dir=cache
    )
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
