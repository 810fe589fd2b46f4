"""SAGE's gradient cut on the score curves printed in the paper (Figs. 8 and 9) and edge cases."""

from __future__ import annotations

import random

import pytest

from ragsieve.errors import ConfigError
from ragsieve.select import GradientCutSelector, Selector
from ragsieve.types import Chunk, Scored

# SAGE Fig. 8 ("noisy retrieval", QuALITY): reranker scores of the 15 retrieved chunks; the
# target chunk is second. The paper answers correctly with 2 <= K <= 10, wrongly with K >= 11.
FIG8 = [13.79, 13.58, 11.91, 11.55, 10.94, 7.815, 7.665, 5.490, 4.416, 1.304]
FIG8 += [0.800, 0.255, 0.198, 0.093, 0.089]
# SAGE Fig. 9 ("missing retrieval"): a smooth curve; K <= 6 answers wrongly, 7 <= K may not.
FIG9 = [5.080, 3.854, 3.016, 1.734, 1.560, 1.146, 0.842, 0.823, 0.685]


def _scored(scores: list[float], tokens: int | list[int] = 10) -> list[Scored]:
    sizes = tokens if isinstance(tokens, list) else [tokens] * len(scores)
    return [
        Scored(Chunk(f"c{i}", "d", i, f"chunk {i}", 0, 1, i, i + 1, n), s)
        for i, (s, n) in enumerate(zip(scores, sizes, strict=True))
    ]


def _ids(sel_chunks: tuple[Scored, ...]) -> list[str]:
    return [s.chunk.id for s in sel_chunks]


def test_figure_8_keeps_nine_chunks_and_cuts_at_the_sharp_drop() -> None:
    sel = GradientCutSelector(min_k=7, g=0.3).select("kin?", _scored(FIG8))
    # 5.490 is a 28% drop from 7.665 and 4.416 a 20% drop: both extend the cut; 1.304 is a
    # 70% drop from 4.416 and ends it. K = 9 lies in the range the paper answers correctly.
    assert _ids(sel.context.chunks) == [f"c{i}" for i in range(9)]
    assert "c1" in _ids(sel.context.chunks)  # the target chunk
    assert sel.context.n_tokens == 90
    t = sel.trace
    assert (t["cut"], t["reason"], t["candidates"]) == (9, "drop", 15)
    assert t["scores"] == FIG8
    assert t["drop_ratio"] == pytest.approx(1.304 / 4.416, abs=1e-6)
    assert t["threshold"] == pytest.approx(0.7 * 4.416, abs=1e-6)
    assert (t["min_k"], t["g"], t["budget"], t["max_k"]) == (7, 0.3, None, None)


def test_figure_8_with_a_stricter_gradient_stops_at_min_k() -> None:
    # g = 0.2: 5.490 is a 28% drop from 7.665, so nothing past min_k survives.
    sel = GradientCutSelector(min_k=7, g=0.2).select("kin?", _scored(FIG8))
    assert len(sel.context.chunks) == 7 and sel.trace["reason"] == "drop"


def test_figure_9_smooth_curve_keeps_more_than_min_k() -> None:
    sel = GradientCutSelector(min_k=7, g=0.3).select("venus?", _scored(FIG9))
    # 0.823 (2% drop) and 0.685 (17% drop) both extend: every printed chunk is kept.
    assert len(sel.context.chunks) == 9 > 7
    assert (sel.trace["cut"], sel.trace["reason"]) == (9, "exhausted")
    assert "drop_ratio" not in sel.trace


def test_unsorted_input_is_sorted_by_score_first() -> None:
    ranked = _scored(FIG8)
    shuffled = ranked[:]
    random.Random(7).shuffle(shuffled)
    sel = GradientCutSelector(min_k=7, g=0.3).select("q", shuffled)
    assert _ids(sel.context.chunks) == [f"c{i}" for i in range(9)]
    assert sel.trace["scores"] == FIG8


def test_fewer_candidates_than_min_k_keeps_them_all() -> None:
    sel = GradientCutSelector(min_k=7).select("q", _scored([0.9, 0.1, 0.01]))
    assert len(sel.context.chunks) == 3
    assert (sel.trace["cut"], sel.trace["reason"]) == (3, "exhausted")
    empty = GradientCutSelector().select("q", [])
    assert empty.context.chunks == () and empty.context.n_tokens == 0
    assert (empty.trace["cut"], empty.trace["reason"], empty.trace["scores"]) == (
        0,
        "exhausted",
        [],
    )


def test_zero_scores_never_extend_the_cut_but_count_towards_min_k() -> None:
    sel = GradientCutSelector(min_k=1, g=0.3).select("q", _scored([0.9, 0.0, 0.0]))
    assert len(sel.context.chunks) == 1 and sel.trace["reason"] == "drop"
    sel = GradientCutSelector(min_k=2, g=1.0).select("q", _scored([0.9, 0.0, 0.0, 0.0]))
    assert len(sel.context.chunks) == 2 and sel.trace["reason"] == "drop"
    assert sel.trace["drop_ratio"] is None  # no relative drop from a zero score
    sel = GradientCutSelector(min_k=1, g=1.0).select("q", _scored([0.0, 0.0]))
    assert len(sel.context.chunks) == 1


def test_g_bounds_ties_and_a_drop_of_exactly_g() -> None:
    assert (
        len(GradientCutSelector(1, g=0.0).select("q", _scored([0.5, 0.5, 0.5, 0.4])).context.chunks)
        == 3
    )
    assert len(GradientCutSelector(1, g=1.0).select("q", _scored(FIG8)).context.chunks) == 15
    # A drop of exactly g still extends (>=), a larger one does not.
    assert (
        len(GradientCutSelector(1, g=0.5).select("q", _scored([1.0, 0.5, 0.24])).context.chunks)
        == 2
    )


def test_budget_is_a_hard_ceiling_that_stops_the_cut() -> None:
    # The budget wins over min_k: 4 chunks of 100 tokens fit in 450.
    sel = GradientCutSelector(min_k=7, budget=450).select("q", _scored(FIG8, tokens=100))
    assert len(sel.context.chunks) == 4 and sel.context.n_tokens == 400
    assert sel.trace["reason"] == "budget" and sel.trace["budget"] == 450
    # Past min_k the budget ends the extension before the gradient does.
    sel = GradientCutSelector(min_k=7, budget=850).select("q", _scored(FIG8, tokens=100))
    assert len(sel.context.chunks) == 8 and sel.trace["reason"] == "budget"
    # A chunk that would overflow stops the cut: the smaller one after it is not slipped in.
    sel = GradientCutSelector(min_k=4, budget=250).select(
        "q", _scored([0.9, 0.8, 0.7, 0.6], tokens=[100, 100, 300, 10])
    )
    assert _ids(sel.context.chunks) == ["c0", "c1"] and sel.context.n_tokens == 200
    # The gradient, when it bites first, is reported as the reason.
    sel = GradientCutSelector(min_k=7, budget=10_000).select("q", _scored(FIG8, tokens=100))
    assert len(sel.context.chunks) == 9 and sel.trace["reason"] == "drop"


def test_max_k_caps_the_cut() -> None:
    sel = GradientCutSelector(min_k=7, max_k=8).select("q", _scored(FIG8))
    assert len(sel.context.chunks) == 8 and sel.trace["reason"] == "max_k"
    sel = GradientCutSelector(min_k=7, max_k=5).select("q", _scored(FIG8))
    assert len(sel.context.chunks) == 5


def test_protocol_and_bad_arguments() -> None:
    assert isinstance(GradientCutSelector(), Selector)
    assert GradientCutSelector().name == "gradient"
    for kwargs in ({"min_k": 0}, {"g": -0.1}, {"g": 1.5}, {"budget": 0}, {"max_k": 0}):
        with pytest.raises(ConfigError):
            GradientCutSelector(**kwargs)  # type: ignore[arg-type]
