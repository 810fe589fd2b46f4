"""A whole-question prompt budget: the prompt tokens of *every* LLM call for one question.

``--budget`` bounds one context. A method that calls the LLM more than once (SAGE's
self-feedback judges each answer with the whole context again, then answers again) can send
several times that; :class:`PromptBudget` bounds the sum. A call is made only when its
estimated prompt fits what is left, and the trace lists every call's tokens.

Why an estimate: no backend here can count a prompt before it is sent (llama.cpp's in-process
binding has no tokenize call; an OpenAI endpoint never has). The estimate is the cl100k count
of the messages plus OpenAI's per-message overhead (4 tokens per message, 3 for the reply
primer), scaled by the ratio of the LLM's own counts to those estimates on the calls already
made for this question. So after the first call the estimate is in the serving model's
tokens; the first call of a question is estimated at ratio 1 (on sample-corpus prompts of
600-850 tokens, Qwen2.5 counted 2-6% more than the estimate and SmolLM2 4-6% more).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ragsieve.text import count_tokens
from ragsieve.types import Usage

#: OpenAI's documented chat overhead: tokens per message and for the reply primer.
PER_MESSAGE = 4
PER_REPLY = 3
#: Head-room on the estimate when checking the LLM's context window: SmolLM2 and Qwen2.5
#: counted 2-6% more than cl100k on sample-corpus prompts; 15% covers text that tokenises worse.
WINDOW_MARGIN = 1.15


def llm_window(llm: Any) -> int | None:
    """The context window (``n_ctx``) of an LLM in tokens, when the backend knows it: the local
    llama.cpp backends always, an OpenAI-compatible one when ``--llm-ctx`` told it."""
    n = getattr(llm, "n_ctx", None)
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def estimate_prompt_tokens(messages: list[dict[str, str]]) -> int:
    """cl100k tokens of a chat prompt, with the per-message overhead."""
    return sum(count_tokens(m.get("content", "")) + PER_MESSAGE for m in messages) + PER_REPLY


@dataclass
class PromptBudget:
    """Prompt tokens left for one question's LLM calls (``total`` None: unbounded)."""

    total: int | None = None
    #: The LLM's context window: each call's prompt plus its completion cap must fit in it.
    window: int | None = None
    spent: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)
    _raw: int = 0

    def estimate(self, messages: list[dict[str, str]]) -> int:
        """The prompt's tokens as this LLM is expected to count them."""
        return self._scaled(estimate_prompt_tokens(messages))

    def _scaled(self, raw: int) -> int:
        """A cl100k estimate in this LLM's tokens (the ratio seen on earlier calls)."""
        return math.ceil(raw * (self.spent / self._raw if self._raw else 1.0))

    def room(self, messages: list[dict[str, str]], reserve: int = 0) -> bool:
        """Whether the call fits what is left, keeping ``reserve`` tokens for a later call."""
        if self.total is None:
            return True
        return self.spent + self.estimate(messages) + reserve <= self.total

    def fits_window(self, messages: list[dict[str, str]], max_out: int) -> bool:
        """Whether the prompt and a ``max_out``-token completion fit the LLM's context window
        (with :data:`WINDOW_MARGIN` on the estimate); always true when the window is unknown."""
        if self.window is None:
            return True
        return math.ceil(self.estimate(messages) * WINDOW_MARGIN) + max_out <= self.window

    def context_room(self, messages: list[dict[str, str]], max_out: int) -> int | None:
        """Context tokens the window leaves beside ``messages`` (a prompt without its context)
        and the completion: the budget ``ask`` derives when none is given (None: unknown)."""
        if self.window is None:
            return None
        return max(0, int((self.window - max_out) / WINDOW_MARGIN) - self.estimate(messages))

    def record(self, kind: str, messages: list[dict[str, str]], usage: Usage) -> None:
        """Count one call (``kind``: answer, feedback) at the LLM's own token counts."""
        raw = estimate_prompt_tokens(messages)
        self.calls.append(
            {
                "call": kind,
                "prompt": usage.prompt_tokens,
                "completion": usage.completion_tokens,
                "estimate": self._scaled(raw),
            }
        )
        self._raw += raw
        self.spent += usage.prompt_tokens

    def trace(self) -> dict[str, Any]:
        """What goes under ``trace["llm"]``: the bound, the number of calls, the total and
        each call."""
        return {
            "total_budget": self.total,
            "n_ctx": self.window,
            "calls": len(self.calls),
            "prompt_spent": self.spent,
            "call_tokens": self.calls,
        }
