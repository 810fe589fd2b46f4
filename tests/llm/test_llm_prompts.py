"""Prompt builders and the parsers for their replies."""

from __future__ import annotations

import pytest

from ragsieve.llm.prompts import (
    ANSWER_SYSTEM,
    ANSWER_SYSTEM_CHOICE,
    FEEDBACK_TEMPLATE,
    Feedback,
    build_answer_messages,
    build_feedback_messages,
    build_judge_messages,
    parse_choice,
    parse_feedback,
    parse_judge,
)

Q = "What is the capital of Zubrowka?"
CHUNKS = ["Zubrowka exports cheese.", "  The capital of Zubrowka is Lutz.\n"]


def test_answer_messages_open_question() -> None:
    msgs = build_answer_messages(Q, CHUNKS)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"] == ANSWER_SYSTEM
    user = msgs[1]["content"]
    assert "[1] Zubrowka exports cheese.\n\n[2] The capital of Zubrowka is Lutz." in user
    assert f"Question: {Q}" in user
    assert user.index("[2]") < user.index("Question:")  # context first, then the question
    assert user.rstrip().endswith("Answer:")
    assert "Options:" not in user


def test_answer_messages_multiple_choice() -> None:
    msgs = build_answer_messages(Q, CHUNKS, options=["Paris", "Lutz", "Oslo"])
    assert msgs[0]["content"] == ANSWER_SYSTEM_CHOICE
    user = msgs[1]["content"]
    assert "Options:\nA. Paris\nB. Lutz\nC. Oslo" in user
    assert "letter" in user


def test_answer_messages_without_context() -> None:
    assert "(no context)" in build_answer_messages(Q, [])[1]["content"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("B", 1),
        ("B.", 1),
        ("(C)", 2),
        ("A. Paris", 0),
        ("D) Rome", 3),
        ("The answer is C.", 2),
        ("Answer: (b)", 1),
        ("Option D", 3),
        ("It is B", 1),
        ("B. Lutz\n\nThe answer is B. Lutz.", 1),
        ("I think Lutz", 1),  # exactly one option's text
        ("A cat sat on the mat", None),  # the word "A", not option A
        ("Answer: E", None),  # no option E
        ("Paris or Lutz", None),  # ambiguous
    ],
)
def test_parse_choice(reply: str, expected: int | None) -> None:
    assert parse_choice(reply, ["Paris", "Lutz", "Berlin", "Rome"]) == expected


def test_feedback_prompt_is_sage_figure_6() -> None:
    msgs = build_feedback_messages(Q, CHUNKS, " Lutz ")
    assert len(msgs) == 1 and msgs[0]["role"] == "user"
    text = msgs[0]["content"]
    # the original prompt (context + question) and the answer are embedded
    assert "**Original Prompt:** Context:\n[1] Zubrowka exports cheese." in text
    assert f"Question: {Q}" in text
    assert "**Original Answer:** Lutz\n" in text
    # Figure 6's instructions, verbatim
    for line in (
        "You are to evaluate the original answer for the original prompt on a scale of 1 to 10 "
        "based on its accuracy and reasonability.",
        "determine if the original prompt needs more related context (1) or less context (-1).",
        "Evaluation Score: [1-10]. (The answer is highly accurate if Score ≥ 9.)",
        "Context Adjustment: [1, -1].",
        'Context adjustment should output "less context (-1)" with a probability of 60%, and '
        '"more context (1)" with a probability of 40%.',
        "**(output example):**\nEvaluation Score: 8\nContext Adjustment: -1",
    ):
        assert line in text
    assert text.endswith("Context Adjustment: -1")
    assert FEEDBACK_TEMPLATE.count("{") == 2  # only {prompt} and {answer}


def test_feedback_prompt_keeps_braces_in_content() -> None:
    text = build_feedback_messages("What is {x}?", ["set {x} = 1"], "{x} is 1")[0]["content"]
    assert "What is {x}?" in text and "set {x} = 1" in text and "{x} is 1" in text


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Evaluation Score: 8\nContext Adjustment: -1", Feedback(8, -1)),
        ("Evaluation Score: [9].\nContext Adjustment: [1]", Feedback(9, 1)),
        ("Evaluation Score: 7/10\nContext Adjustment: less context (-1)", Feedback(7, -1)),
        ("evaluation score = 10\ncontext adjustment: +1", Feedback(10, 1)),
        ("Evaluation Score: 4\nContext Adjustment: more context needed", Feedback(4, 1)),
        ("Evaluation Score: 0\nContext Adjustment: 1", Feedback(None, 1)),  # out of range
        ("The answer looks fine.", Feedback(None, None)),
        # markdown bold and worded forms from small models
        ("**Evaluation Score:** 7\n**Context Adjustment:** -1", Feedback(7, -1)),
        (
            "The evaluation score is 6 out of 10.\nContext adjustment: more context (1)",
            Feedback(6, 1),
        ),
        ("Score: 5\nContext Adjustment: -1 (drop 1 chunk)", Feedback(5, -1)),
        # an echo of Figure 6's format lines is neither a score of 1 nor an adjustment
        (
            "Evaluation Score: [1-10]. (The answer is highly accurate if Score ≥ 9.)\n"
            "Context Adjustment: [1, -1].\n"
            'Context adjustment should output "less context (-1)" with a probability of 60%',
            Feedback(None, None),
        ),
        (
            "Evaluation Score: [1-10].\nContext Adjustment: [1, -1].\n"
            "Evaluation Score: 3\nContext Adjustment: 1",
            Feedback(3, 1),
        ),
    ],
)
def test_parse_feedback(reply: str, expected: Feedback) -> None:
    assert parse_feedback(reply) == expected


def test_judge_messages() -> None:
    msgs = build_judge_messages(Q, " The capital of Zubrowka is Lutz. ")
    assert [m["role"] for m in msgs] == ["system", "user"]
    user = msgs[1]["content"]
    assert "Passage:\nThe capital of Zubrowka is Lutz." in user
    assert f"Question: {Q}" in user
    assert user.index("Passage:") < user.index("Question:")  # [k_i; q] as in SAKI-RAG Eq. 6
    assert "1" in msgs[0]["content"] and "0" in msgs[0]["content"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("1", True),
        ("0", False),
        ("Yes.", True),
        ("No", False),
        ("The passage is not relevant.", False),
        ("Relevant", True),
        ("hmm", None),
    ],
)
def test_parse_judge(reply: str, expected: bool | None) -> None:
    assert parse_judge(reply) is expected
