"""The ``tagger`` method and ``full`` with the tagger as its scorer (the default), on real
indexes of the sample corpus with the shipped tagger."""

from __future__ import annotations

from typing import Any

import pytest
from scripted_llm import scripted_llm

from ragsieve.errors import ConfigError
from ragsieve.index import Index
from ragsieve.methods import build_method, get_method, known_methods
from ragsieve.methods.full import FullConfig
from ragsieve.methods.tagger import TaggerConfig

pytestmark = pytest.mark.integration

QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"
YEAR = "In 1822 he announced"


class _AnyInt:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, int)


ANY_INT = _AnyInt()


def _kept_are_above_threshold(r: Any) -> None:
    th = r.trace["selection"]["threshold"]
    probs = sorted((s.score for s in r.candidates), reverse=True)
    for s in r.context.chunks:
        assert s.score >= th or s.score == probs[0]


def test_tagger_method_keeps_the_pronoun_sentence(plain: Index) -> None:
    assert "tagger" in known_methods()
    r = get_method("tagger", plain).retrieve([QUESTION])[0]
    assert YEAR in r.context.text
    assert r.trace["method"] == "tagger" and set(r.timings) >= {"retrieve", "tag", "select"}
    assert all(c.chunk.sent_end - c.chunk.sent_start == 1 for c in r.context.chunks)
    _kept_are_above_threshold(r)
    # Far fewer tokens than the naive top-10 it read.
    naive = get_method("naive", plain).retrieve([QUESTION])[0]
    assert r.context.n_tokens < 0.5 * naive.context.n_tokens
    assert {s.chunk.doc_id for s in r.candidates} == {s.chunk.doc_id for s in naive.candidates}


def test_tagger_threshold_budget_and_passage_unit(plain: Index) -> None:
    loose = get_method("tagger", plain, threshold=0.02).retrieve([QUESTION])[0]
    strict = get_method("tagger", plain, threshold=0.9).retrieve([QUESTION])[0]
    assert {s.chunk.id for s in strict.context.chunks} <= {s.chunk.id for s in loose.context.chunks}
    capped = get_method("tagger", plain, threshold=0.02, budget=30).retrieve([QUESTION])[0]
    assert 0 < capped.context.n_tokens <= 30
    wide = get_method("tagger", plain, unit="passage").retrieve([QUESTION])[0]
    kept_docs = {s.chunk.doc_id for s in wide.context.chunks}
    for doc in kept_docs:  # a kept passage comes whole: all its sentences
        members = [s for s in wide.candidates if s.chunk.doc_id == doc]
        chosen = [s for s in wide.context.chunks if s.chunk.doc_id == doc]
        assert len(chosen) >= 1 and len(members) >= len(chosen)
    assert YEAR in wide.context.text


def test_full_defaults_to_the_tagger(sentences: Index) -> None:
    assert FullConfig().scorer == "tagger"
    r = get_method("full", sentences).retrieve([QUESTION])[0]
    assert r.trace["scorer"] == "tagger" and YEAR in r.context.text
    _kept_are_above_threshold(r)
    ens = get_method("full", sentences, scorer="ensemble").retrieve([QUESTION])[0]
    assert ens.trace["scorer"] == "reranker" and ens.trace["reranker"] == "ensemble"
    capped = get_method("full", sentences, budget=60, threshold=0.05).retrieve([QUESTION])[0]
    assert 0 < capped.context.n_tokens <= 60
    wide = get_method("full", sentences, unit="passage").retrieve([QUESTION])[0]
    assert YEAR in wide.context.text and wide.context.n_tokens >= r.context.n_tokens


def test_bad_tagger_options() -> None:
    """The methods' own options; every tagger setting's bounds: tests/tag/test_settings.py."""
    with pytest.raises(ConfigError, match="unit"):
        TaggerConfig(unit="word")
    with pytest.raises(ConfigError, match="mcts"):
        FullConfig(order="mcts")


def test_lead_option_adds_first_sentences_through_the_method(plain: Index) -> None:
    """``tagger`` (lead carrying on by default): the context holds what ``tagger[lead=false]``
    holds, plus the first sentence of the passage whose kept sentence says "The probes ..."
    (``lead_added`` in the trace), in source order."""
    q = "How far away is Voyager 1?"
    base = build_method("tagger[lead=false]", plain).retrieve([q])[0]
    lead = get_method("tagger", plain).retrieve([q])[0]
    ids = [s.chunk.id for s in base.context.chunks]
    got = [s.chunk.id for s in lead.context.chunks]
    added = [i for i in got if i not in ids]
    assert set(ids) < set(got) and lead.trace["selection"]["lead_added"] == len(added) >= 1
    assert "lead_added" not in base.trace["selection"]
    for i in added:  # a passage's first sentence, before its kept one
        assert i.endswith("#s0") and got.index(i) < max(got.index(j) for j in ids)


def test_full_answers_once_by_default(sentences: Index, scripted: Any) -> None:
    script, url = scripted
    ans = get_method("full", sentences).ask(QUESTION, scripted_llm(url))
    assert script.kinds() == ["answer"] and "feedback" not in ans.trace
    assert ans.trace["llm"]["call_tokens"] == [
        {"call": "answer", "prompt": 100, "completion": 3, "estimate": ANY_INT}
    ]


def test_feedback_with_the_tagger_moves_its_keep_rule(sentences: Index, scripted: Any) -> None:
    script, url = scripted
    script.feedback = [
        "Evaluation Score: 5\nContext Adjustment: 1",
        "Evaluation Score: 6\nContext Adjustment: -1",
    ]
    m = build_method("full[feedback=true,max_rounds=2]", sentences)
    r = m.retrieve([QUESTION])[0]
    first = {s.chunk.id for s in r.context.chunks}
    # the feedback's cut starts at the tag stage's own point: it reproduces the first context
    cut = m.selector_for(1).select(QUESTION, r.candidates)
    assert {s.chunk.id for s in cut.context.chunks} == first
    ans = m.answer(r, scripted_llm(url))
    fb = ans.trace["feedback"]
    assert script.kinds() == ["answer", "feedback", "answer", "feedback"]
    n = len(first)
    assert [x["n_chunks"] for x in fb["rounds"]] == [n, n + 1]
    # "More context" added the most probable sentence the tagger had left out.
    added = set(fb["rounds"][1]["selected"]) - first
    left_out = [s for s in r.candidates if s.chunk.id not in first]
    assert added == {max(left_out, key=lambda s: s.score).chunk.id}
    assert ans.trace["selection"]["selector"] == "tagger"
    assert (fb["stop"], fb["chosen_round"]) == ("max_rounds", 2)
    assert ans.usage.prompt_tokens == 100 + 200 + 101 + 201
