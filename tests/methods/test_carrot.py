"""The ``carrot`` method on a real LanceDB index of the sample corpus (BM25 benefit: fast)."""

from __future__ import annotations

import pytest

from ragsieve.errors import ConfigError
from ragsieve.index import Index
from ragsieve.methods import get_method, known_methods, parse_methods

pytestmark = pytest.mark.integration

QUESTION = "When was Voyager 1 launched?"


def test_carrot_is_registered_and_defaults_to_the_paper_budget(plain: Index) -> None:
    assert "carrot" in known_methods()
    m = get_method("carrot", plain, k=10, budget=None, retriever="dense", reranker="bm25")
    cfg = m.config
    assert (cfg.budget, cfg.iterations, cfg.c, cfg.lambda_) == (1024, 10, 2.4, 0.1)
    r = m.retrieve([QUESTION])[0]
    sel = r.trace["selection"]
    assert r.context.n_tokens <= 1024 and r.context.chunks
    assert [p["chunk_id"] for p in sel["best_path"]] == r.trace["selected"]
    assert sel["scorer_stats"]["reranker"] == "bm25"
    assert sel["scorer_stats"]["combination_cosine"] == "exact"  # BM25 has no cosine to pool
    assert sel["scorer_stats"]["calls"] == 1 + sel["reranker_calls"]  # singles + expansions
    assert set(r.timings) >= {"retrieve", "rerank", "select"}
    # Candidates are sorted by their single-chunk benefit.
    scores = [s.score for s in r.candidates]
    assert scores == sorted(scores, reverse=True)


def test_spec_options_budget_and_searches(plain: Index) -> None:
    (spec,) = parse_methods("carrot[reranker=bm25,iterations=3,lambda=0.5,N=4,seed=2]")
    m = get_method(spec.name, plain, budget=300, **spec.options)
    assert (m.config.iterations, m.config.lambda_, m.config.N, m.config.seed) == (3, 0.5, 4, 2)
    r = m.retrieve([QUESTION, "Who deciphered the Rosetta Stone?"])
    assert all(x.context.n_tokens <= 300 for x in r)
    assert all(x.trace["selection"]["iterations_run"] <= 3 for x in r)
    up = get_method("carrot", plain, budget=400, reranker="bm25", search="upper")
    beam = get_method("carrot", plain, budget=400, reranker="bm25", search="beam")
    mcts = get_method("carrot", plain, budget=400, reranker="bm25", iterations=400)
    w = {}
    for name, meth in (("upper", up), ("beam", beam), ("mcts", mcts)):
        res = meth.retrieve([QUESTION])[0]
        assert res.context.n_tokens <= 400
        w[name] = res.trace["selection"]["benefit"]
    # Same scorer and pool (N = 5): the exhaustive optimum bounds both and the full MCTS hits it.
    assert w["beam"] <= w["upper"] + 1e-9
    assert w["mcts"] == pytest.approx(w["upper"], abs=1e-6)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"iteratoins": 5}, r"unknown option\(s\) iteratoins for carrot"),
        ({"search": "greedy"}, "search must be one of"),
        ({"N": 0}, "N must be a positive integer"),
        ({"agent": "maybe"}, "carrot: agent must be bool, got .maybe.; valid keys"),
        ({"c": -1}, "c must be a number"),
        ({"combination_cosine": "approx"}, "combination_cosine must be one of exact, int8, pooled"),
    ],
)
def test_bad_options_are_one_line_config_errors(plain: Index, options: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as e:
        get_method("carrot", plain, reranker="bm25", **options)
    assert "\n" not in str(e.value)


def test_bad_reranker_name_fails_early(plain: Index) -> None:
    with pytest.raises(ConfigError, match="unknown reranker"):
        get_method("carrot", plain, reranker="no-such-scorer")


def test_pooled_combination_cosines_run_fewer_model_inputs(plain: Index) -> None:
    """``combination_cosine=pooled`` (opt-in) pools the default ensemble's MiniLM cosines of
    combinations from the candidates' own readings: fewer model runs than embedding every
    combination window (the default reads windows), the same candidates and single-chunk
    benefits."""
    q = "Who deciphered the Rosetta Stone and when?"
    pooled = get_method("carrot", plain, budget=400, combination_cosine="pooled")
    r_pooled = pooled.retrieve([q])[0]
    r_exact = get_method("carrot", plain, budget=400, combination_cosine="exact").retrieve([q])[0]
    ps, es = (r.trace["selection"]["scorer_stats"] for r in (r_pooled, r_exact))
    assert (ps["reranker"], ps["combination_cosine"]) == ("ensemble", "pooled")
    assert es["combination_cosine"] == "exact"
    assert ps["model_inputs"] < es["model_inputs"]
    assert [s.score for s in r_pooled.candidates] == [s.score for s in r_exact.candidates]
    assert 0 < r_pooled.context.n_tokens <= 400


def test_int8_combination_cosines_read_the_same_windows_faster_build(plain: Index) -> None:
    """``combination_cosine=int8`` embeds the same combination windows as ``exact`` (same model
    inputs, same candidates and single-chunk benefits: the singles keep the index's cosines),
    with the int8-activation build of the packaged MiniLM. It is the default."""
    q = "Who deciphered the Rosetta Stone and when?"
    r_int8 = get_method("carrot", plain, budget=400).retrieve([q])[0]
    r_exact = get_method("carrot", plain, budget=400, combination_cosine="exact").retrieve([q])[0]
    i8, ex = (r.trace["selection"]["scorer_stats"] for r in (r_int8, r_exact))
    assert (i8["reranker"], i8["combination_cosine"]) == ("ensemble", "int8")
    assert ex["combination_cosine"] == "exact"
    assert [s.score for s in r_int8.candidates] == [s.score for s in r_exact.candidates]
    assert 0 < r_int8.context.n_tokens <= 400
