"""The local readers do not loop (issue 44 item 5): the loop guard of the llama.cpp backend,
and the end of a short answer at its first line.

A user's answer ran to the 256-token cap as "2.5x100k = 2.5x100k = ...". The rule
(:func:`ragsieve.llm.local.loop_cut`) is tested on texts; the guard on the real packaged
SmolLM2 with a prompt of the same kind (memory formulas and a table) that loops without it.
"""

from __future__ import annotations

import pytest

from ragsieve.llm import build_answer_messages, build_feedback_messages, build_judge_messages
from ragsieve.llm.local import LlamaCppLLM, loop_cut
from ragsieve.llm.prompts import is_answer_prompt

# A manual page's formula and its table: greedy SmolLM2 answers with formulas that cycle
# through "1200k + 2xblock size = 1200k + 4xblock size = ..." until the cap.
LOOP_QUESTION = "How much memory does bunzip2 -s need for a 100k block?"
LOOP_CONTEXT = [
    "Decompression uses 100k + (4 x block size), or 100k + (2.5 x block size) with the -s flag.",
    "| Flag | Compress | Decompress | -s |\n| -1 | 1200k | 500k | 350k |\n"
    "| -9 | 7600k | 3700k | 2300k |",
]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # the user's loop: kept up to the end of the first copy of the unit, which starts as far
        # back as the repetition reaches (here at the space before the first "2.5x")
        (
            "The answer is 2.5x100k = 2.5x100k = 2.5x100k = 2.5x100k = 2.5x",
            "The answer is 2.5x100k =",
        ),
        ("I don't know. I don't know. I don't know. I don't", "I don't know. "),
        ("Lutz" + "!" * 40, "Lutz!"),
        # a long unit needs only one repeat (2 copies); the loop starts as far back as the
        # repetition reaches: here at the "." before the first copy's " The"
        (
            "Paris. The capital of France is Paris, the largest city. "
            "The capital of France is Paris, the largest city.",
            "Paris. The capital of France is Paris, the largest city",
        ),
    ],
)
def test_loop_cut_keeps_one_copy(text: str, kept: str) -> None:
    cut = loop_cut(text)
    assert cut is not None
    assert text[:cut] == kept


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Lutz",
        "The capital of Zubrowka is Lutz.",
        "New York, New York",  # a short repeat is a name, not a loop
        "Yes, yes, yes.",
        "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16",  # counting is not repeating
        "100k + (2.5 x block size) = 350k for -1, and 2300k for -9.",
        # a repeat earlier in the reply, not at its end
        "2.5x100k = 2.5x100k = 2.5x100k = 2.5x100k = 2.5x100k = 250k, which is the answer.",
    ],
)
def test_loop_cut_leaves_replies_that_do_not_end_in_a_loop(text: str) -> None:
    assert loop_cut(text) is None


def test_loop_cut_thresholds() -> None:
    unit = "ab = "
    assert loop_cut(unit * 7) is None  # 30 repeated characters: below 32
    assert loop_cut(unit * 8) == len(unit)
    assert loop_cut(unit * 8, min_chars=64) is None
    long_unit = "".join(f"{i} " for i in range(80))  # a 230-character unit
    assert loop_cut(long_unit * 3) is None  # longer than max_period
    assert loop_cut(long_unit * 3, max_period=300) == len(long_unit)


@pytest.mark.integration
def test_guard_stops_a_looping_answer_early(local_llm: LlamaCppLLM) -> None:
    messages = build_answer_messages(LOOP_QUESTION, LOOP_CONTEXT)
    unguarded = LlamaCppLLM(local_llm.model_path, n_ctx=2048, loop_guard=False, short_answer=False)
    try:
        raw = unguarded.generate(messages, max_tokens=256)
    finally:
        unguarded.close()
    # without the guard the reply runs to the cap through a loop
    assert raw.finish_reason == "length"
    assert raw.usage.completion_tokens == 256
    assert loop_cut(raw.text) is not None

    assert local_llm.loop_guard  # the default
    stops = local_llm.loops_stopped
    gen = local_llm.generate(messages, max_tokens=256)
    assert gen.finish_reason == "loop"
    assert local_llm.loops_stopped == stops + 1
    # same greedy tokens up to the loop, then one copy of its unit and no more
    assert raw.text.startswith(gen.text)
    assert len(gen.text) < len(raw.text)
    assert loop_cut(gen.text) is None
    assert gen.usage.completion_tokens < 256
    assert gen.usage.prompt_tokens == raw.usage.prompt_tokens


@pytest.mark.integration
def test_guard_leaves_a_reply_that_does_not_loop_unchanged(local_llm: LlamaCppLLM) -> None:
    messages = build_answer_messages(
        "What is the capital of Zubrowka?",
        ["Zubrowka exports cheese and timber.", "The capital of Zubrowka is Lutz."],
    )
    unguarded = LlamaCppLLM(local_llm.model_path, n_ctx=2048, loop_guard=False, short_answer=False)
    try:
        raw = unguarded.generate(messages, max_tokens=48)
    finally:
        unguarded.close()
    assert local_llm.generate(messages, max_tokens=48) == raw
    assert raw.finish_reason == "stop"
    assert "Lutz" in raw.text


def test_only_answer_prompts_end_at_the_first_line() -> None:
    assert is_answer_prompt(build_answer_messages("Who?", ["Lutz is the capital."]))
    assert is_answer_prompt(build_answer_messages("Which?", ["x"], options=["Lutz", "Paris"]))
    assert not is_answer_prompt([{"role": "user", "content": "Tell me a story."}])
    assert not is_answer_prompt(build_feedback_messages("Who?", ["x"], "Lutz"))
    assert not is_answer_prompt(build_judge_messages("Who?", "x"))
    assert not is_answer_prompt([])


@pytest.mark.integration
def test_short_answer_ends_at_the_first_line(local_llm: LlamaCppLLM) -> None:
    # greedy SmolLM2 answers this with a numbered list over several lines, then repeats it
    messages = build_answer_messages(
        "What are the steps to install the package?",
        ["To install, run ./configure, then make, then make install as root."],
    )
    unguarded = LlamaCppLLM(local_llm.model_path, n_ctx=2048, loop_guard=False, short_answer=False)
    try:
        raw = unguarded.generate(messages, max_tokens=64)
    finally:
        unguarded.close()
    assert "\n" in raw.text.strip()

    assert local_llm.short_answer  # the default
    gen = local_llm.generate(messages, max_tokens=64)
    assert gen.finish_reason == "stop"
    assert gen.text == raw.text[: raw.text.index("\n", 1)]
    assert gen.text.strip() and "\n" not in gen.text
    assert gen.usage.completion_tokens < raw.usage.completion_tokens
    # a stop given by the caller replaces the line end
    assert "\n" in local_llm.generate(messages, max_tokens=64, stop=["zzz"]).text
