"""SAGE's cost (Eq. 1) and cost efficiency (Eq. 2), and latency percentiles."""

from __future__ import annotations

import pytest

from ragsieve.evaluate import (
    PRICES,
    cost_efficiency,
    latency_summary,
    llm_cost,
    relative_cost_efficiency,
)


def test_llm_cost_is_sage_eq1_with_the_papers_gpt4_prices() -> None:
    # 1,000 input tokens at $10/1M + 200 output tokens at $30/1M = 0.01 + 0.006
    assert llm_cost(1000, 200) == pytest.approx(0.016)
    assert llm_cost(1_000_000, 1_000_000) == pytest.approx(40.0)
    assert llm_cost(1000, 200, *PRICES["gpt-4o-mini"]) == pytest.approx(0.00015 + 0.00012)
    assert llm_cost(0, 0) == 0.0
    with pytest.raises(ValueError):
        llm_cost(-1, 0)


def test_cost_efficiency_is_sage_eq2() -> None:
    assert cost_efficiency(0.75, 0.016) == pytest.approx(46.875)
    assert cost_efficiency(0.75, 0.0) is None  # a free local model: undefined


def test_relative_cost_efficiency_reproduces_sage_table_xi() -> None:
    # SAGE Table XI (QuALITY, GPT-4o-mini): tokens and accuracy -> relative cost efficiency
    table = {"BM25": (140699, 0.65), "DPR": (142008, 0.70), "SBERT": (140888, 0.675)}
    table["SAGE"] = (104939, 0.75)
    ce = {
        name: cost_efficiency(acc, llm_cost(tokens, 0, *PRICES["gpt-4o-mini"]))
        for name, (tokens, acc) in table.items()
    }
    rel = relative_cost_efficiency(ce, "SAGE")
    # the paper truncates to 3 decimals (DPR: 0.6897 printed as 0.689)
    expected = {"BM25": 0.646, "DPR": 0.689, "SBERT": 0.670, "SAGE": 1.0}
    assert rel == pytest.approx(expected, abs=1e-3)


def test_latency_summary_percentiles() -> None:
    timings = [{"retrieve": float(i), "llm": 2.0 * i} for i in range(1, 101)]
    timings.append({"retrieve": 50.5})  # a question without an llm stage
    got = latency_summary(timings)
    assert got["llm"]["p50"] == pytest.approx(101.0)  # linear interpolation of 2..200
    assert got["llm"]["p95"] == pytest.approx(190.1)
    assert got["llm"]["n"] == 100
    assert got["retrieve"]["p50"] == pytest.approx(50.5)
    assert got["retrieve"]["n"] == 101
    assert latency_summary([]) == {}
