"""The whole-question prompt budget (``ragsieve.llm.budget``): its estimate, its calibration
to the LLM's own counts, and its trace."""

from __future__ import annotations

from ragsieve.llm.budget import (
    PER_MESSAGE,
    PER_REPLY,
    WINDOW_MARGIN,
    PromptBudget,
    estimate_prompt_tokens,
    llm_window,
)
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
        "n_ctx": None,
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


def test_the_window_holds_prompt_and_answer_with_head_room() -> None:
    est = estimate_prompt_tokens(MESSAGES)
    need = int(est * WINDOW_MARGIN) + 1 + 64
    assert PromptBudget(window=need).fits_window(MESSAGES, 64)
    assert not PromptBudget(window=est + 64).fits_window(MESSAGES, 64)  # no head-room left
    assert PromptBudget().fits_window(MESSAGES, 10**6)  # unknown window: no limit
    assert PromptBudget(window=1000).context_room(MESSAGES, 100) == int(900 / WINDOW_MARGIN) - est
    assert PromptBudget().context_room(MESSAGES, 100) is None


def test_llm_window_reads_n_ctx_when_the_backend_has_one() -> None:
    class Local:
        n_ctx = 4096

    class Remote:
        n_ctx = None

    assert (llm_window(Local()), llm_window(Remote()), llm_window(object())) == (4096, None, None)
