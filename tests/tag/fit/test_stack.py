"""The stacked keep decision fitted on dev (``python -m ragsieve.tag.fit.stack``): a real fit
on a few dev questions, and its bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_one_line_error, run

from ragsieve.data import find_data_dir
from ragsieve.tag.fit.stack import GRID, OPEN_GRID, dev_pools, fit_stack
from ragsieve.tag.model import OnnxTagger, shipped_model_dir
from ragsieve.tag.prune import readings
from ragsieve.tag.stack import STACK_FILE, Stacker


@pytest.fixture(scope="module")
def tagger() -> OnnxTagger:
    return OnnxTagger()


def test_fit_stack_on_dev_pools(tagger: OnnxTagger) -> None:
    """A real fit on a few dev questions (HotpotQA held-out train and SQuAD train dev
    articles): weights that rank gold sentences above the others, and a threshold of the grid
    chosen by the answer-recall rule on out-of-fold predictions."""
    sets = dev_pools(find_data_dir(), squad=6, limit=6)
    stacker, report = fit_stack(tagger, sets, folds=3, log=lambda *_: None)
    assert stacker.threshold in {float(c) for c in GRID} and report["chosen"] == stacker.threshold
    assert set(report["cv"]) == {"hotpot", "squad"}
    assert len(report["cv"]["hotpot"]) == len(GRID)
    # the open point: no budget, chosen against naive's whole pool on its own grid
    assert stacker.open_threshold in OPEN_GRID
    assert report["open"]["chosen"] == stacker.open_threshold
    assert len(report["open"]["cv"]["squad"]) == len(OPEN_GRID)
    for n in sets:
        assert report["open"]["naive"][n]["tokens"] > report["naive"][n]["tokens"]
    gold, other = [], []
    for qs in sets.values():
        for q in qs:
            passages = [(t, s) for t, s, _ in q["pool"]]
            r = readings(tagger, q["question"], passages)
            for probs, (_, _, ys) in zip(
                stacker.keep_probs(r.first, r.merged, r.bridge), q["pool"], strict=True
            ):
                for p, y in zip(probs, ys, strict=True):
                    (gold if y else other).append(p)
    assert np.mean(gold) > np.mean(other) + 0.1
    assert isinstance(stacker, Stacker)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--model", "{tmp}/no-model"], "model.onnx is missing"),
        (["--squad", "0"], "--squad must be a positive integer"),
        (["--limit", "-1"], "--limit must be a positive integer"),
        (["--squad", "many"], "invalid int value"),
        (["--bogus"], "unrecognized arguments"),
    ],
)
def test_fit_stack_bad_input_is_one_line_and_keeps_the_stacker(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    kept = (shipped_model_dir() / STACK_FILE).read_bytes()
    (tmp_path / STACK_FILE).write_bytes(kept)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args] + ["--out", str(tmp_path)]
    p = run(*argv, module="ragsieve.tag.fit.stack")
    assert_one_line_error(p, 2, fragment)
    assert (tmp_path / STACK_FILE).read_bytes() == kept
