"""A sentence table added to an index built without one (issue 46 item 1): through the CLI
(``ragsieve index FOLDER --sentences``) and ``Index.add_sentences``, from the chunks already
stored, atomically, with progress; and the refusals that remain name the user's options."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run

from ragsieve.errors import ConfigError
from ragsieve.index import Index, IndexConfig
from ragsieve.index.sentences import SENTENCES
from ragsieve.index.store import FAULT_ENV, MANIFEST
from ragsieve.progress import EVERY_S

pytestmark = pytest.mark.integration


def _chunks(where: Path) -> dict[str, tuple[str, list[float]]]:
    t = Index.open(where).chunks_table.to_table(columns=["id", "text", "vector"])
    return {
        i: (text, vec)
        for i, text, vec in zip(
            t["id"].to_pylist(), t["text"].to_pylist(), t["vector"].to_pylist(), strict=True
        )
    }


def _search_pareto(where: Path) -> subprocess.CompletedProcess[str]:
    return run("search", "What did Voyager carry?", "--index", str(where), "--method", "pareto")


def test_cli_adds_the_table_from_the_stored_chunks(
    sample_index_dir: Path, corpus_dir: Path, tmp_path: Path
) -> None:
    ix = tmp_path / "ix"
    shutil.copytree(sample_index_dir, ix)
    before = _chunks(ix)
    with pytest.raises(ConfigError, match="--sentences"):
        Index.open(ix).sentences_table  # noqa: B018

    t0 = time.monotonic()
    cmd = ["index", str(corpus_dir), "--index", str(ix), "--sentences"]
    p = subprocess.Popen(
        [sys.executable, "-m", "ragsieve.cli", *cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert p.stderr is not None
    stamps = [(time.monotonic() - t0, line.rstrip()) for line in p.stderr]
    assert p.wait(timeout=600) == 0, stamps
    lines = [line for _, line in stamps]
    n_docs = Index.open(ix).stats()["documents"]
    # Piped progress: the stage starts, and ends with its count, while the command runs.
    assert f"sentence table: 0/{n_docs}" in lines, lines
    assert any(ln.startswith(f"sentence table: {n_docs}/{n_docs} done in") for ln in lines), lines
    ends = [t for t, ln in stamps if ln.startswith("sentence table:") and "done in" in ln]
    starts = [t for t, ln in stamps if ln == f"sentence table: 0/{n_docs}"]
    if ends[0] - starts[0] >= 2 * EVERY_S + 5:  # a long stage speaks between its ends
        assert any(ln.startswith("sentence table:") and "s)" in ln for ln in lines), lines

    manifest = json.loads((ix / MANIFEST).read_text())
    assert SENTENCES in manifest["tables"] and manifest["config"]["sentences"] is True
    assert manifest["n_sentences"] > 20
    # The summary says what was added and what the index holds: sentences, no chunks.
    assert p.stdout is not None
    said, n_sents = p.stdout.read(), manifest["n_sentences"]
    assert f": 0 chunks, 0 tokens, {n_sents} sentences in " in said, said
    assert said.rstrip().endswith(f" chunks, {n_sents} sentences"), said
    # Nothing re-chunked or re-embedded: the same chunk rows and vectors.
    assert _chunks(ix) == before
    # Every document's sentences are there, and the sentence methods now answer.
    idx = Index.open(ix)
    rows = idx.sentence_rows(None)
    assert set(rows["doc_id"].to_pylist()) == {d["doc_id"] for d in idx.documents()}
    found = _search_pareto(ix)
    assert found.returncode == 0, found.stderr
    assert "Voyager" in found.stdout or "record" in found.stdout.lower(), found.stdout
    # Again: nothing to add, nothing written.
    again = run("index", str(corpus_dir), "--index", str(ix), "--sentences")
    assert again.returncode == 0, again.stderr
    assert json.loads((ix / MANIFEST).read_text())["tables"] == manifest["tables"]
    assert ", 0 sentences in " in again.stdout, again.stdout
    assert again.stdout.rstrip().endswith(f" chunks, {n_sents} sentences"), again.stdout


def test_added_table_equals_one_built_with_the_index(corpus_dir: Path, tmp_path: Path) -> None:
    cfg = IndexConfig(sentences=True, pareto_context="mean", link_distance=4)
    built = Index.create(tmp_path / "built", cfg)
    built.add_paths([corpus_dir])
    plain = Index.create(tmp_path / "plain")
    plain.add_paths([corpus_dir])
    heard: list[tuple[str, int, int]] = []
    report = plain.add_sentences(cfg, progress=lambda s, d, n: heard.append((s, d, n)))
    assert report.sentences is not None and report.n_chunks == 0
    assert plain.config == cfg and plain.has_sentences
    n_docs = plain.stats()["documents"]
    mine = [(d, n) for s, d, n in heard if s == "sentence table"]
    assert mine[0] == (0, n_docs) and mine[-1] == (n_docs, n_docs)
    assert all(0 <= d <= n == n_docs for d, n in mine)
    a = built.sentence_rows(None, ["vector", "context", "pareto"]).sort_by("id")
    b = Index.open(tmp_path / "plain").sentence_rows(None, ["vector", "context", "pareto"])
    b = b.sort_by("id")
    assert report.sentences.n_sentences == a.num_rows == b.num_rows
    for col in ("id", "doc_id", "idx", "passage", "text", "start", "end", "link_idx"):
        assert a[col].to_pylist() == b[col].to_pylist(), col
    for col in ("vector", "context", "pareto"):
        va = np.asarray(a[col].to_pylist(), dtype=np.float32)
        vb = np.asarray(b[col].to_pylist(), dtype=np.float32)
        np.testing.assert_allclose(va, vb, atol=1e-5)
    # The recorded config (what `repair` reads) names the table too.
    meta = Index.open(tmp_path / "plain").chunks_table.schema.metadata
    assert json.loads(meta[b"ragsieve"])["config"]["sentences"] is True
    # Asked again with the same options: nothing to do; with others: a clash, by option name.
    assert plain.add_sentences(cfg).sentences.n_sentences == 0  # type: ignore[union-attr]
    other = IndexConfig(sentences=True, pareto_context="exact")
    with pytest.raises(ConfigError, match=r"--pareto-context mean \(asked exact\)") as e:
        plain.add_sentences(other)
    assert "IndexConfig.link_distance 4 (asked 8)" in str(e.value)
    assert "\n" not in str(e.value) and "(unset)" not in str(e.value)


def test_a_killed_add_leaves_the_plain_index_answering(
    sample_index_dir: Path, corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ix = tmp_path / "ix"
    shutil.copytree(sample_index_dir, ix)
    before = (ix / MANIFEST).read_text()
    monkeypatch.setenv(FAULT_ENV, "after_sentences_write")
    killed = run("index", str(corpus_dir), "--index", str(ix), "--sentences")
    assert killed.returncode == -9, killed.stderr
    monkeypatch.delenv(FAULT_ENV)
    assert (ix / MANIFEST).read_text() == before
    idx = Index.open(ix)
    assert not idx.has_sentences and idx.config == IndexConfig()
    assert run("search", "Voyager", "--index", str(ix)).returncode == 0
    # The next try rolls back what the killed one wrote and commits.
    retry = run("index", str(corpus_dir), "--index", str(ix), "--sentences")
    assert retry.returncode == 0, retry.stderr
    assert Index.open(ix).has_sentences
    assert _search_pareto(ix).returncode == 0


def test_a_failed_add_in_python_leaves_the_index_as_it_was(
    sample_index_dir: Path, tmp_path: Path
) -> None:
    ix = tmp_path / "ix"
    shutil.copytree(sample_index_dir, ix)
    before = (ix / MANIFEST).read_text()
    idx = Index.open(ix)

    def fail(stage: str, done: int, total: int) -> None:
        if stage == "sentence table" and done == total:
            raise RuntimeError("stopped by the test")

    with pytest.raises(RuntimeError, match="stopped by the test"):
        idx.add_sentences(progress=fail)
    assert (ix / MANIFEST).read_text() == before
    assert idx.config == IndexConfig() and not idx.has_sentences
    assert not Index.open(ix).has_sentences
    assert idx.dense_search(idx.embedder.embed(["Voyager"]), 2)[0]


def test_other_differences_are_refused_by_option_name(
    writable_index: Path, corpus_dir: Path
) -> None:
    with pytest.raises(ConfigError) as e:
        Index.open_or_create(writable_index, IndexConfig(chunk_tokens=50, sentences=True))
    msg = str(e.value)
    assert "--chunk-tokens 200 (asked 50)" in msg and "no --sentences" in msg, msg
    assert "chunk_tokens=" not in msg and "(unset)" not in msg and "\n" not in msg
    p = run("index", str(corpus_dir), "--index", str(writable_index), "--chunker", "paragraph")
    assert p.returncode == 2 and "--chunker fixed (asked paragraph)" in p.stderr, p.stderr


def test_repair_after_an_add_keeps_the_table(corpus_dir: Path, tmp_path: Path) -> None:
    from ragsieve.index.repair import repair

    ix = tmp_path / "ix"
    idx = Index.create(ix, IndexConfig(embedder="minilm-onnx"))
    idx.add_paths([corpus_dir / "voyager.md"])
    idx.add_sentences()
    n = Index.open(ix).stats()["sentence_rows"]
    (ix / MANIFEST).unlink()
    report = repair(ix)
    assert report.action == "rebuilt" and report.config_from == "tables"
    again = Index.open(ix)
    assert again.config.sentences and again.has_sentences
    assert again.stats()["sentence_rows"] == n > 0


def test_sentence_options_are_compared_only_where_both_sides_record_them() -> None:
    from ragsieve.index.config import config_mismatch

    plain = IndexConfig()
    asked = IndexConfig(chunk_tokens=50, sentences=True, pareto_context="exact")
    msg = config_mismatch("ix", plain, asked)
    assert "--chunk-tokens 200 (asked 50)" in msg and "no --sentences" in msg, msg
    assert "--pareto-context" not in msg, msg  # the index without the table has no context form
    msg = config_mismatch("ix", plain, IndexConfig(pareto_context="exact"))
    assert "--pareto-context late (asked exact)" in msg, msg
