"""Reference searches over ordered chunk combinations: exhaustive "CARROT upper" and beam search.

Both use the same benefit ``W`` as the MCTS (:class:`~ragsieve.select.benefit.BenefitScorer`)
and the same hard token budget, so their results are directly comparable with
:func:`~ragsieve.select.mcts.mcts_search`:

* :func:`exhaustive_search` scores every ordered subset of the candidates that fits the budget
  (for 5 candidates: sum_k P(5, k) = 325 orders), in one batched call. It is the paper's
  "CARROT upper" (Sec. VII-A) and the optimum the MCTS is tested and benchmarked against.
* :func:`beam_search` is Table VI's "beam search" baseline: level by level, extend each of the
  ``width`` best combinations by every chunk that fits, score the new level in one call, keep
  the ``width`` best; the result is the best combination seen at any level.

Tie rules match the MCTS where they can: higher ``W``, then greater depth, then enumeration
order (there are no visit counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations
from typing import Any

from ragsieve.errors import ConfigError
from ragsieve.rerank.base import Reranker
from ragsieve.select.base import Selection, make_context
from ragsieve.select.benefit import BenefitScorer, Combo, PoolSearch
from ragsieve.select.mcts import DEFAULT_BUDGET
from ragsieve.types import Scored

#: The paper's upper bound enumerates the top 5 candidates (325 orders).
UPPER_CANDIDATES = 5
#: Hard cap on enumerated orders (8 candidates already give 109,600).
MAX_ORDERS = 20_000
DEFAULT_BEAM_WIDTH = 3


def feasible_orders(costs: Sequence[int], budget: int) -> list[Combo]:
    """Every non-empty ordered subset whose total cost fits ``budget``, by depth then order."""
    n = len(costs)
    out: list[Combo] = []
    for k in range(1, n + 1):
        for combo in permutations(range(n), k):
            if sum(int(costs[i]) for i in combo) <= budget:
                out.append(combo)
        if len(out) > MAX_ORDERS:
            raise ConfigError(
                f"exhaustive search over {n} candidates is too large (> {MAX_ORDERS} orders): "
                f"use at most {UPPER_CANDIDATES + 2} candidates"
            )
    return out


def _best(combos: Sequence[Combo], ws: Sequence[float]) -> tuple[Combo, float]:
    if not combos:
        return (), 0.0
    i = max(range(len(combos)), key=lambda j: (ws[j], len(combos[j]), -j))
    return combos[i], float(ws[i])


def exhaustive_search(
    scorer: BenefitScorer, costs: Sequence[int], budget: int = DEFAULT_BUDGET
) -> tuple[Combo, float, dict[str, Any]]:
    """The optimum over every feasible order: ``(best, W(best), stats)``."""
    combos = feasible_orders(costs, budget)
    calls0, texts0 = scorer.calls, scorer.texts_scored
    ws = scorer.score(combos).tolist() if combos else []
    best, w = _best(combos, ws)
    stats = {
        "orders": len(combos),
        "reranker_calls": scorer.calls - calls0,
        "texts_scored": scorer.texts_scored - texts0,
    }
    return best, w, stats


def beam_search(
    scorer: BenefitScorer,
    costs: Sequence[int],
    budget: int = DEFAULT_BUDGET,
    width: int = DEFAULT_BEAM_WIDTH,
) -> tuple[Combo, float, dict[str, Any]]:
    """Best combination found by a width-``width`` beam: ``(best, W(best), stats)``."""
    if width < 1:
        raise ConfigError(f"beam width must be at least 1, got {width}")
    calls0, texts0 = scorer.calls, scorer.texts_scored
    beam: list[tuple[Combo, int]] = [((), 0)]
    seen: list[Combo] = []
    seen_w: list[float] = []
    depth = 0
    while beam:
        level = [
            ((*combo, i), cost + int(costs[i]))
            for combo, cost in beam
            for i in range(len(costs))
            if i not in combo and cost + int(costs[i]) <= budget
        ]
        if not level:
            break
        depth += 1
        ws = scorer.score([c for c, _ in level]).tolist()
        seen.extend(c for c, _ in level)
        seen_w.extend(ws)
        order = sorted(range(len(level)), key=lambda j: (-ws[j], j))[:width]
        beam = [level[j] for j in order]
    best, w = _best(seen, seen_w)
    stats = {
        "width": width,
        "levels": depth,
        "reranker_calls": scorer.calls - calls0,
        "texts_scored": scorer.texts_scored - texts0,
    }
    return best, w, stats


def _selection(
    name: str, pool: list[Scored], best: Combo, w: float, scorer: BenefitScorer, stats: dict
) -> Selection:
    chosen = [pool[i] for i in best]
    trace = {
        "selector": name,
        "candidates": len(pool),
        "scorer": scorer.name,
        "benefit": round(w, 6),
        "order": [s.chunk.id for s in chosen],
        **stats,
    }
    return Selection(make_context(chosen), trace)


class ExhaustiveSelector(PoolSearch):
    """ "CARROT upper": the best order of the top ``candidates`` (default 5) within budget."""

    name = "upper"

    def __init__(
        self, reranker: Reranker, budget: int = DEFAULT_BUDGET, candidates: int = UPPER_CANDIDATES
    ) -> None:
        if budget < 1 or candidates < 1:
            raise ConfigError("budget and candidates must be at least 1")
        self.reranker, self.budget, self.candidates = reranker, budget, candidates

    def select_with(self, scorer: BenefitScorer, pool: list[Scored]) -> Selection:
        """As :meth:`MCTSSelector.select_with`: a scorer already built for ``pool``."""
        pool = pool[: self.candidates]
        best, w, stats = exhaustive_search(scorer, [s.chunk.n_tokens for s in pool], self.budget)
        return _selection(self.name, pool, best, w, scorer, {"budget": self.budget, **stats})


class BeamSelector(PoolSearch):
    """Table VI's beam-search baseline over the top ``candidates`` reranked chunks."""

    name = "beam"

    def __init__(
        self,
        reranker: Reranker,
        budget: int = DEFAULT_BUDGET,
        candidates: int = 10,
        width: int = DEFAULT_BEAM_WIDTH,
    ) -> None:
        if budget < 1 or candidates < 1 or width < 1:
            raise ConfigError("budget, candidates and width must be at least 1")
        self.reranker, self.budget = reranker, budget
        self.candidates, self.width = candidates, width

    def select_with(self, scorer: BenefitScorer, pool: list[Scored]) -> Selection:
        """As :meth:`MCTSSelector.select_with`: a scorer already built for ``pool``."""
        pool = pool[: self.candidates]
        best, w, stats = beam_search(
            scorer, [s.chunk.n_tokens for s in pool], self.budget, self.width
        )
        return _selection(self.name, pool, best, w, scorer, {"budget": self.budget, **stats})
