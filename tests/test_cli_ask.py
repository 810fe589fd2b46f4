"""``ask`` as a newcomer meets it: the default precise method, ``--compare`` side by side (what
``make demo`` prints), and the LLM's context window respected by every method (real SmolLM2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run

pytestmark = pytest.mark.integration

BEES = "Who decoded the honey bee waggle dance?"


def test_compare_prints_naive_and_the_default_side_by_side(sample_index_dir: Path) -> None:
    base = ["ask", BEES, "--index", str(sample_index_dir), "--k", "4", "--max-tokens", "24"]
    p = run(*base, "--compare", "naive", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    naive, default = out["answers"]
    assert (naive["method"], default["method"]) == ("naive", "tagger")  # tagger is the default
    assert "Frisch" in default["answer"]
    assert default["tokens"]["prompt"] * 2 < naive["tokens"]["prompt"]
    assert out["prompt_token_ratio"] == pytest.approx(
        naive["tokens"]["prompt"] / default["tokens"]["prompt"], abs=0.01
    )
    assert all(a["seconds"] > 0 for a in out["answers"])
    p = run(*base, "--compare", "naive")
    assert p.returncode == 0, p.stderr
    for row in ("answer", "context tokens", "prompt tokens", "seconds", "kept"):
        assert row in p.stdout
    assert "sentence" in p.stdout and "fewer prompt tokens than naive" in p.stdout


def test_every_method_fits_the_llms_window(sample_index_dir: Path) -> None:
    """Twelve chunks would overflow a 700-token window: the lowest-scored go; SAGE (feedback
    on, one round to keep the test short) answers in 1,024 tokens, every call fitting."""
    base = ["ask", BEES, "--index", str(sample_index_dir), "--max-tokens", "32", "--json"]
    p = run(*base, "--method", "naive", "--k", "12", "--llm-ctx", "700")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    cap = out["trace"]["window_cap"]
    assert (
        cap["n_ctx"] == 700 and cap["dropped"] >= 1 and len(out["context"]) == 12 - cap["dropped"]
    )
    assert out["tokens"]["prompt"] + 32 <= 700
    p = run(*base, "--method", "sage[max_rounds=1]", "--llm-ctx", "1024")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["answer"] and out["trace"]["llm"]["n_ctx"] == 1024
    calls = out["trace"]["llm"]["call_tokens"]
    assert all(c["prompt"] + 48 <= 1024 for c in calls)
    # The judge reads a context trimmed to the window too: the feedback loop runs.
    assert out["trace"]["feedback"]["rounds"] and "feedback" in [c["call"] for c in calls]


def test_a_ranking_is_by_score_and_a_context_says_it_is_one(sample_index_dir: Path) -> None:
    base = ["search", BEES, "--index", str(sample_index_dir)]
    ranked = json.loads(run(*base, "--k", "5", "--json").stdout)
    scores = [r["score"] for r in ranked["results"]]
    assert ranked["order"] == "score" and scores == sorted(scores, reverse=True)
    ctx = json.loads(run(*base, "--method", "tagger", "--json").stdout)
    assert ctx["order"] == "context" and ctx["method"] == "tagger"
    p = run(*base, "--method", "tagger")
    assert p.returncode == 0, p.stderr
    head = p.stdout.splitlines()[0]
    assert head.startswith("context of tagger: ") and "in the order the LLM reads them" in head
    assert " sentence" in head and "chunk" not in head  # a sentence is called a sentence
    assert not any(line.lstrip().startswith("1.") for line in p.stdout.splitlines())
