"""CARROT's MCTS, the exhaustive "upper" and beam search on real chunks with real scorers.

The point here is the search, so most tests score with BM25 (exact, list-independent once
anchored, and fast); one test checks the batch-invariance of the default ensemble.
"""

from __future__ import annotations

import math
from itertools import permutations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragsieve.errors import ConfigError
from ragsieve.rerank import get_reranker
from ragsieve.select import Selector
from ragsieve.select.benefit import BenefitScorer
from ragsieve.select.mcts import MCTSConfig, MCTSSelector, Node, mcts_search
from ragsieve.select.search import (
    BeamSelector,
    ExhaustiveSelector,
    beam_search,
    exhaustive_search,
    feasible_orders,
)
from ragsieve.types import Scored

pytestmark = pytest.mark.integration

QUESTION = "When was Voyager 1 launched and what did it find?"
FAST = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _scorer(pool: list[Scored], query: str = QUESTION, reranker: str = "bm25") -> BenefitScorer:
    return BenefitScorer(get_reranker(reranker), query, [s.chunk.text for s in pool])


def _costs(pool: list[Scored]) -> list[int]:
    return [s.chunk.n_tokens for s in pool]


def _explored(nodes: list[Node]) -> list[Node]:
    return [n for n in nodes if n.depth > 0]


def _subtree_size(node: Node) -> int:
    return 1 + sum(_subtree_size(ch) for ch in node.children)


search_cases = st.fixed_dictionaries(
    {
        "n": st.integers(1, 7),
        "offset": st.integers(0, 5),
        "budget": st.integers(20, 900),
        "iterations": st.integers(1, 25),
        "c": st.sampled_from([0.0, 1.0, 2.4, 4.0]),
        "lambda_": st.sampled_from([0.0, 0.1, 0.5, 1.0]),
        "seed": st.integers(0, 3),
        "query": st.integers(0, 3),
    }
)


def _case(real_pools: dict[str, list[Scored]], case: dict) -> tuple[str, list[Scored]]:
    query = list(real_pools)[case["query"]]
    pool = real_pools[query][case["offset"] : case["offset"] + case["n"]]
    return query, pool


@FAST
@given(case=search_cases)
def test_mcts_invariants_on_real_chunks(real_pools: dict[str, list[Scored]], case: dict) -> None:
    """Never over budget; the result is the best-scored explored node; statistics add up."""
    query, pool = _case(real_pools, case)
    costs = _costs(pool)
    cfg = MCTSConfig(case["iterations"], case["c"], case["lambda_"], case["budget"], case["seed"])
    scorer = _scorer(pool, query)
    res = mcts_search(scorer, costs, cfg)
    explored = _explored(res.nodes)
    # Hard budget: every explored node, hence the result, fits.
    assert all(n.cost <= cfg.budget for n in explored)
    assert all(n.cost == sum(costs[i] for i in n.combo) for n in explored)
    assert res.cost <= cfg.budget
    # Nodes are ordered combinations without repetition, each created once.
    assert all(len(set(n.combo)) == n.depth for n in explored)
    assert len({n.combo for n in explored}) == len(explored)
    if not any(c <= cfg.budget for c in costs):
        assert res.best == () and explored == []
        return
    # The chosen node is the best-scored explored node (ties: visits, then depth).
    best = max(n.W for n in explored)
    assert res.benefit == best
    tied = [n for n in explored if best == n.W]
    assert res.best_node is not None
    assert (res.best_node.N, res.best_node.depth) == max((n.N, n.depth) for n in tied)
    # W is the scorer's benefit of that exact order (the cache never lies).
    assert res.benefit == pytest.approx(_scorer(pool, query).score([res.best])[0])
    # Backpropagation: N(v) = nodes in v's subtree, V(root) = sum of every benefit.
    root = res.nodes[0]
    assert len(explored) == root.N
    assert pytest.approx(sum(n.W for n in explored)) == root.V
    for n in explored:
        assert _subtree_size(n) == n.N
    # One batched reranker call per expansion that created children; no text twice.
    assert res.texts_scored == len(explored)
    assert res.calls <= res.iterations_run <= cfg.iterations


@FAST
@given(case=search_cases)
def test_mcts_is_deterministic_for_a_seed(real_pools: dict[str, list[Scored]], case: dict) -> None:
    query, pool = _case(real_pools, case)
    cfg = MCTSConfig(case["iterations"], case["c"], case["lambda_"], case["budget"], case["seed"])
    runs = [mcts_search(_scorer(pool, query), _costs(pool), cfg) for _ in range(2)]
    a, b = ([(n.combo, n.W, n.N, n.V) for n in r.nodes] for r in runs)
    assert a == b
    assert runs[0].best == runs[1].best


@FAST
@given(case=search_cases)
def test_mcts_never_beats_the_exhaustive_optimum_and_reaches_it_when_exhaustive(
    real_pools: dict[str, list[Scored]], case: dict
) -> None:
    query, pool = _case(real_pools, case)
    pool = pool[:5]
    costs = _costs(pool)
    _best, w_opt, stats = exhaustive_search(_scorer(pool, query), costs, case["budget"])
    assert stats["orders"] == len(feasible_orders(costs, case["budget"]))
    assert stats["reranker_calls"] == (1 if stats["orders"] else 0)
    cfg = MCTSConfig(case["iterations"], case["c"], case["lambda_"], case["budget"], case["seed"])
    res = mcts_search(_scorer(pool, query), costs, cfg)
    assert res.benefit <= w_opt + 1e-12
    # With enough iterations the search exhausts the feasible tree and stops early at the optimum.
    full = mcts_search(_scorer(pool, query), costs, MCTSConfig(400, 2.4, 0.1, case["budget"]))
    assert len(_explored(full.nodes)) == stats["orders"]
    assert full.iterations_run < 400
    assert full.benefit == pytest.approx(w_opt)


def test_upper_enumerates_325_orders_of_five_candidates(
    real_pools: dict[str, list[Scored]],
) -> None:
    pool = real_pools[QUESTION][:5]
    assert sum(math.perm(5, k) for k in range(1, 6)) == 325
    assert len(feasible_orders(_costs(pool), 10_000)) == 325
    sel = ExhaustiveSelector(get_reranker("bm25"), budget=10_000).select(QUESTION, pool)
    assert isinstance(ExhaustiveSelector(get_reranker("bm25")), Selector)
    assert sel.trace["orders"] == 325 and sel.trace["texts_scored"] == 325
    # The reported optimum really is the best of all 325 orders.
    scorer = _scorer(pool)
    ws = scorer.score(list(feasible_orders(_costs(pool), 10_000)))
    assert sel.trace["benefit"] == pytest.approx(max(ws), abs=1e-6)
    with pytest.raises(ConfigError):
        feasible_orders([1] * 9, 10_000)


def test_beam_search_is_bounded_by_the_optimum_and_equals_it_when_wide(
    real_pools: dict[str, list[Scored]],
) -> None:
    pool = real_pools[QUESTION][:5]
    costs = _costs(pool)
    _, w_opt, _ = exhaustive_search(_scorer(pool), costs, 600)
    best, w, stats = beam_search(_scorer(pool), costs, 600, width=2)
    assert w <= w_opt + 1e-12 and sum(costs[i] for i in best) <= 600
    assert stats["reranker_calls"] == stats["levels"]
    _, w_wide, _ = beam_search(_scorer(pool), costs, 600, width=400)
    assert w_wide == pytest.approx(w_opt)
    sel = BeamSelector(get_reranker("bm25"), budget=600, candidates=5).select(QUESTION, pool)
    assert sel.context.n_tokens <= 600 and sel.trace["selector"] == "beam"
    with pytest.raises(ConfigError):
        beam_search(_scorer(pool), costs, 600, width=0)


def test_selection_follows_the_cost_aware_ucb(real_pools: dict[str, list[Scored]]) -> None:
    """Iteration 2 expands the root child that maximises Eq. 2 (all have N = 1)."""
    pool = real_pools[QUESTION][:6]
    costs = _costs(pool)
    n = len(pool)
    # c = 0, lambda = 0: pure exploitation -> the best single chunk is expanded next.
    res = mcts_search(_scorer(pool), costs, MCTSConfig(2, 0.0, 0.0, 2000))
    singles = res.nodes[1 : n + 1]
    assert res.nodes[n + 1].combo[0] == max(singles, key=lambda v: v.W).combo[0]
    # A huge cost coefficient: the cheapest single chunk is expanded next.
    res = mcts_search(_scorer(pool), costs, MCTSConfig(2, 0.0, 1000.0, 2000))
    assert res.nodes[n + 1].combo[0] == min(range(n), key=lambda i: costs[i])
    # Exploration is the same for all root children at N = 1, so c alone changes nothing yet.
    res_c = mcts_search(_scorer(pool), costs, MCTSConfig(2, 4.0, 0.0, 2000))
    assert res_c.nodes[n + 1].combo[0] == max(singles, key=lambda v: v.W).combo[0]


def test_benefit_is_batch_invariant_and_cached_with_the_default_ensemble(
    real_pools: dict[str, list[Scored]],
) -> None:
    """The same order scores the same alone or inside a batch (int8 cross-encoder included)."""
    pool = real_pools[QUESTION][:4]
    combos = [(0,), (1, 0), (2, 3, 1), (3,)]
    batch = _scorer(pool, reranker="ensemble")
    together = batch.score(combos)
    alone = _scorer(pool, reranker="ensemble")
    alone.score([(0,), (1,), (2,), (3,)])  # anchors first, as in a search
    one_by_one = [alone.score([c])[0] for c in combos]
    assert together == pytest.approx(one_by_one, abs=1e-6)
    assert all(0.0 <= w <= 1.0 for w in together)
    calls = batch.calls
    assert batch.score(combos).tolist() == together.tolist()
    assert batch.calls == calls  # cached: no new call, no text scored twice
    assert batch.texts_scored == len(combos)
    # Order matters to the scorer: a different order is a different text.
    assert batch.text((1, 0)) != batch.text((0, 1))


def test_selector_trace_and_empty_cases(real_pools: dict[str, list[Scored]]) -> None:
    pool = real_pools[QUESTION]
    sel = MCTSSelector(get_reranker("bm25"), MCTSConfig(budget=400), candidates=6).select(
        QUESTION, pool
    )
    t = sel.trace
    assert sel.context.n_tokens <= 400
    assert [p["chunk_id"] for p in t["best_path"]] == [s.chunk.id for s in sel.context.chunks]
    assert t["best_path"][-1]["W"] == t["benefit"] == t["top_nodes"][0]["W"]
    assert t["reranker_calls"] >= 1 and t["texts_scored"] == t["nodes_explored"]
    assert t["root_visits"] == t["nodes_explored"]
    nothing = MCTSSelector(get_reranker("bm25"), MCTSConfig(budget=5)).select(QUESTION, pool)
    assert nothing.context.chunks == () and nothing.trace["best_path"] == []
    assert MCTSSelector(get_reranker("bm25")).select(QUESTION, []).context.chunks == ()


@pytest.mark.parametrize(
    "kwargs",
    [{"iterations": 0}, {"c": -1.0}, {"lambda_": math.nan}, {"budget": 0}, {"seed": -2}],
)
def test_bad_mcts_configuration_is_a_config_error(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        MCTSConfig(**kwargs)


def test_orders_are_permutations_not_sets(real_pools: dict[str, list[Scored]]) -> None:
    pool = real_pools[QUESTION][:3]
    orders = feasible_orders(_costs(pool), 10_000)
    assert set(orders) >= set(permutations(range(3), 3))
