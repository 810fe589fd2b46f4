"""The passage head's refit on the tagger's training pools (a few of them here): the folder it
writes, what it changes (the passage relevance) and what it leaves alone (every sentence
probability), and its bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_one_line_error, run
from tagger_helpers import PASSAGES, QUESTION

from ragsieve.data import find_data_dir
from ragsieve.errors import ConfigError
from ragsieve.tag.fit.head import fit_head, head_rows, main, matched_threshold
from ragsieve.tag.fit.pools import train_pools
from ragsieve.tag.model import CONFIG_FILE, OnnxTagger, shipped_model_dir
from ragsieve.tag.stack import STACK_FILE


@pytest.fixture(scope="module")
def refit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("refit") / "tagger"
    assert main(["--out", str(out), "--limit", "4", "--squad", "4"]) == 0
    return out


def test_the_refit_folder_changes_only_the_passage_head(refit: Path) -> None:
    assert not (refit / STACK_FILE).exists()  # the stacker reads the head: refit it next
    conf = json.loads((refit / CONFIG_FILE).read_text("utf-8"))
    info = json.loads((refit / "training_info.json").read_text("utf-8"))["passage_head_refit"]
    assert 0 < conf["passage_threshold"] < 1
    assert info["passage_threshold"] == conf["passage_threshold"]
    assert info["pools"] == {"hotpot": 4, "squad": 4} and info["gold_rows"] > 0
    assert "Passage head refitted" in (refit / "MODEL_CARD.md").read_text("utf-8")
    old, new = OnnxTagger(), OnnxTagger(refit)
    a, b = old.tag(QUESTION, PASSAGES), new.tag(QUESTION, PASSAGES)
    assert all(np.array_equal(x.probs, y.probs) for x, y in zip(a, b, strict=True))
    assert [x.relevance for x in a] != [y.relevance for y in b]
    assert new.stacker is None  # prune decides with the raw rule until the stacker is refitted


def test_rows_cover_both_readings_and_off_topic_passages() -> None:
    tagger = OnnxTagger(pooled=True)
    sets = {n: qs[:2] for n, qs in train_pools(find_data_dir(), 2).items()}
    rows = head_rows(tagger, sets)
    pools = sets["hotpot"] + sets["squad"]
    first = sum(len(q["pool"]) for q in pools)
    assert rows["x"].shape[1] == 384 and rows["first"].sum() == first
    assert len(rows["y"]) > first + 2 * len(pools)  # second readings and off-topic rows too
    assert rows["y"][rows["first"]].sum() == sum(any(g) for q in pools for _, _, g in q["pool"])
    weight, bias, report = fit_head(rows)
    assert weight.shape == (384,) and report["train_auc_new_head"] > 0.5
    pth = matched_threshold(rows, weight, bias, 0.3)
    gold = rows["first"] & (rows["y"] == 1)
    new = 1 / (1 + np.exp(-(rows["x"][gold] @ weight + bias)))
    share_old = np.mean(rows["old"][gold] >= 0.3)
    assert abs(np.mean(new >= pth) - share_old) <= 1 / gold.sum() + 1e-9
    assert matched_threshold(rows, weight, bias, 0.0) == 0.0
    with pytest.raises(ConfigError, match="pooled=True"):
        head_rows(OnnxTagger(), sets)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--model", "{tmp}/no-model"], "model.onnx is missing"),
        (["--squad", "0"], "--squad must be a positive integer"),
        (["--limit", "many"], "invalid int value"),
        (["--model", "{shipped}", "--out", "{shipped}"], "--out must differ from --model"),
    ],
)
def test_bad_input_is_one_line_and_keeps_the_folder(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep").write_text("x")
    argv = [
        a.replace("{tmp}", str(tmp_path)).replace("{shipped}", str(shipped_model_dir()))
        for a in args
    ]
    if "--out" not in argv:
        argv += ["--out", str(out)]
    p = run(*argv, module="ragsieve.tag.fit.head")
    assert_one_line_error(p, 2, fragment)
    assert (out / "keep").read_text() == "x"
