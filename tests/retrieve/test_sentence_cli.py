"""``ragsieve index --sentences`` and ``ask --method pareto|saki`` as real subprocesses, with the
packaged local LLM; bad sentence options are one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import ask_json, run

from ragsieve.index.store import MANIFEST

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("method", ["pareto", "saki"])
def test_ask_with_a_sentence_method(sentence_index_dir: Path, method: str) -> None:
    out = ask_json(
        "When was Voyager 1 launched?", sentence_index_dir, "--method", method, "--k", "3"
    )
    assert out["method"] == method and out["trace"]["method"] == method
    ctx = out["context"]
    assert ctx and all(":s" in c["chunk_id"] for c in ctx)  # sentence-sized chunks
    assert "1977" in " ".join(c["text"] for c in ctx)
    assert out["trace"]["selected"] == [c["chunk_id"] for c in ctx]
    assert out["tokens"]["completion"] > 0


def test_index_sentences_flag_and_its_errors(tmp_path: Path, corpus_dir: Path) -> None:
    ix = tmp_path / "ix"
    doc = corpus_dir / "voyager.md"
    assert doc.is_file()
    p = run("index", str(doc), "--index", str(ix), "--sentences", "--pareto-context", "mean")
    assert p.returncode == 0, p.stderr
    cfg = json.loads((ix / MANIFEST).read_text())["config"]
    assert cfg["sentences"] is True and cfg["pareto_context"] == "mean"
    # A different context form on an existing index is a configuration clash (re-indexing
    # without the flags keeps the sentence configuration: the index's own is the default).
    p = run("index", str(doc), "--index", str(ix), "--pareto-context", "exact")
    assert p.returncode == 2 and "mean (asked exact)" in p.stderr
    p = run("index", str(doc), "--index", str(tmp_path / "b"), "--pareto-context", "mean")
    assert p.returncode == 2 and "go with --sentences" in p.stderr
    p = run("ask", "x", "--index", str(ix), "--method", "pareto", "--k", "0")
    assert p.returncode != 0 and "Traceback" not in p.stderr


def test_index_sentences_with_the_late_context(tmp_path: Path, corpus_dir: Path) -> None:
    ix = tmp_path / "late"
    doc = corpus_dir / "voyager.md"
    p = run("index", str(doc), "--index", str(ix), "--sentences", "--pareto-context", "late")
    assert p.returncode == 0, p.stderr
    assert json.loads((ix / MANIFEST).read_text())["config"]["pareto_context"] == "late"
    p = run("search", "golden record", "--index", str(ix), "--method", "pareto[context=late]")
    assert p.returncode == 0, p.stderr
    assert "record" in p.stdout.lower()
    p = run(
        "index", str(doc), "--index", str(tmp_path / "x"), "--sentences", "--pareto-context", "nope"
    )
    assert p.returncode == 2 and "exact, late" in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "x" / MANIFEST).exists()  # nothing was written
    # ... and on the existing index, which stays as it was and still answers.
    before = (ix / MANIFEST).read_text()
    p = run("index", str(doc), "--index", str(ix), "--sentences", "--pareto-context", "nope")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert (ix / MANIFEST).read_text() == before
    assert run("search", "golden record", "--index", str(ix), "--method", "pareto").returncode == 0
