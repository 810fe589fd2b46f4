"""The tagger's second, wider reading (:mod:`ragsieve.methods.widen`) on the real sample index
with the shipped tagger; the reader is the scripted OpenAI-compatible stand-in on 127.0.0.1
(reached through the real client), so a reply of "I don't know" can be ordered."""

from __future__ import annotations

from typing import Any

import pytest
from scripted_llm import scripted_llm

from ragsieve.errors import ConfigError
from ragsieve.index import Index
from ragsieve.methods import build_method
from ragsieve.methods.widen import wider_context

pytestmark = pytest.mark.integration

QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


def _passage(s: Any) -> float:
    return s.scores["passage"]


def test_wider_context_adds_whole_passages_within_the_budget(plain: Index) -> None:
    r = build_method("tagger", plain).retrieve([QUESTION])[0]
    first = {s.chunk.id for s in r.context.chunks}
    wide = wider_context(r.context, r.candidates, None, fill=False)
    assert wide is not None
    ids = [s.chunk.id for s in wide.chunks]
    assert first < set(ids) and len(ids) == len(set(ids))
    own = {_passage(s) for s in r.context.chunks}
    # every sentence of the context's passages, and nothing from another passage
    assert set(ids) == {s.chunk.id for s in r.candidates if _passage(s) in own}
    # filled: the other passages too, after the context's own
    filled = wider_context(r.context, r.candidates, None, fill=True)
    assert filled is not None and len(filled.chunks) == len(r.candidates)
    assert [s.chunk.id for s in filled.chunks][: len(ids)] == ids
    # a budget keeps the first context and adds only passages that fit whole
    tight = wider_context(r.context, r.candidates, r.context.n_tokens, fill=True)
    assert tight is None
    room = r.context.n_tokens + 40
    some = wider_context(r.context, r.candidates, room, fill=True)
    if some is not None:
        assert first <= {s.chunk.id for s in some.chunks} and some.n_tokens <= room


def test_i_dont_know_reads_again_over_whole_passages(plain: Index, scripted: Any) -> None:
    script, url = scripted
    script.answers = ["I don't know.", "1822"]
    m = build_method("tagger[widen=passages]", plain)
    r = m.retrieve([QUESTION])[0]
    ans = m.answer(r, scripted_llm(url))
    assert script.kinds() == ["answer", "answer"]
    n_first, n_second = (c["chunks"] for c in script.calls)
    assert n_first == len(r.context.chunks) < n_second == len(ans.context.chunks)
    assert ans.text == "1822" and ans.line.text == "1822"
    w = ans.trace["widen"]
    assert (w["how"], w["stop"], w["first_reply"]) == ("passages", "answered", "I don't know.")
    assert w["first_selected"] == [s.chunk.id for s in r.context.chunks]
    assert w["context_tokens"] == ans.context.n_tokens > w["first_context_tokens"]
    # both calls are counted: the stand-in's fixed token counts, 100 + 101 and 3 + 3
    assert (ans.usage.prompt_tokens, ans.usage.completion_tokens) == (201, 6)
    assert ans.trace["llm"]["prompt_tokens"] == 201
    assert [c["call"] for c in ans.trace["llm"]["call_tokens"]] == ["answer", "answer"]


def test_a_reply_that_answers_is_read_once(plain: Index, scripted: Any) -> None:
    script, url = scripted
    script.answers = ["1822"]
    ans = build_method("tagger[widen=fill]", plain).ask(QUESTION, scripted_llm(url))
    assert script.kinds() == ["answer"] and "widen" not in ans.trace
    assert ans.usage.prompt_tokens == 100


def test_a_second_i_dont_know_abstains(plain: Index, scripted: Any) -> None:
    script, url = scripted
    script.answers = ["I don't know."]
    ans = build_method("tagger[widen=fill]", plain).ask(QUESTION, scripted_llm(url))
    assert script.kinds() == ["answer", "answer"]
    assert ans.trace["widen"]["stop"] == "answered"
    assert ans.line.abstained and ans.line.text is None


def test_off_answers_once_and_a_context_with_nothing_to_add_stops(
    plain: Index, scripted: Any
) -> None:
    script, url = scripted
    script.answers = ["I don't know."]
    ans = build_method("tagger[widen=off]", plain).ask(QUESTION, scripted_llm(url))
    assert script.kinds() == ["answer"] and "widen" not in ans.trace
    script.calls.clear()
    # the budget already spent on the first context: no passage fits whole, no second call
    n = build_method("tagger", plain).retrieve([QUESTION])[0].context.n_tokens
    m = build_method(f"tagger[widen=passages,budget={n}]", plain)
    ans = m.ask(QUESTION, scripted_llm(url))
    assert script.kinds() == ["answer"]
    assert ans.trace["widen"] == {"how": "passages", "stop": "unchanged"}


def test_a_bad_widen_is_a_config_error(plain: Index) -> None:
    with pytest.raises(ConfigError, match="widen must be one of off, passages, fill"):
        build_method("tagger[widen=more]", plain)
