from __future__ import annotations

import pytest

from ragsieve.errors import ConfigError
from ragsieve.select import BudgetSelector, TopKSelector
from ragsieve.types import Chunk, Scored


def _scored(tokens: list[int]) -> list[Scored]:
    return [
        Scored(Chunk(f"c{i}", "d", i, "x", 0, 1, i, i + 1, n), 1.0 - i / 10)
        for i, n in enumerate(tokens)
    ]


def test_top_k_keeps_rank_order() -> None:
    sel = TopKSelector(k=3).select("q", _scored([50, 60, 70, 80]))
    assert [s.chunk.id for s in sel.context.chunks] == ["c0", "c1", "c2"]
    assert sel.context.n_tokens == 180


def test_budget_is_a_ceiling_and_smaller_chunks_may_still_fit() -> None:
    sel = BudgetSelector(200).select("q", _scored([120, 100, 60, 30]))
    assert [s.chunk.id for s in sel.context.chunks] == ["c0", "c2"]
    assert sel.context.n_tokens == 180 <= 200
    assert BudgetSelector(10).select("q", _scored([50])).context.chunks == ()


def test_top_k_with_budget_and_bad_arguments() -> None:
    sel = TopKSelector(k=2, budget=100).select("q", _scored([80, 50, 10]))
    assert [s.chunk.id for s in sel.context.chunks] == ["c0", "c2"]
    assert sel.trace["skipped_over_budget"] == 1
    with pytest.raises(ConfigError):
        TopKSelector(k=0)
    with pytest.raises(ConfigError):
        BudgetSelector(0)
