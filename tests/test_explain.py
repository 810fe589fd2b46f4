"""``ragsieve explain``: the report read from a real method's trace, and a real PNG."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error

from ragsieve.errors import ConfigError
from ragsieve.explain import explain, text_lines
from ragsieve.index import Index

pytestmark = pytest.mark.integration

Q = "In which year did Champollion announce the decipherment of hieroglyphs?"


def test_report_of_a_gradient_cut(sample_index_dir: Path) -> None:
    r, rep = explain(Q, Index.open(sample_index_dir), "sage[min_k=2,feedback=false]")
    assert rep["method"] == "sage"
    curve = rep["score_curve"]
    assert [c["rank"] for c in curve] == list(range(1, len(curve) + 1))
    scores = [c["score"] for c in curve]
    assert scores == sorted(scores, reverse=True)
    # The selection is a prefix of the curve (the cut), and it is what the context holds.
    n_sel = sum(c["selected"] for c in curve)
    assert [c["selected"] for c in curve] == [True] * n_sel + [False] * (len(curve) - n_sel)
    assert rep["selected"] == [s.chunk.id for s in r.context.chunks]
    assert rep["cut"]["cut"] == n_sel and rep["cut"]["min_k"] == 2
    assert rep["tokens"]["selected"] == r.context.n_tokens <= rep["tokens"]["candidates"]
    assert set(rep["seconds"]) >= {"retrieve", "rerank", "select"}
    lines = text_lines(rep)
    assert lines[0].startswith("method sage") and any("cut=" in ln for ln in lines)


def test_cli_writes_a_png_and_json(sample_index_dir: Path, tmp_path: Path) -> None:
    png = tmp_path / "why.png"
    cmd = [sys.executable, "-m", "ragsieve.cli", "explain", Q, "--index", str(sample_index_dir)]
    p = subprocess.run(
        [*cmd, "--method", "naive", "--k", "3", "--plot", str(png), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["method"] == "naive" and len(rep["selected"]) == 3
    # the selected chunks are marked inside their documents, which segments cover whole
    marked = {g["chunk_id"] for d in rep["documents"] for g in d["segments"] if g["selected"]}
    assert marked == set(rep["selected"])
    for d in rep["documents"]:
        assert d["segments"][0]["start"] == 0
        assert all(a["end"] == b["start"] for a, b in pairwise(d["segments"]))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    bad = subprocess.run(
        [*cmd, "--plot", str(tmp_path / "why.svg")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode != 0 and "--plot must name a .png" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_search_with_a_method_prints_its_context(sample_index_dir: Path) -> None:
    cmd = [sys.executable, "-m", "ragsieve.cli", "search", Q, "--index", str(sample_index_dir)]
    p = subprocess.run(
        [*cmd, "--method", "carrot[reranker=bm25]", "--budget", "300", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["method"] == "carrot[reranker=bm25]" and out["results"]
    assert out["trace"]["context_tokens"] <= 300
    assert out["trace"]["selected"] == [r["chunk_id"] for r in out["results"]]
    assert out["trace"]["selection"]["best_path"]
    bad = subprocess.run([*cmd, "--budget", "300"], capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "--budget needs --method" in bad.stderr


def test_evidence_documents_cover_each_document(sentence_index_dir: Path) -> None:
    """SAKI's selected sentences lie inside its chunk candidates: the sentences stay visible
    (laid down first) and the segments cover each document's text exactly."""
    from ragsieve.explain import evidence_documents, evidence_report

    idx = Index.open(sentence_index_dir)
    r, rep = explain(Q, idx, "saki")
    assert not {s.chunk.id for s in r.context.chunks} <= {s.chunk.id for s in r.candidates}
    docs = evidence_documents(idx, r)
    assert docs[0]["title"] == "The Rosetta Stone"  # the selected context's document first
    kept: list[str] = []
    for d in docs:
        text = idx.get_document(d["doc_id"]).text
        segs = d["segments"]
        assert segs[0]["start"] == 0 and segs[-1]["end"] == len(text)
        assert all(a["end"] == b["start"] for a, b in pairwise(segs))
        assert all(s["text"] == text[s["start"] : s["end"]] for s in segs)
        kept += [s["chunk_id"] for s in segs if s["selected"]]
    assert sorted(kept) == sorted(rep["selected"])  # each selected sentence exactly once
    # A selection passed in (an answer's final context) replaces the retrieval's.
    one = rep["selected"][:1]
    docs = evidence_documents(idx, r, selected=one, max_documents=1, gap_chars=20)
    assert len(docs) == 1
    segs = docs[0]["segments"]
    assert [s["chunk_id"] for s in segs if s["selected"]] == one
    elided = [s for s in segs if s.get("elided")]
    assert all(" … " in s["text"] and s["score"] is None for s in elided)
    assert all(len(s["text"]) == 43 and s["elided"] == s["end"] - s["start"] - 40 for s in elided)
    # The report the viewer reads: explain's JSON plus the documents.
    full = evidence_report(idx, r)
    assert {k: v for k, v in full.items() if k != "documents"} == rep and full["documents"]


def test_explain_never_builds_an_llm(sample_index_dir: Path) -> None:
    """An LLM judge is refused in one line before any model loads (explain calls no LLM), from
    the CLI and from Python alike; the model-free judges still explain."""
    cmd = [sys.executable, "-m", "ragsieve.cli", "explain", Q, "--index", str(sample_index_dir)]
    p = subprocess.run(
        [*cmd, "--method", "saki[judge=llm,llm=local:/no/such.gguf]"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    line = assert_one_line_error(p, 2, "explain never calls the LLM")
    assert "judge=llm" in line
    with pytest.raises(ConfigError, match="never calls the LLM"):
        explain(Q, Index.open(sample_index_dir), "saki[judge=llm]")
