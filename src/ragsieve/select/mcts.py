"""CARROT's MCTS policy-tree search over ordered chunk combinations (Sec. V, Alg. 1, Fn. 2-5).

The root is the empty combination; a child appends one more candidate chunk. Each iteration:

1. **Selection** (Fn. 2): from the root, follow the child with the highest cost-aware UCB
   (Eq. 2) ``U(v) = V(v)/N(v) + c * sqrt(ln N(parent) / N(v)) - lambda * cost(v) / B`` until
   an unexpanded node; an unvisited child (``N = 0``) is taken first.
2. **Expansion** (Fn. 3): create *every* child whose cost fits the budget ``B``.
3. **Simulation** (Fn. 4): score all new children in ONE batched reranker call on (query,
   concatenation of the chunks in order) -- :class:`~ragsieve.select.benefit.BenefitScorer`.
4. **Backpropagation** (Fn. 5): add each child's benefit ``W`` to ``V`` and 1 to ``N`` of the
   child and of every ancestor up to the root.

The result (Alg. 1, line 7) is the explored node with the highest ``W`` at any depth (shorter
combinations may beat longer ones: utility is non-monotonic); ties go to more visits, then
greater depth, then the node created first.

Choices the paper leaves open (docs/carrot.md lists them):

* The budget is a hard constraint: a child that would exceed ``B`` is never created, so every
  explored node (and the result) fits. ``cost`` is the sum of the chunks' ``n_tokens`` (cl100k,
  the project's counter), the same count as ``Context.n_tokens`` and every other selector.
* A node that cannot be expanded (no further chunk fits, or no candidate left) is *terminal*;
  a node whose children are all terminal-or-exhausted is *exhausted* and selection skips it.
  Without this, selection would return the same terminal leaf every remaining iteration. When
  the root is exhausted the whole feasible tree has been explored and the search stops early.
* Exact ties of ``U`` are broken by a seeded random generator, so a run is deterministic for a
  fixed ``seed`` (and unvisited children are tried in a seeded random order).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.rerank.base import Reranker
from ragsieve.select.base import Selection, make_context
from ragsieve.select.benefit import BenefitScorer, Combo, PoolSearch
from ragsieve.types import Scored

#: CARROT's defaults (Sec. VII-A): exploration c = 2.4, 10 iterations, cost coefficient 0.1,
#: budget 1024 tokens (chunk size 256 is a property of the index).
DEFAULT_C = 2.4
DEFAULT_ITERATIONS = 10
DEFAULT_LAMBDA = 0.1
DEFAULT_BUDGET = 1024
#: Reranked candidates the tree may use (the paper's "top N"). The paper does not state N for
#: the MCTS; its upper bound uses 5. We use 5 too: the default is then directly comparable with
#: "upper", and with 256-token chunks a query costs at most N + N(N-1) distinct bi-encoder
#: inputs (docs/carrot.md), about what reranking 25 passages costs.
DEFAULT_CANDIDATES = 5


def _check_int(name: str, value: Any, low: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")


def _check_float(name: str, value: Any, low: float = 0.0) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= low:
        raise ConfigError(f"{name} must be a number >= {low}, got {value!r}")
    if not math.isfinite(float(value)):
        raise ConfigError(f"{name} must be finite, got {value!r}")


@dataclass(frozen=True)
class MCTSConfig:
    """MCTS hyper-parameters, named as in the paper."""

    iterations: int = DEFAULT_ITERATIONS
    c: float = DEFAULT_C
    lambda_: float = DEFAULT_LAMBDA
    budget: int = DEFAULT_BUDGET
    seed: int = 0

    def __post_init__(self) -> None:
        _check_int("iterations", self.iterations, 1)
        _check_float("c", self.c)
        _check_float("lambda_", self.lambda_)
        _check_int("budget", self.budget, 1)
        _check_int("seed", self.seed, 0)


@dataclass
class Node:
    """One ordered combination in the policy tree."""

    combo: Combo
    cost: int
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    W: float = 0.0  # benefit (reranker score of the combination); unset at the root
    V: float = 0.0  # cumulative reward
    N: int = 0  # visits
    order: int = 0  # creation order, the last tie-break
    expanded: bool = False
    exhausted: bool = False

    @property
    def depth(self) -> int:
        return len(self.combo)


@dataclass
class SearchResult:
    """The best combination found and the statistics of the search."""

    best: Combo
    benefit: float
    cost: int
    nodes: list[Node]
    iterations_run: int
    calls: int
    texts_scored: int
    best_node: Node | None = None


def _best_node(nodes: Sequence[Node]) -> Node | None:
    """Highest ``W``; ties: more visits, then greater depth, then created first."""
    explored = [n for n in nodes if n.depth > 0]
    if not explored:
        return None
    return max(explored, key=lambda n: (n.W, n.N, n.depth, -n.order))


def mcts_search(
    scorer: BenefitScorer, costs: Sequence[int], config: MCTSConfig | None = None
) -> SearchResult:
    """Run CARROT's MCTS over the candidates of ``scorer`` (``costs[i]`` = tokens of chunk i)."""
    cfg = config or MCTSConfig()
    rng = np.random.default_rng(cfg.seed)
    root = Node((), 0)
    nodes: list[Node] = [root]
    calls0, texts0 = scorer.calls, scorer.texts_scored
    iterations = 0
    for _ in range(cfg.iterations):
        if root.exhausted:
            break
        v = _select(root, rng, cfg)
        if v is None:
            break
        iterations += 1
        _expand(v, costs, cfg.budget, scorer, nodes)
        _mark_exhausted(v)
    best = _best_node(nodes)
    return SearchResult(
        best=best.combo if best else (),
        benefit=best.W if best else 0.0,
        cost=best.cost if best else 0,
        nodes=nodes,
        iterations_run=iterations,
        calls=scorer.calls - calls0,
        texts_scored=scorer.texts_scored - texts0,
        best_node=best,
    )


def _utility(v: Node, parent_n: int, cfg: MCTSConfig) -> float:
    """The cost-aware UCB of ``v`` (Eq. 2); N(v) >= 1 here (unvisited children are handled
    before)."""
    exploit = v.V / v.N
    explore = cfg.c * math.sqrt(math.log(max(parent_n, 1)) / v.N)
    return exploit + explore - cfg.lambda_ * v.cost / cfg.budget


def _select(root: Node, rng: np.random.Generator, cfg: MCTSConfig) -> Node | None:
    """Selection (Fn. 2): from ``root``, an unvisited live child (seeded random) or the
    highest-utility one (ties seeded random), down to an unexpanded node."""
    v = root
    while v.expanded:
        live = [ch for ch in v.children if not ch.exhausted]
        if not live:  # cannot happen for a non-exhausted node; kept as a guard
            return None
        unvisited = [ch for ch in live if ch.N == 0]
        if unvisited:
            return unvisited[int(rng.integers(len(unvisited)))]
        us = np.asarray([_utility(ch, v.N, cfg) for ch in live])
        top = np.flatnonzero(us == us.max())
        v = live[int(top[rng.integers(len(top))])] if len(top) > 1 else live[int(top[0])]
    return v


def _expand(
    v: Node, costs: Sequence[int], budget: int, scorer: BenefitScorer, nodes: list[Node]
) -> None:
    """Expansion (Fn. 3), simulation (Fn. 4) and backpropagation (Fn. 5) of ``v``: every
    child within ``budget`` created, scored in one batched call and appended to ``nodes``,
    its benefit added up to the root; a child with no room for another chunk is terminal."""
    used = set(v.combo)
    children = [
        Node((*v.combo, i), v.cost + int(costs[i]), parent=v)
        for i in range(len(costs))
        if i not in used and v.cost + int(costs[i]) <= budget
    ]
    v.expanded = True
    v.children = children
    if not children:
        return
    # Simulation: one batched call for all new children.
    ws = scorer.score([ch.combo for ch in children])
    for ch, w in zip(children, ws, strict=True):
        ch.W = float(w)
        ch.order = len(nodes)
        nodes.append(ch)
    # Backpropagation of every child up to the root.
    for ch in children:
        cur: Node | None = ch
        while cur is not None:
            cur.V += ch.W
            cur.N += 1
            cur = cur.parent
    # A child that has no room for another chunk is terminal right away.
    for ch in children:
        if all(i in ch.combo or ch.cost + int(costs[i]) > budget for i in range(len(costs))):
            ch.expanded = True
            ch.exhausted = True


def _mark_exhausted(v: Node | None) -> None:
    """``v`` and its ancestors marked exhausted while all their children are."""
    while v is not None and v.expanded and all(ch.exhausted for ch in v.children):
        v.exhausted = True
        v = v.parent


def _r(x: float) -> float:
    return round(float(x), 6)


def search_trace(result: SearchResult, ids: Sequence[str], top: int = 5) -> dict[str, Any]:
    """JSON record of a search: best path with W/V/N per prefix, visits, top explored nodes."""
    path: list[dict[str, Any]] = []
    node = result.best_node
    chain: list[Node] = []
    while node is not None and node.depth > 0:
        chain.append(node)
        node = node.parent
    for n in reversed(chain):
        path.append(
            {
                "chunk_id": ids[n.combo[-1]],
                "W": _r(n.W),
                "V": _r(n.V),
                "N": n.N,
                "cost": n.cost,
            }
        )
    explored = [n for n in result.nodes if n.depth > 0]
    ranked = sorted(explored, key=lambda n: (-n.W, -n.N, -n.depth, n.order))[:top]
    return {
        "best_path": path,
        "benefit": _r(result.benefit),
        "cost": result.cost,
        "iterations_run": result.iterations_run,
        "nodes_explored": len(explored),
        "max_depth": max((n.depth for n in explored), default=0),
        "root_visits": result.nodes[0].N if result.nodes else 0,
        "top_nodes": [{"order": [ids[i] for i in n.combo], "W": _r(n.W), "N": n.N} for n in ranked],
        "reranker_calls": result.calls,
        "texts_scored": result.texts_scored,
    }


class MCTSSelector(PoolSearch):
    """CARROT's selection stage: MCTS over the top ``candidates`` reranked chunks.

    ``ranked`` must be sorted best first (as :func:`~ragsieve.rerank.rerank` returns it); the
    tree's children follow that order, which only matters for the creation-order tie-break.
    """

    name = "mcts"

    def __init__(
        self,
        reranker: Reranker,
        config: MCTSConfig | None = None,
        candidates: int = DEFAULT_CANDIDATES,
    ) -> None:
        _check_int("candidates", candidates, 1)
        self.reranker = reranker
        self.config = config or MCTSConfig()
        self.candidates = candidates

    def select_with(self, scorer: BenefitScorer, pool: list[Scored]) -> Selection:
        """The search over ``pool`` with a scorer already built for it (a method that scored
        the single chunks to rank them reuses those scores, or scores other texts, such as
        title-prefixed sentences); ``scorer.pool[i]`` stands for ``pool[i]``."""
        pool = pool[: self.candidates]
        result = mcts_search(scorer, [s.chunk.n_tokens for s in pool], self.config)
        chosen = [pool[i] for i in result.best]
        trace = {
            "selector": self.name,
            **{k: v for k, v in asdict(self.config).items()},
            "candidates": len(pool),
            "scorer": scorer.name,
            **search_trace(result, [s.chunk.id for s in pool]),
        }
        return Selection(make_context(chosen), trace)
