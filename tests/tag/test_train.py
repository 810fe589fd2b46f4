"""``train-tagger`` end to end on a few real examples: data splits, a time-limited run that
resumes from its checkpoint, export to int8 ONNX that the inference class loads."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ragsieve.tag.data import (
    IRCOT_HELD_OUT,
    SQUAD_HELD_OUT_ARTICLES,
    SourceSizes,
    build_examples,
    ircot,
    squad,
)
from ragsieve.tag.model import OnnxTagger
from ragsieve.tag.train import CHECKPOINT, TaggerTrainConfig, train

pytestmark = pytest.mark.integration

TINY = SourceSizes(hotpot=2, hotpot_evidence=4, squad=3, ircot=2, musique=2, qasper=2, msmarco=3)


def test_splits_never_read_the_benchmark_questions(shared_data: Path) -> None:
    data = json.loads((shared_data / "squad/dev-v1.1.json").read_text("utf-8"))["data"]
    held_q = {
        qa["question"].strip()
        for a in [data[i] for i in SQUAD_HELD_OUT_ARTICLES]
        for p in a["paragraphs"]
        for qa in p["qas"]
    }
    ex = squad(shared_data, 10_000, random.Random(0))
    assert ex and not {e.question for e in ex} & held_q
    rows = [
        json.loads(x)
        for x in (shared_data / "hotpotqa/hotpot_dev_subsampled500_ircot.jsonl").open()
    ]
    held = {rows[i]["question_text"].strip() for i in IRCOT_HELD_OUT}
    assert not {e.question for e in ircot(shared_data, 300, random.Random(0))} & held
    amor = {
        json.loads(x)["question"].strip()
        for x in (shared_data / "hotpotqa/hotpot_dev_sample100_amor_withretrieval.jsonl").open()
    }
    every = build_examples(shared_data, TINY, 13)
    assert not {e.question for e in every} & amor
    assert {e.split for e in every} == {"train", "dev"}
    for e in every:
        assert len(e.labels) == len(e.sentences) and e.passage_label in (0, 1)


def test_train_stops_at_the_time_limit_and_resumes(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "tagger"
    cfg = TaggerTrainConfig(sizes=TINY, time_limit_min=1e-4, checkpoint_every=1, dev_per_source=8)
    first = train(out, shared_data, cfg, log=lambda m: None)
    assert not first["train"]["finished"] and (out / CHECKPOINT).is_file()
    done = first["train"]["steps"]
    logs: list[str] = []
    cfg2 = TaggerTrainConfig(sizes=TINY, checkpoint_every=1, dev_per_source=8)
    second = train(out, shared_data, cfg2, log=logs.append)
    assert any(f"resuming at step {done}/" in m for m in logs)
    assert second["train"]["finished"] and not (out / CHECKPOINT).exists()
    assert second["train"]["steps"] == second["train"]["scheduled_steps"]
    assert (out / "model.onnx").stat().st_size < 30e6
    card = (out / "MODEL_CARD.md").read_text("utf-8")
    assert "hotpotqa_train100_distractor.json" in card and "Dev split" in card
    info = json.loads((out / "training_info.json").read_text("utf-8"))
    assert info["threshold"] in {float(t) for t in info["dev"]["hotpot"]["by_threshold"]}
    tagged = OnnxTagger(out).tag("Who?", [("T", ["One sentence.", "Two sentences."])])
    assert tagged[0].probs.shape == (2,)
