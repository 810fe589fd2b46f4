"""The evaluation runner and ``ragsieve eval`` end to end on a small generic dataset."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ragsieve.errors import ConfigError
from ragsieve.evaluate.runner import (
    EvalConfig,
    markdown_table,
    run_eval,
    select_dataset,
)
from ragsieve.methods import parse_methods

DOCS = [
    {
        "id": "bees",
        "title": "Bees",
        "text": "Honey bees live in colonies. The queen lays eggs. "
        "Workers forage for nectar. Karl von Frisch decoded the waggle dance.",
    },
    {
        "id": "stone",
        "title": "Stone",
        "text": "The Rosetta Stone was found in 1799. "
        "Champollion deciphered hieroglyphs in 1822. It is in the British Museum.",
    },
    {
        "id": "probe",
        "title": "Probe",
        "text": "Voyager 1 was launched in 1977. "
        "It reached interstellar space in 2012. It carries a Golden Record.",
    },
]
QUESTIONS = [
    {
        "id": "q1",
        "question": "Who decoded the waggle dance?",
        "answers": ["Karl von Frisch"],
        "evidence": ["Karl von Frisch decoded the waggle dance."],
    },
    {
        "id": "q2",
        "question": "When were hieroglyphs deciphered?",
        "answers": ["1822"],
        "evidence": ["Champollion deciphered hieroglyphs in 1822."],
    },
    {
        "id": "q3",
        "question": "When did Voyager 1 reach interstellar space?",
        "answers": ["2012"],
        "evidence": ["It reached interstellar space in 2012."],
    },
]


def _write(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "questions.jsonl"
    corpus = tmp_path / "corpus.jsonl"
    data.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    corpus.write_text("\n".join(json.dumps(d) for d in DOCS) + "\n")
    return data, corpus


def test_parse_methods_with_options() -> None:
    specs = parse_methods("naive, naive[retriever=bm25,k=3,budget=None]")
    assert [s.label for s in specs] == ["naive", "naive[retriever=bm25,k=3,budget=None]"]
    assert specs[1].options == {"retriever": "bm25", "k": 3, "budget": None}
    with pytest.raises(ConfigError):
        parse_methods("naive[k]")
    with pytest.raises(ConfigError):
        parse_methods("naive,naive")
    with pytest.raises(ConfigError):
        parse_methods(" , ")


@pytest.mark.integration
def test_run_eval_no_llm_on_a_shared_corpus(tmp_path: Path) -> None:
    data, corpus = _write(tmp_path)
    ds = select_dataset(None, data, corpus, None, False)
    cfg = EvalConfig(
        methods=parse_methods("naive[k=1],naive[k=3]"),
        no_llm=True,
        cache_dir=tmp_path / "c",
        chunk_tokens=16,
    )
    res = run_eval(ds, cfg)
    one, three = res["methods"]["naive[k=1]"], res["methods"]["naive[k=3]"]
    assert res["n_questions"] == 3 and one["n"] == 3
    # Chunks of <= 16 tokens hold one or two sentences; the top 3 find every evidence sentence.
    assert three["evidence_recall"] == pytest.approx(1.0)
    assert three["answer_recall"] == pytest.approx(1.0)
    assert one["evidence_recall"] >= 1 / 3
    assert three["context_tokens"] > one["context_tokens"]
    assert 0 < three["evidence_precision"] < 1
    assert three["mrr"] > 0.5
    assert "retrieve" in one["latency"]
    # The second run reuses the cached index.
    again = run_eval(ds, cfg)
    assert again["index"]["build_seconds"] == 0.0


@pytest.mark.integration
def test_eval_cli_writes_results_table_and_plot(tmp_path: Path) -> None:
    data, corpus = _write(tmp_path)
    out = tmp_path / "out"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragsieve.cli",
            "eval",
            "--data",
            str(data),
            "--corpus",
            str(corpus),
            "--methods",
            "naive,naive[retriever=hybrid]",
            "--no-llm",
            "--k",
            "2",
            "--chunk-tokens",
            "12",
            "--cache-dir",
            str(tmp_path / "c"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert "| naive |" in p.stdout and "| naive[retriever=hybrid] |" in p.stdout
    # Piped, each stage says when it starts and ends (issue 33: 91 s of silence before).
    assert "naive[retriever=hybrid]: 0/" in p.stderr and "done in" in p.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["n_questions"] == 3 and set(res["methods"]) == {"naive", "naive[retriever=hybrid]"}
    rows = [json.loads(x) for x in (out / "per_question.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and {r["method"] for r in rows} == set(res["methods"])
    assert (out / "quality_vs_tokens.png").read_bytes()[:4] == b"\x89PNG"


def test_eval_cli_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q1", "question": "x", "answers": ["a"]}\n{oops\n')
    for args, fragment in [
        (["--data", str(bad)], "bad.jsonl"),
        (["--dataset", "nope"], "unknown dataset"),
        (["--data", str(bad), "--methods", "naive,wizard"], "unknown method"),
        ([], "exactly one of"),
    ]:
        p = subprocess.run(
            [sys.executable, "-m", "ragsieve.cli", "eval", "--no-llm", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 2, (args, p.stderr)
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and fragment in lines[0], lines


@pytest.mark.integration
def test_the_answer_span_is_scored_as_an_answer(tmp_path: Path) -> None:
    """A method that gives spans (the tagger) has every question's span scored as an answer
    with no LLM (``span_em``, ``span_f1``, a missing span a wrong answer); a method without
    spans has no such column; ``--llm none`` is ``--no-llm``."""
    from ragsieve.metrics.answer import f1

    data, corpus = _write(tmp_path)
    ds = select_dataset(None, data, corpus, None, False)
    cfg = EvalConfig(
        methods=parse_methods("naive[k=2],tagger[k=2]"),
        llm="none",
        cache_dir=tmp_path / "c",
        chunk_tokens=16,
    )
    assert cfg.no_llm
    res = run_eval(ds, cfg)
    assert res["llm"] is None
    rows = {(r["method"], r["id"]): r for r in res["per_question"]}
    gold = {q["id"]: q["answers"] for q in QUESTIONS}
    for q in QUESTIONS:
        naive, tagger = rows[("naive[k=2]", q["id"])], rows[("tagger[k=2]", q["id"])]
        assert "span_f1" not in naive and "f1" not in naive and "f1" not in tagger
        span = tagger["span_prediction"]
        assert tagger["span_f1"] == pytest.approx(f1(span, gold[q["id"]]))
        assert tagger["span_em"] in (0.0, 1.0) and (span or tagger["span_f1"] == 0)
    summary = res["methods"]["tagger[k=2]"]
    assert summary["span_f1"] == pytest.approx(
        sum(rows[("tagger[k=2]", q["id"])]["span_f1"] for q in QUESTIONS) / len(QUESTIONS)
    )
    assert summary["span_f1"] > 0  # three one-fact questions: the span finds an answer
    table = markdown_table(res)
    assert "span_em | span_f1" in table and "llm=None" in table


@pytest.mark.integration
def test_with_the_packaged_reader_f1_scores_the_answer_line(tmp_path: Path, smollm2: Any) -> None:
    """With the packaged reader the tagger's ``f1`` scores the answer line (the span where it
    answers), ``reply_f1`` the LLM's reply alone, and ``answer_from`` says which; naive has no
    span, so its line is its reply."""
    from ragsieve.metrics.answer import f1

    data, corpus = _write(tmp_path)
    ds = select_dataset(None, data, corpus, None, False)
    cfg = EvalConfig(
        methods=parse_methods("naive[k=2],tagger[k=2]"),
        cache_dir=tmp_path / "c",
        chunk_tokens=16,
        max_tokens=16,
    )
    res = run_eval(ds, cfg, llm=smollm2)
    rows = {(r["method"], r["id"]): r for r in res["per_question"]}
    gold = {q["id"]: q["answers"] for q in QUESTIONS}
    froms = set()
    for q in QUESTIONS:
        naive, tagger = rows[("naive[k=2]", q["id"])], rows[("tagger[k=2]", q["id"])]
        assert naive["answer_from"] == "reply" and naive["prediction"] == naive["reply"]
        assert naive["f1"] == naive["reply_f1"]
        line = tagger["span_prediction"] if tagger["answer_from"] == "span" else tagger["reply"]
        assert tagger["prediction"] == line
        assert tagger["f1"] == pytest.approx(f1(line, gold[q["id"]]))
        assert tagger["reply_f1"] == pytest.approx(f1(tagger["reply"], gold[q["id"]]))
        froms.add(tagger["answer_from"])
    assert froms == {"span"}  # one-fact wh-questions, each with a span: the span answers
    assert "| f1 | reply_f1 | span_em | span_f1 |" in markdown_table(res)  # both, side by side


@pytest.mark.integration
def test_an_abstention_before_any_llm_is_a_row_of_its_own(tmp_path: Path, smollm2: Any) -> None:
    """A question naming a rare word no passage mentions abstains before the reader is asked:
    its row says so (``answer_from`` ``abstain``, no LLM call), with and without a reader."""
    data, corpus = _write(tmp_path)
    rare = {"id": "q4", "question": "Who decoded the Kyber waggle cipher?", "answers": ["x"]}
    data.write_text(data.read_text() + json.dumps(rare) + "\n")
    ds = select_dataset(None, data, corpus, None, False)
    cfg = EvalConfig(methods=parse_methods("tagger[k=2]"), cache_dir=tmp_path / "c")
    for llm in (smollm2, None):
        cfg.no_llm = llm is None
        res = run_eval(ds, cfg, llm=llm)
        row = {r["id"]: r for r in res["per_question"]}["q4"]
        assert row["abstained"] and row["confidence"] == 0.0
        if llm is not None:
            assert row["answer_from"] == "abstain" and row["llm_calls"] == 0
            assert row["prediction"] == "" and row["f1"] == 0.0
