"""The answer line (docs/llm.md, "The answer line"): for the packaged local readers the
tagger's answer span answers, unless the question asks yes or no or picks an option, and the
LLM's reply rides beside it; a question that asks which of two ("..., A or B?") is answered by
the option the reply names, a yes/no one by the yes or no it says; a reader that did not ask
for it keeps its reply. The real shipped tagger over the sample corpus, the real SmolLM2
through llama.cpp, and the real OpenAI client against a stand-in endpoint (a remote model
cannot run here)."""

from __future__ import annotations

from typing import Any

import pytest
from scripted_llm import scripted_llm

from ragsieve.index import Index
from ragsieve.llm import get_llm
from ragsieve.methods import get_method
from ragsieve.methods.answer_line import (
    choice_options,
    chosen_option,
    is_yes_no,
    said_yes_no,
    span_answers,
    span_first,
)
from ragsieve.types import SourceSpan

pytestmark = pytest.mark.integration

QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


def test_yes_no_questions_by_their_first_word() -> None:
    for q in ("Are both bands from Wales?", "did he win?", "  Is it 1822?", "Was Ada first?"):
        assert is_yes_no(q), q
    for q in ("Which band is older?", "When was it?", "Who did it?", "Island of what?", ""):
        assert not is_yes_no(q), q
    # An auxiliary first, then a wh-word: a name, not yes or no (a dev question).
    assert not is_yes_no("Will Ferrell had a role in the 2010 film directed by whom?")
    assert not is_yes_no("Is the director of Up born in which city?")
    # A wh-word that opens a relative clause asks nothing (a techdocs dev question, "No").
    assert is_yes_no("Can a negated pattern re-include a file whose parent directory is excluded?")
    assert is_yes_no("Do both films have directors who are from the same country?")
    assert not is_yes_no("Can Valgrind attach to a running program, and which tool can then?")
    assert not is_yes_no("Is the capital of Peru, where?")
    # An auxiliary first, then "or": it asks which of the two.
    assert not is_yes_no("Was Ada or Bob born first?")
    assert not is_yes_no("Is it 1822 or 1823?") and is_yes_no("Is it ordinary?")


def test_the_yes_or_no_a_reply_says() -> None:
    assert said_yes_no("The answer is no. Both came from Peru.") == "no"
    assert said_yes_no("  YES, both are.") == "yes"
    assert said_yes_no("No, Qingyang and Yixing are not; yes, I know.") == "no"  # the first
    assert said_yes_no("Both are in Jiangxi. No doubt.") is None  # the first sentence only
    assert said_yes_no("I don't know.") is None and said_yes_no("Nobody knows.") is None


def test_the_span_answers_where_it_exists_and_the_question_is_not_yes_no() -> None:
    span = SourceSpan("1822", 0.4, "d", "d#s0", 31, 35, "Stone")
    assert span_answers(QUESTION, span)
    assert not span_answers("Did he announce it in 1822?", span)
    assert not span_answers(QUESTION, None)
    assert not span_answers(QUESTION, SourceSpan(" ", 0.9, "d", "d#s0", 31, 32, "Stone"))


def test_choice_questions_and_their_two_options() -> None:
    q = "Which director worked in more countries, Robert Butler or Bob Clark?"
    assert choice_options(q) == ("Robert Butler", "Bob Clark")
    assert choice_options('Which came first, "Up" or “Cars”?') == ("Up", "Cars")
    assert choice_options("Which is older, A, B or C?") == ("B", "C")  # after the last comma
    assert choice_options("Who won, Ann or Bo or Cy?") == ("Ann or Bo", "Cy")  # the last " or "
    assert choice_options("Was it, in the end, Ada or Bob?") == ("Ada", "Bob")  # not yes/no
    for q in (
        "Which have stronger structures the father or son mold?",  # no comma
        "What power does each national or regional church possess?",
        "Which one, A or B.",  # not a question
        "Which one, A or ?",  # an empty option
        "Which one, the first of the nine long words in this list or B?",  # nine words
    ):
        assert choice_options(q) is None, q


def test_the_option_the_reply_names_first() -> None:
    opts = ("Robert Butler", "Bob Clark")
    assert chosen_option("Bob Clark was a director, and Robert Butler too.", opts) == "Bob Clark"
    assert chosen_option("ROBERT BUTLER worked in more.", opts) == "Robert Butler"
    assert chosen_option("Mika Clarkson did.", opts) is None  # whole words only
    assert chosen_option("I don't know.", opts) is None
    assert chosen_option("The Ruichang one.", ("Ruichang", "Ruichang Port")) == "Ruichang"
    assert chosen_option("Ruichang Port.", ("Ruichang", "Ruichang Port")) == "Ruichang Port"
    assert chosen_option("It is C++, not C.", ("C", "C++")) == "C++"


def test_the_packaged_reader_answers_with_the_span(plain: Index, smollm2: Any) -> None:
    assert span_first(smollm2)
    m = get_method("tagger", plain)
    r = m.retrieve([QUESTION])[0]
    ans = m.answer(r, smollm2, max_tokens=24)
    assert r.span is not None and "1822" in r.span.text
    assert ans.text == r.span.text and ans.span == r.span and ans.line.kind == "span"
    assert isinstance(ans.reply, str) and ans.reply.strip()
    assert ans.usage.prompt_tokens > 0  # the reader was still asked: its reply rides beside
    out = ans.to_json()
    assert (out["answer"], out["reply"]) == (r.span.text, ans.reply)
    # Yes or no: the span cannot say it; the line is the yes or no the reply says.
    yes_no = m.ask("Did Champollion announce the decipherment of hieroglyphs in 1822?", smollm2)
    assert yes_no.span is not None and yes_no.line.kind == "yes-no"
    assert yes_no.text == said_yes_no(yes_no.reply or "") and yes_no.text in ("yes", "no")
    assert yes_no.text != yes_no.reply  # the whole reply rides beside
    # A reply that says neither stays the line.
    neither = m.ask("Is the Rosetta Stone made of granodiorite?", smollm2)
    assert said_yes_no(neither.reply or "") is None and neither.line.kind == "reply"
    assert neither.text == neither.reply
    # A multiple-choice question: the reply picks the option.
    mc = m.answer(r, smollm2, options=["1799", "1822"], max_tokens=8)
    assert mc.line.kind == "reply" and mc.text == mc.reply
    # Which of two? The line is the option the reply names; the span and the reply ride beside.
    choice = "Who announced the decipherment of hieroglyphs, Thomas Young or Champollion?"
    which = m.ask(choice, smollm2, max_tokens=24)
    assert which.line.kind == "choice" and which.text == "Champollion"
    assert "Champollion" in (which.reply or "") and "Young" not in (which.reply or "")
    assert which.span is not None and which.to_json()["answer"] == "Champollion"


def test_readers_that_did_not_ask_keep_their_reply(plain: Index, scripted: Any) -> None:
    m = get_method("tagger", plain)
    r = m.retrieve([QUESTION])[0]
    off = get_llm("local", n_ctx=2048, span_first=False)
    choice = "Who announced the decipherment of hieroglyphs, Thomas Young or Champollion?"
    try:
        ans = m.answer(r, off, max_tokens=24)
        whole = m.ask(choice, off, max_tokens=24)
    finally:
        off.close()
    # The same reply that names an option: a reader that did not ask keeps all of it.
    assert "Champollion" in whole.text and whole.text != "Champollion"
    assert whole.text == whole.reply and whole.line.kind == "reply"
    assert not span_first(off) and ans.line.kind == "reply"
    assert ans.text == ans.reply and ans.span == r.span
    # A remote reader (not measured here) keeps its reply too.
    _, url = scripted
    remote = scripted_llm(url)
    assert not span_first(remote)
    ans = m.answer(r, remote)
    assert (ans.text, ans.reply, ans.line.kind) == ("answer 0", "answer 0", "reply")
    # A choice question: a remote reader keeps its reply too.
    got = m.answer(m.retrieve([choice])[0], remote)
    assert (got.text, got.reply, got.line.kind) == ("answer 1", "answer 1", "reply")
    # No LLM: the span is the answer and there is no reply.
    none = m.answer(r, None)
    assert none.text == r.span.text and none.reply is None and none.to_json()["reply"] is None


def test_a_span_from_markdown_is_shown_without_its_markup(tmp_path: Any) -> None:
    """A Markdown (or HTML, read as Markdown) source's link and escapes are not part of the
    line; the span itself keeps the document's characters, where the viewer marks them."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "zstd.md").write_text(
        "# Zstandard\n\nZstandard is a fast lossless compression algorithm. The format is "
        "documented in [RFC8878](https://datatracker.ietf.org/doc/html/rfc8878), and the "
        "reference library is written in C.\n",
        encoding="utf-8",
    )
    idx = Index.create(tmp_path / "idx")
    idx.add_paths([docs])
    a = get_method("tagger", idx).ask("Which RFC documents the Zstandard format?", None)
    assert a.span is not None and "](https://" in a.span.text
    assert a.text == "RFC8878" and a.line.kind == "span" and a.line.text == "RFC8878"
