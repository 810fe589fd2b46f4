"""The whole-question prompt budget (``ragsieve.llm.budget``): its estimate, its calibration
to the LLM's own counts, and its trace."""

from __future__ import annotations

from ragsieve.llm.budget import PER_MESSAGE, PER_REPLY, PromptBudget, estimate_prompt_tokens
from ragsieve.llm.prompts import build_answer_messages
from ragsieve.text import count_tokens
from ragsieve.types import Usage

MESSAGES = build_answer_messages("Who announced it?", ["In 1822 he announced the decipherment."])


def test_estimate_is_cl100k_plus_the_chat_overhead() -> None:
    want = sum(count_tokens(m["content"]) + PER_MESSAGE for m in MESSAGES) + PER_REPLY
    assert estimate_prompt_tokens(MESSAGES) == want > 20


def test_unbounded_budget_always_has_room_and_still_records() -> None:
    b = PromptBudget()
    assert b.room(MESSAGES, reserve=10**9)
    b.record("answer", MESSAGES, Usage(50, 4))
    assert b.trace() == {
        "total_budget": None,
        "calls": 1,
        "prompt_spent": 50,
        "call_tokens": [
            {"call": "answer", "prompt": 50, "completion": 4, "estimate": b.calls[0]["estimate"]}
        ],
    }


def test_estimates_follow_the_llms_own_counts() -> None:
    raw = estimate_prompt_tokens(MESSAGES)
    b = PromptBudget(total=3 * raw)
    assert b.estimate(MESSAGES) == raw  # before any call: cl100k
    assert b.room(MESSAGES, reserve=2 * raw) and not b.room(MESSAGES, reserve=2 * raw + 1)
    b.record("answer", MESSAGES, Usage(2 * raw, 1))  # this model counts twice as many tokens
    assert b.calls[0]["estimate"] == raw
    assert b.estimate(MESSAGES) == 2 * raw
    assert not b.room(MESSAGES)  # 2 raw spent + 2 raw estimated > 3 raw
    assert b.trace()["prompt_spent"] == 2 * raw
