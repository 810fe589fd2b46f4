"""The answer line (docs/llm.md, "The answer line"): for the packaged local readers the
tagger's answer span answers, unless the question asks yes or no or picks an option, and the
LLM's reply rides beside it; a reader that did not ask for it keeps its reply. The real
shipped tagger over the sample corpus, the real SmolLM2 through llama.cpp, and the real
OpenAI client against a stand-in endpoint (a remote model cannot run here)."""

from __future__ import annotations

from typing import Any

import pytest
from scripted_llm import scripted_llm

from ragsieve.index import Index
from ragsieve.llm import get_llm
from ragsieve.methods import get_method
from ragsieve.methods.answer_line import is_yes_no, span_answers, span_first
from ragsieve.types import SourceSpan

pytestmark = pytest.mark.integration

QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


def test_yes_no_questions_by_their_first_word() -> None:
    for q in ("Are both bands from Wales?", "did he win?", "  Is it 1822?", "Was Ada first?"):
        assert is_yes_no(q), q
    for q in ("Which band is older?", "When was it?", "Who did it?", "Island of what?", ""):
        assert not is_yes_no(q), q


def test_the_span_answers_where_it_exists_and_the_question_is_not_yes_no() -> None:
    span = SourceSpan("1822", 0.4, "d", "d#s0", 31, 35, "Stone")
    assert span_answers(QUESTION, span)
    assert not span_answers("Did he announce it in 1822?", span)
    assert not span_answers(QUESTION, None)
    assert not span_answers(QUESTION, SourceSpan(" ", 0.9, "d", "d#s0", 31, 32, "Stone"))
    assert not span_answers(QUESTION, span, point=0.5)  # a point above its score


def test_the_packaged_reader_answers_with_the_span(plain: Index, smollm2: Any) -> None:
    assert span_first(smollm2)
    m = get_method("tagger", plain)
    r = m.retrieve([QUESTION])[0]
    ans = m.answer(r, smollm2, max_tokens=24)
    assert r.span is not None and "1822" in r.span.text
    assert ans.text == r.span.text and ans.span == r.span and ans.trace["answer"] == "span"
    assert isinstance(ans.reply, str) and ans.reply.strip()
    assert ans.usage.prompt_tokens > 0  # the reader was still asked: its reply rides beside
    out = ans.to_json()
    assert (out["answer"], out["reply"]) == (r.span.text, ans.reply)
    # Yes or no: the span cannot say it, the reply answers.
    yes_no = m.ask("Did Champollion announce the decipherment of hieroglyphs in 1822?", smollm2)
    assert yes_no.span is not None and yes_no.trace["answer"] == "reply"
    assert yes_no.text == yes_no.reply
    # A multiple-choice question: the reply picks the option.
    mc = m.answer(r, smollm2, options=["1799", "1822"], max_tokens=8)
    assert mc.trace["answer"] == "reply" and mc.text == mc.reply


def test_readers_that_did_not_ask_keep_their_reply(plain: Index, scripted: Any) -> None:
    m = get_method("tagger", plain)
    r = m.retrieve([QUESTION])[0]
    off = get_llm("local", n_ctx=2048, span_first=False)
    try:
        ans = m.answer(r, off, max_tokens=24)
    finally:
        off.close()
    assert not span_first(off) and ans.trace["answer"] == "reply"
    assert ans.text == ans.reply and ans.span == r.span
    # A remote reader (not measured here) keeps its reply too.
    _, url = scripted
    remote = scripted_llm(url)
    assert not span_first(remote)
    ans = m.answer(r, remote)
    assert (ans.text, ans.reply, ans.trace["answer"]) == ("answer 0", "answer 0", "reply")
    # No LLM: the span is the answer and there is no reply.
    none = m.answer(r, None)
    assert none.text == r.span.text and none.reply is None and none.to_json()["reply"] is None
