"""``ragsieve explain``: the report read from a real method's trace, and a real PNG."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
