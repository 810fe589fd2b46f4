"""The ``sage`` method: N candidates -> reranker -> gradient cut -> answer -> self-feedback.

Everything runs on a real LanceDB index of examples/corpus embedded by the packaged MiniLM. The
feedback loop's control flow is driven by a scripted OpenAI-compatible HTTP server (a stand-in
for the model, reached through the real ``OpenAICompatLLM`` client, as in tests/llm and
tests/serve) so that every stop reason is reached deterministically; one test runs the loop
with the real local SmolLM2 and checks the trace, not the model's judgement.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import Script, scripted_llm

from ragsieve.errors import ConfigError
from ragsieve.evaluate.runner import EvalConfig, run_eval, select_dataset
from ragsieve.index import Index, IndexConfig
from ragsieve.llm.cost import llm_cost
from ragsieve.methods import get_method, known_methods, parse_methods
from ragsieve.methods.naive import NaiveMethod
from ragsieve.methods.sage import SageConfig, SageMethod, scaled_min_k
from ragsieve.rerank.base import DEFAULT_RERANKER
from ragsieve.types import Answer

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
QUESTION = "When was Voyager 1 launched?"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """The sample corpus in 40-token chunks (65 chunks), so that N = 30 is a real cut."""
    idx = Index.create(
        tmp_path_factory.mktemp("sage") / "index", IndexConfig(chunker="fixed", chunk_tokens=40)
    )
    idx.add_paths([REPO / "examples" / "corpus"])
    assert idx.stats()["chunks"] > 30
    return idx


# ----------------------------------------------------------------------------- scripted LLM
def _check_token_accounting(ans: Answer, local: bool = False) -> None:
    """The answer's usage and cost are the sum of every call the loop made (a local model's
    cost: 0, no prices having been given)."""
    rounds = ans.trace["feedback"]["rounds"]
    prompt = sum(r["answer_tokens"]["prompt"] + r["feedback_tokens"]["prompt"] for r in rounds)
    completion = sum(
        r["answer_tokens"]["completion"] + r["feedback_tokens"]["completion"] for r in rounds
    )
    assert (ans.usage.prompt_tokens, ans.usage.completion_tokens) == (prompt, completion)
    assert ans.trace["llm"]["prompt_tokens"] == prompt
    assert ans.cost == (0.0 if local else pytest.approx(llm_cost(prompt, completion)))
    tok = ans.trace["feedback"]["tokens"]
    assert tok["answer"]["prompt"] + tok["feedback"]["prompt"] == prompt
    assert ans.to_json()["tokens"]["prompt"] == prompt


# ----------------------------------------------------------------------------- retrieval
def test_registry_options_and_config_defaults(index: Index) -> None:
    assert {"naive", "sage"} <= set(known_methods())
    m = get_method("sage", index, k=10, budget=None, retriever="dense", reranker=None)
    assert isinstance(m, SageMethod)
    c = m.config
    # min_k: the paper's 7 chunks of ~100 tokens, in this index's ~40-token chunks.
    mean = index.manifest["n_tokens"] / index.manifest["n_chunks"]
    assert 30 > c.min_k == scaled_min_k(mean, 30) == round(700 / mean) > 7
    assert (c.N, c.g, c.fs, c.max_rounds, c.feedback, c.k) == (30, 0.3, 9, 3, None, 10)
    assert c.reranker == DEFAULT_RERANKER  # reranker=None from the CLI means "the default"
    # eval-style NAME[key=value] specs reach SageConfig; "n"/"candidates" spell N.
    (spec,) = parse_methods("sage[feedback=false,min_k=4,g=0.5,n=20,selection=top-k]")
    c = get_method(spec.name, index, **spec.options).config
    assert (c.feedback, c.min_k, c.g, c.N, c.selection) == (False, 4, 0.5, 20, "top-k")
    assert m.config_dict()["min_k"] == m.config.min_k > 7
    for bad in ({"feeback": False}, {"g": 2.0}, {"fs": 11}, {"selection": "mcts"}, {"N": 0}):
        with pytest.raises(ConfigError):
            get_method("sage", index, **bad)
    # naive is untouched by the new method
    assert isinstance(get_method("naive", index, k=3), NaiveMethod)


def test_retrieve_context_follows_the_gradient_cut(index: Index) -> None:
    m = SageMethod(index, SageConfig(min_k=3, g=0.2, k=30))
    (r,) = m.retrieve([QUESTION])
    sel = r.trace["selection"]
    cands = r.candidates
    n = len(r.context.chunks)
    assert len(cands) == 30 == sel["candidates"]
    assert [s.score for s in cands] == sorted((s.score for s in cands), reverse=True)
    assert all("rerank" in s.scores for s in cands)
    # The context is the top-n prefix of the reranked candidates, n = the recorded cut.
    assert [s.chunk.id for s in r.context.chunks] == [s.chunk.id for s in cands[:n]]
    assert r.trace["selected"] == [s.chunk.id for s in cands[:n]]
    assert n == sel["cut"] >= 3
    assert (
        r.context.n_tokens == sum(s.chunk.n_tokens for s in cands[:n]) == r.trace["context_tokens"]
    )
    assert sel["scores"] == [round(s.score, 6) for s in cands]
    # Every chunk past min_k is within a 20% drop of its predecessor; the cut is a sharper drop.
    for i in range(3, n):
        assert cands[i].score >= 0.8 * cands[i - 1].score
    if sel["reason"] == "drop":
        assert cands[n].score < 0.8 * cands[n - 1].score
    else:
        assert sel["reason"] == "exhausted" and n == 30
    assert set(r.timings) == {"retrieve", "rerank", "select"}
    assert r.trace["method"] == "sage" and r.trace["N"] == 30


def test_g_orders_context_sizes_and_budget_and_top_k_ablation(index: Index) -> None:
    def size(**kw: Any) -> int:
        (r,) = SageMethod(index, SageConfig(min_k=3, k=30, **kw)).retrieve([QUESTION])
        return len(r.context.chunks)

    strict, default, loose = size(g=0.0), size(g=0.3), size(g=1.0)
    assert 3 <= strict <= default <= loose == 30  # bi-encoder cosines are all > 0 here
    assert size(selection="top-k", g=1.0) == 3
    (r,) = SageMethod(index, SageConfig(min_k=7, budget=100)).retrieve([QUESTION])
    assert 0 < r.context.n_tokens <= 100 and r.trace["selection"]["reason"] == "budget"


def test_eval_no_llm_runs_sage_variants(tmp_path: Path) -> None:
    docs = [
        {"id": "v", "title": "Voyager", "text": (REPO / "examples/corpus/voyager.md").read_text()},
        {"id": "b", "title": "Bees", "text": (REPO / "examples/corpus/honey-bees.md").read_text()},
    ]
    qs = [{"id": "q1", "question": QUESTION, "answers": ["1977"]}]
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(q) for q in qs) + "\n")
    ds = select_dataset(None, tmp_path / "q.jsonl", tmp_path / "c.jsonl", None, False)
    cfg = EvalConfig(
        methods=parse_methods("naive[k=2],sage[min_k=2,g=0],sage[min_k=2,g=1]"),
        no_llm=True,
        chunk_tokens=30,
        cache_dir=tmp_path / "cache",
    )
    res = run_eval(ds, cfg)
    rows = {r["method"]: r for r in res["per_question"]}
    assert rows["naive[k=2]"]["n_chunks"] == 2
    assert 2 <= rows["sage[min_k=2,g=0]"]["n_chunks"] <= rows["sage[min_k=2,g=1]"]["n_chunks"]
    assert res["methods"]["sage[min_k=2,g=1]"]["context_tokens"] > 0


# ----------------------------------------------------------------------------- feedback loop
def test_accepted_in_the_first_round(index: Index, scripted: tuple[Script, str]) -> None:
    script, url = scripted
    script.feedback = ["**Evaluation Score:** 9\n**Context Adjustment:** -1"]
    m = SageMethod(index, SageConfig(min_k=3, g=0.0))
    ans = m.ask(QUESTION, scripted_llm(url))
    fb = ans.trace["feedback"]
    assert script.kinds() == ["answer", "feedback"]
    assert (fb["stop"], fb["chosen_round"], len(fb["rounds"])) == ("accepted", 1, 1)
    r1 = fb["rounds"][0]
    assert (r1["feedback"]["score"], r1["feedback"]["adjustment"]) == (9, -1)
    assert r1["answer_tokens"] == {"prompt": 100, "completion": 3}
    assert r1["feedback_tokens"] == {"prompt": 200, "completion": 11}
    assert ans.text == "answer 0" and ans.method == "sage"
    assert "feedback" in ans.timings and "generate" in ans.timings
    # The feedback prompt is Figure 6 around the answer prompt and the answer.
    assert "**Original Answer:** answer 0" in script.calls[1]["content"]
    assert f"Question: {QUESTION}" in script.calls[1]["content"]
    _check_token_accounting(ans)


def test_more_context_rounds_keep_the_best_scored_answer(
    index: Index, scripted: tuple[Script, str]
) -> None:
    script, url = scripted
    script.feedback = [
        "Evaluation Score: 5\nContext Adjustment: 1",
        "Evaluation Score: 7/10. Context Adjustment: more context (1)",
        "Evaluation Score: 6\nContext Adjustment: 1",
    ]
    m = SageMethod(index, SageConfig(min_k=3, g=0.0, max_rounds=3))
    ans = m.ask(QUESTION, scripted_llm(url))
    fb = ans.trace["feedback"]
    # Three judgements; each "more context" re-cut with one chunk more and answered again.
    assert script.kinds() == ["answer", "feedback"] * 3
    assert [c["chunks"] for c in script.calls if c["kind"] == "answer"] == [3, 4, 5]
    assert [r["n_chunks"] for r in fb["rounds"]] == [3, 4, 5]
    assert [r["min_k"] for r in fb["rounds"]] == [3, 4, 5]
    assert [r["feedback"]["score"] for r in fb["rounds"]] == [5, 7, 6]
    assert (fb["stop"], fb["chosen_round"]) == ("max_rounds", 2)
    # The best-scored answer comes back with the context it was given.
    assert ans.text == "answer 1"
    assert [s.chunk.id for s in ans.context.chunks] == fb["rounds"][1]["selected"]
    assert ans.trace["selected"] == fb["rounds"][1]["selected"]
    assert ans.trace["llm"]["calls"] == 6
    _check_token_accounting(ans)
    assert ans.usage.prompt_tokens == (100 + 101 + 102) + (200 + 201 + 202)


def test_less_context_then_an_unreadable_reply_keeps_the_current_answer(
    index: Index, scripted: tuple[Script, str]
) -> None:
    script, url = scripted
    script.feedback = ["Evaluation Score: 4\nContext Adjustment: less context (-1)", "Looks good."]
    m = SageMethod(index, SageConfig(min_k=3, g=1.0, k=30))  # the cut runs to all 30
    ans = m.ask(QUESTION, scripted_llm(url))
    fb = ans.trace["feedback"]
    # "less" caps the next cut one below the chunks actually used (30 -> 29), even though
    # the gradient alone would have kept all 30 again.
    assert [r["n_chunks"] for r in fb["rounds"]] == [30, 29]
    assert (fb["rounds"][1]["min_k"], fb["rounds"][1]["max_k"]) == (29, 29)
    assert fb["rounds"][1]["cut_reason"] == "max_k"
    assert fb["rounds"][1]["feedback"]["score"] is None
    assert (fb["stop"], fb["chosen_round"]) == ("unparsed", 2)
    assert ans.text == "answer 1" and len(ans.context.chunks) == 29
    _check_token_accounting(ans)


def test_paper_step_that_leaves_the_context_unchanged_stops(
    index: Index, scripted: tuple[Script, str]
) -> None:
    script, url = scripted
    script.feedback = ["Evaluation Score: 3\nContext Adjustment: -1"]
    # min_k 7 -> 6 re-cuts to the same 30 chunks: asking again would repeat the same call.
    m = SageMethod(index, SageConfig(min_k=7, g=1.0, k=30, feedback_step="min_k"))
    ans = m.ask(QUESTION, scripted_llm(url))
    assert script.kinds() == ["answer", "feedback"]
    assert ans.trace["feedback"]["stop"] == "unchanged"
    _check_token_accounting(ans)


@pytest.mark.parametrize(
    ("reply", "stop"),
    [
        ("Evaluation Score: 3\nContext Adjustment: -1", "bounds"),  # 1 chunk, "less"
        ("Evaluation Score: 3", "no_adjustment"),
        (  # an echo of Figure 6's format is neither a score of 1 nor an adjustment of +1
            "Evaluation Score: [1-10]. (The answer is highly accurate if Score ≥ 9.)\n"
            "Context Adjustment: [1, -1].",
            "unparsed",
        ),
    ],
)
def test_loop_stops_without_another_answer(
    index: Index, scripted: tuple[Script, str], reply: str, stop: str
) -> None:
    script, url = scripted
    script.feedback = [reply]
    ans = SageMethod(index, SageConfig(min_k=1, g=0.0)).ask(QUESTION, scripted_llm(url))
    assert script.kinds() == ["answer", "feedback"]
    assert ans.trace["feedback"]["stop"] == stop and ans.text == "answer 0"
    _check_token_accounting(ans)


def test_feedback_false_is_one_call(index: Index, scripted: tuple[Script, str]) -> None:
    script, url = scripted
    m = get_method("sage", index, feedback=False, min_k=2, g=0.0)
    ans = m.ask(QUESTION, scripted_llm(url))
    assert script.kinds() == ["answer"]
    assert "feedback" not in ans.trace and ans.usage.prompt_tokens == 100
    assert len(ans.context.chunks) == 2 and ans.trace["config"]["feedback"] is False


def test_eval_with_an_llm_runs_the_feedback_loop(
    tmp_path: Path, scripted: tuple[Script, str]
) -> None:
    script, url = scripted
    script.feedback = ["Evaluation Score: 2\nContext Adjustment: 1"]
    doc = {"id": "v", "title": "Voyager", "text": (REPO / "examples/corpus/voyager.md").read_text()}
    (tmp_path / "c.jsonl").write_text(json.dumps(doc) + "\n")
    q = {"id": "q1", "question": QUESTION, "answers": ["1977"]}
    (tmp_path / "q.jsonl").write_text(json.dumps(q) + "\n")
    ds = select_dataset(None, tmp_path / "q.jsonl", tmp_path / "c.jsonl", None, False)
    cfg = EvalConfig(
        methods=parse_methods("sage[min_k=2,g=0,max_rounds=2]"),
        chunk_tokens=30,
        cache_dir=tmp_path / "cache",
    )
    res = run_eval(ds, cfg, llm=scripted_llm(url))
    (row,) = res["per_question"]
    assert script.kinds() == ["answer", "feedback"] * 2
    assert row["feedback_rounds"] == 2
    assert row["prompt_tokens"] == 100 + 101 + 200 + 201  # feedback calls are paid for
    assert row["n_chunks"] == 2  # round 1 (score 2) beats round 2 (score 2, later)
    assert row["prediction"] == "answer 0"


def test_min_k_scales_with_the_index_chunk_size() -> None:
    """7 paper chunks of ~100 tokens: 4 fixed 200-token chunks, 7 SAGE segments, 1 paragraph
    of 512 tokens, never more than N."""
    assert [scaled_min_k(t, 30) for t in (200, 100, 512, 40)] == [4, 7, 1, 18]
    assert scaled_min_k(10, 12) == 12 and scaled_min_k(0, 30) == 7


def test_cli_ask_method_sage_json(tmp_path: Path, scripted: tuple[Script, str]) -> None:
    script, url = scripted
    script.feedback = ["Evaluation Score: 10\nContext Adjustment: 1"]
    idx_dir = tmp_path / "idx"
    Index.create(idx_dir).add_paths([REPO / "examples" / "corpus" / "voyager.md"])
    p = subprocess.run(
        [
            *(sys.executable, "-m", "ragsieve.cli", "ask", QUESTION, "--index", str(idx_dir)),
            *("--method", "sage", "--llm", f"openai:scripted@{url}", "--json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OPENAI_API_KEY": "k"},
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["method"] == "sage" and out["answer"] == "answer 0"
    assert out["trace"]["feedback"]["stop"] == "accepted"
    assert out["tokens"]["prompt"] == 100 + 200
    assert out["trace"]["selection"]["selector"] == "gradient"


# ----------------------------------------------------------------------------- real LLM
def test_feedback_loop_with_the_local_llm(index: Index, smollm2: Any) -> None:
    m = SageMethod(index, SageConfig(min_k=3, g=0.0, max_rounds=2, feedback=True))
    ans = m.ask(QUESTION, smollm2, max_tokens=32)
    fb = ans.trace["feedback"]
    assert 1 <= len(fb["rounds"]) <= 2
    assert fb["stop"] in {
        "accepted",
        "max_rounds",
        "unparsed",
        "no_adjustment",
        "bounds",
        "unchanged",
    }
    for i, r in enumerate(fb["rounds"], start=1):
        assert r["round"] == i and r["feedback_tokens"]["prompt"] > 0
        assert r["answer_tokens"]["prompt"] > 0 and r["n_chunks"] == len(r["selected"]) >= 2
        assert isinstance(r["feedback"]["reply"], str)
    chosen = fb["rounds"][fb["chosen_round"] - 1]
    assert ans.text == chosen["answer"]
    assert [s.chunk.id for s in ans.context.chunks] == chosen["selected"]
    _check_token_accounting(ans, local=True)


# ----------------------------------------------------------------------------- total budget


def _unbounded_calls(index: Index, url: str) -> list[dict[str, Any]]:
    m = SageMethod(index, SageConfig(min_k=3, g=0.0, max_rounds=3))
    return m.ask(QUESTION, scripted_llm(url)).trace["llm"]["call_tokens"]


def test_total_budget_stops_feedback_before_a_judgement_that_does_not_fit(
    index: Index, scripted: tuple[Script, str]
) -> None:
    script, url = scripted
    script.feedback = ["Evaluation Score: 5\nContext Adjustment: 1"]
    free = _unbounded_calls(index, url)
    assert [c["call"] for c in free] == ["answer", "feedback"] * 3
    assert [c["prompt"] for c in free] == [100, 200, 101, 201, 102, 202]
    script.calls.clear()
    # Room for answer, judgement, answer, but not for the second judgement with room for an
    # answer as long as the last one after it.
    total = 100 + 200 + 101 + free[3]["estimate"] + 101 - 1
    m = SageMethod(index, SageConfig(min_k=3, g=0.0, max_rounds=3))
    ans = m.ask(QUESTION, scripted_llm(url), total_budget=total)
    assert script.kinds() == ["answer", "feedback", "answer"]
    fb = ans.trace["feedback"]
    assert fb["stop"] == "budget" and len(fb["rounds"]) == 1
    # The answer given on the judge's advice comes back, unjudged, with its context.
    assert ans.text == "answer 1" and len(ans.context.chunks) == 4
    calls = ans.trace["llm"]["call_tokens"]
    assert [c["prompt"] for c in calls] == [100, 200, 101]
    assert ans.usage.prompt_tokens == 401 == ans.trace["llm"]["prompt_spent"] <= total
    assert ans.trace["llm"]["total_budget"] == total and ans.trace["llm"]["calls"] == 3


def test_total_budget_trims_the_first_context_or_refuses_in_one_line(
    index: Index, scripted: tuple[Script, str]
) -> None:
    script, url = scripted
    script.feedback = ["Evaluation Score: 9\nContext Adjustment: -1"]
    m = SageMethod(index, SageConfig(min_k=3, g=0.0, feedback=False))
    first = _unbounded_calls(index, url)[0]["estimate"]  # three chunks, at cl100k
    script.calls.clear()
    ans = m.ask(QUESTION, scripted_llm(url), total_budget=first - 1)
    assert script.calls == [{"kind": "answer", "chunks": 2}]
    assert ans.trace["total_budget_cap"] == {"total_budget": first - 1, "dropped": 1}
    assert len(ans.context.chunks) == 2 and ans.trace["selected"] == [
        s.chunk.id for s in ans.context.chunks
    ]
    with pytest.raises(ConfigError, match="raise --total-budget") as e:
        m.ask(QUESTION, scripted_llm(url), total_budget=5)
    assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="total budget"):
        m.ask(QUESTION, scripted_llm(url), total_budget=0)
