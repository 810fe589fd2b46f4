"""The stacked keep decision: its features and the shipped stack.json (its fit on dev:
``tests/tag/fit/test_stack.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tagger_helpers import PASSAGES, QUESTION, TEMPLE, bare

from ragsieve.data import find_data_dir
from ragsieve.errors import ConfigError
from ragsieve.tag.fit.stack import dev_pools
from ragsieve.tag.model import OnnxTagger, shipped_model_dir
from ragsieve.tag.prune import prune, readings
from ragsieve.tag.stack import FEATURES, STACK_FILE, features, load_stacker


@pytest.fixture(scope="module")
def tagger() -> OnnxTagger:
    return OnnxTagger()


def test_the_shipped_model_decides_with_its_stacker(tagger: OnnxTagger) -> None:
    st = tagger.stacker
    assert st is not None and 0 < st.threshold < 1 and st.features == FEATURES
    stacked = prune(tagger, QUESTION, PASSAGES, bare())
    raw = prune(tagger, QUESTION, PASSAGES, bare(stack=False))
    assert stacked.trace["decision"] == "stack" and stacked.threshold == st.threshold
    # the stacker's floor on the passage head, below the raw rule's passage threshold
    assert stacked.passage_threshold == st.passage_threshold < raw.passage_threshold
    assert raw.trace["decision"] == "threshold" and raw.threshold == tagger.threshold
    # the stacked probabilities are the stacker's, from the same two readings
    r = readings(tagger, QUESTION, PASSAGES)
    want = st.keep_probs(r.first, r.merged, r.bridge)
    for t, w in zip(stacked.tagged, want, strict=True):
        assert np.allclose(t.probs, w)
    assert all(k.prob >= st.threshold for k in stacked.kept[1:]) or len(stacked.kept) == 1
    assert stacked.kept and all(k.passage != 0 for k in stacked.kept)  # not the Eiffel Tower


@pytest.fixture(scope="module")
def hotpot() -> tuple[str, list[tuple[str, list[str]]]]:
    """A held-out HotpotQA train question with its ten paragraphs (a bridge hop happens)."""
    q = dev_pools(find_data_dir(), squad=1, limit=1)["hotpot"][0]
    return q["question"], [(t, s) for t, s, _ in q["pool"]]


def test_features_are_the_readings(
    tagger: OnnxTagger, hotpot: tuple[str, list[tuple[str, list[str]]]]
) -> None:
    question, passages = hotpot
    first, merged, bridge, hop, _ = readings(tagger, question, passages)
    assert bridge is not None and bridge == hop["hop"]["bridge_passage"]
    mats = features(first, merged, bridge)
    col = {name: i for i, name in enumerate(FEATURES)}
    rel = np.array([t.relevance for t in merged])
    for p, (m, a, b) in enumerate(zip(mats, first, merged, strict=True)):
        assert m.shape == (len(b.probs), len(FEATURES))
        logit = lambda x: np.log(np.clip(x, 1e-4, 1 - 1e-4) / (1 - np.clip(x, 1e-4, 1 - 1e-4)))  # noqa: E731
        assert np.allclose(m[:, col["sentence"]], logit(a.probs))
        assert np.allclose(m[:, col["sentence_hop"]], logit(b.probs))
        assert (m[:, col["bridge"]] == float(p == bridge)).all()
        assert (m[:, col["top_passage"]] == float(rel[p] == rel.max())).all()
        assert sorted(m[:, col["sentence_rank"]].tolist()) == list(range(len(b.probs)))
    hop1 = readings(tagger, question, passages, hops=1)
    assert hop1.trace == {} and hop1.bridge is None
    assert hop1.first is hop1.merged  # one reading: the merged one is the first


def test_the_open_point_is_opt_in(tagger: OnnxTagger) -> None:
    """The open operating point (chosen on dev with no budget, against naive's whole pool)
    sits below the default one and keeps every sentence that one keeps; it is used only when
    asked for."""
    st = tagger.stacker
    assert st is not None and st.open_threshold is not None
    assert 0 < st.open_threshold < st.threshold
    assert st.threshold_for(False) == st.threshold and st.threshold_for(True) == st.open_threshold
    capped = prune(tagger, QUESTION, PASSAGES, bare())
    open_ = prune(tagger, QUESTION, PASSAGES, bare(open_point=True))
    assert open_.threshold == st.open_threshold and capped.threshold == st.threshold
    keys = lambda out: {(k.passage, k.sentence) for k in out.kept}  # noqa: E731
    assert keys(capped) <= keys(open_)
    # an explicit threshold wins over either point
    assert prune(tagger, QUESTION, PASSAGES, bare(threshold=0.5)).threshold == 0.5


def test_headings_stay_out_of_the_stacked_context(tagger: OnnxTagger) -> None:
    passage = ("Temple", ["## Career", *TEMPLE])
    out = prune(tagger, QUESTION, [passage, PASSAGES[1]], bare(threshold=0.01))
    assert out.tagged[0].probs[0] == 0.0
    assert all(k.text != "## Career" for k in out.kept)


def test_stacker_file_round_trip_and_bad_files(tmp_path: Path) -> None:
    st = load_stacker(shipped_model_dir())
    assert st is not None
    st.save(tmp_path, {"note": "copy"})
    assert load_stacker(tmp_path) == st
    data = json.loads((tmp_path / STACK_FILE).read_text("utf-8"))
    # a stack.json from before the open point: the budgeted threshold serves both
    (tmp_path / STACK_FILE).write_text(json.dumps({**data, "open_threshold": None}), "utf-8")
    old = load_stacker(tmp_path)
    assert old is not None and old.threshold_for(True) == old.threshold == st.threshold
    assert load_stacker(tmp_path / "nowhere") is None
    data = json.loads((tmp_path / STACK_FILE).read_text("utf-8"))
    (tmp_path / STACK_FILE).write_text(json.dumps({**data, "features": ["sentence"]}), "utf-8")
    with pytest.raises(ConfigError, match="refit"):
        load_stacker(tmp_path)
    (tmp_path / STACK_FILE).write_text("{not json", "utf-8")
    with pytest.raises(ConfigError, match="cannot read"):
        load_stacker(tmp_path)
    (tmp_path / STACK_FILE).write_text(json.dumps({"mean": [0]}), "utf-8")
    with pytest.raises(ConfigError, match="malformed"):
        load_stacker(tmp_path)


def test_a_model_without_a_stacker_uses_the_raw_rule(tmp_path: Path) -> None:
    for f in shipped_model_dir().iterdir():
        if f.name != STACK_FILE and f.is_file():
            (tmp_path / f.name).symlink_to(f)
    plain = OnnxTagger(tmp_path)
    assert plain.stacker is None
    # ``stack`` (on by default) means the stacker where the model has one
    assert prune(plain, QUESTION, PASSAGES, bare()).trace["decision"] == "threshold"
    assert prune(plain, QUESTION, PASSAGES, bare(stack=True)).trace["decision"] == "threshold"
