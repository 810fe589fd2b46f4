"""The Selector protocol with the two baseline policies: fixed top-k and fill-to-budget.

SAGE's gradient cut and CARROT's MCTS implement the same protocol in their own modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ragsieve.errors import ConfigError
from ragsieve.types import Context, Scored


@dataclass(frozen=True)
class Selection:
    """The selected context plus a JSON-serialisable record of why."""

    context: Context
    trace: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Selector(Protocol):
    name: str

    def select(self, query: str, ranked: list[Scored]) -> Selection: ...


def make_context(chunks: list[Scored]) -> Context:
    return Context(tuple(chunks), sum(s.chunk.n_tokens for s in chunks))


class TopKSelector:
    """The first ``k`` chunks of the ranked list, optionally capped by a token budget."""

    name = "top-k"

    def __init__(self, k: int = 10, budget: int | None = None) -> None:
        if k < 1:
            raise ConfigError(f"k must be at least 1, got {k}")
        if budget is not None and budget < 1:
            raise ConfigError(f"budget must be a positive number of tokens, got {budget}")
        self.k = k
        self.budget = budget

    def select(self, query: str, ranked: list[Scored]) -> Selection:
        chosen: list[Scored] = []
        used = 0
        skipped = 0
        for s in ranked:
            if len(chosen) >= self.k:
                break
            if self.budget is not None and used + s.chunk.n_tokens > self.budget:
                skipped += 1
                continue
            chosen.append(s)
            used += s.chunk.n_tokens
        return Selection(
            make_context(chosen),
            {
                "selector": self.name,
                "k": self.k,
                "budget": self.budget,
                "candidates": len(ranked),
                "skipped_over_budget": skipped,
            },
        )


class BudgetSelector:
    """Fill the context in rank order up to ``budget`` tokens (the budget is a ceiling).

    A chunk that would overflow is skipped and the next, smaller one may still fit: this is
    how a fixed token budget is filled in the papers' baselines (ParetoRAG fills a budget of
    words; CARROT's baselines fill B tokens).
    """

    name = "budget"

    def __init__(self, budget: int) -> None:
        if budget < 1:
            raise ConfigError(f"budget must be a positive number of tokens, got {budget}")
        self.budget = budget

    def select(self, query: str, ranked: list[Scored]) -> Selection:
        chosen: list[Scored] = []
        used = 0
        for s in ranked:
            if used + s.chunk.n_tokens <= self.budget:
                chosen.append(s)
                used += s.chunk.n_tokens
        return Selection(
            make_context(chosen),
            {"selector": self.name, "budget": self.budget, "candidates": len(ranked)},
        )
