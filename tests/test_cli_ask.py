"""``ask`` as a newcomer meets it: the default precise method, ``--compare`` side by side (what
``make demo`` prints), and the LLM's context window respected by every method (real SmolLM2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run
from rich_docs import write_folder

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
    assert [a["cost"] for a in out["answers"]] == [0, 0]  # the local model, no prices given
    # Every kept unit says where it sits (each sample file opens with a "# Title" heading).
    assert all(c["where"] for a in out["answers"] for c in a["context"])
    p = run(*base, "--compare", "naive")
    assert p.returncode == 0, p.stderr
    for row in ("answer", "context tokens", "prompt tokens", "seconds", "kept"):
        assert row in p.stdout
    # the tagger's span beside the answers (naive gives none)
    assert default["span"] is not None and "answer span" in p.stdout
    assert default["span"]["text"].split()[0] in p.stdout
    assert "sentence" in p.stdout and "fewer prompt tokens than naive" in p.stdout
    assert "cost" not in p.stdout


def test_compare_says_where_each_kept_unit_sits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On real PDFs, HTML and DOCX: ``--compare --json`` gives ``where`` on every context item
    (as ``ask --json`` does), and the table names the page beside each kept unit it lists."""
    folder = write_folder(tmp_path / "docs")
    idx = tmp_path / "ix"
    assert run("index", str(folder), "--index", str(idx)).returncode == 0
    base = ["ask", "When was the dredger Albatross commissioned?", "--index", str(idx)]
    base += ["--k", "3", "--max-tokens", "16", "--compare", "naive"]
    p = run(*base, "--json")
    assert p.returncode == 0, p.stderr
    naive, default = json.loads(p.stdout)["answers"]
    assert all(isinstance(c["where"], str) for a in (naive, default) for c in a["context"])
    top = next(c for c in default["context"] if "Albatross" in c["text"])
    assert top["where"] == "page 3" and top["title"] == "Harbour report"
    chunk = next(c for c in naive["context"] if "Albatross" in c["text"])
    assert chunk["where"] in ("page 3", "pages 2-3")
    monkeypatch.setenv("COLUMNS", "240")  # wide enough that no place is folded
    p = run(*base)
    assert p.returncode == 0, p.stderr
    assert "Harbour report (page 3): " in p.stdout
    # Retrieval is deterministic: the table lists the same first units, each with its place.
    listed = [c for a in (naive, default) for c in a["context"][:3] if c["where"]]
    assert listed and all(f"{c['title']} ({c['where']}): " in p.stdout for c in listed)


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
    p = run(*base, "--method", "sage[max_rounds=1,feedback=true]", "--llm-ctx", "1024")
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


def test_the_answer_span_beside_the_answer_and_alone(sample_index_dir: Path) -> None:
    """With the packaged reader the span is the answer line, its span line under it and the
    LLM's reply below (``span`` and ``reply`` in ``--json``); a choice question's line is the
    option the reply names and a yes/no question's its yes or no, each with the span and the
    reply below; ``--llm none`` answers with the span alone, and a method without spans says
    it has none."""
    q = "In which year did Champollion announce the decipherment of hieroglyphs?"
    base = ["ask", q, "--index", str(sample_index_dir), "--k", "3"]
    p = run(*base, "--max-tokens", "12")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('span: "'))
    assert at == 1 and at < lines.index("") and "the answer line)" in lines[at]
    assert lines[0] == lines[at].split('"')[1] and "1822" in lines[0]  # the span answers
    assert lines[at + 1].startswith("reply (") and lines[at + 1].split("): ", 1)[1].strip()
    p = run(*base, "--max-tokens", "12", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["answer"] == out["span"]["text"] and out["trace"]["answer"] == "span"
    assert out["reply"] and out["reply"] == lines[at + 1].split("): ", 1)[1]
    # Which of two: the line is the option the reply names, the span and the whole reply below.
    choice = "Who announced the decipherment of hieroglyphs, Thomas Young or Champollion?"
    p = run("ask", choice, *base[2:], "--max-tokens", "24")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "Champollion" and "the tagger's answer)" in lines[1]
    assert lines[2].startswith("reply (") and "Champollion" in lines[2].split("): ", 1)[1]
    # Yes or no: the line is the reply's yes or no, the span and the whole reply below.
    yes_no = "Did Champollion announce the decipherment of hieroglyphs in 1822?"
    p = run("ask", yes_no, *base[2:], "--max-tokens", "24")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] in ("yes", "no") and "the tagger's answer)" in lines[1]
    assert lines[2].startswith("reply (") and lines[0] in lines[2].lower()
    p = run(*base, "--llm", "none", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    span = out["span"]
    assert out["answer"] == span["text"] and span["in_context"] is True
    assert out["tokens"]["prompt"] == 0 and out["trace"]["llm"] is None
    unit = next(c for c in out["context"] if c["chunk_id"] == span["chunk_id"])
    assert unit["start"] <= span["start"] < span["end"] <= unit["end"]
    assert unit["text"][span["start"] - unit["start"] : span["end"] - unit["start"]] == span["text"]
    p = run(*base, "--llm", "none")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(span["text"] + "\n")
    line = next(line for line in p.stdout.splitlines() if line.startswith('span: "'))
    assert "no LLM asked" in line
    assert line.endswith(f"[{span['chunk_id']}], chars {span['start']}-{span['end']}")
    assert "tokens: none (no LLM asked)" in p.stdout
    p = run(*base, "--llm", "none", "--method", "naive")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("(no answer span: the method gives none") and "context (naive)" in (
        p.stdout
    )
    p = run(*base, "--llm", "none", "--compare", "naive")
    assert_one_line_error(p, 2, "--compare compares LLM answers")
    p = run(*base, "--llm", "none", "--llm-ctx", "512")
    assert_one_line_error(p, 2, "--llm none has none")


def test_a_question_the_documents_do_not_answer_abstains(sample_index_dir: Path) -> None:
    for q, why in (("?", "no word to look for"), ("What is the boiling point of tungsten?", "")):
        p = run("ask", q, "--index", str(sample_index_dir), "--max-tokens", "16")
        assert p.returncode == 0, p.stderr
        first = p.stdout.splitlines()[0]
        assert first.startswith("The indexed documents do not answer this question"), p.stdout
        assert why in first and "best evidence found:" in p.stdout
        p = run("ask", q, "--index", str(sample_index_dir), "--llm", "none", "--json")
        out = json.loads(p.stdout)
        assert (out["answer"], out["abstained"]) == (None, True) and out["line"]["why"]
    p = run("ask", BEES, "--index", str(sample_index_dir), "--llm", "none", "--json")
    out = json.loads(p.stdout)
    assert out["abstained"] is False and "Frisch" in out["answer"] and out["confidence"] > 0
    assert out["line"]["kind"] == "span" and out["line"]["text"] == out["answer"]
    assert out["line"]["confidence"] == out["confidence"] and out["line"]["span"] == out["span"]
