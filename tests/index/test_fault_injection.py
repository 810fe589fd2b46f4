"""SIGKILL a real ``ragsieve`` writer at each named point of a commit (``RAGSIEVE_FAULT``).

One trial per point here, rotating what is written (new documents, a changed document, a removed
document); benchmarks/bench_crash.py runs ten or more per point and prints the table in
BENCHMARKS.md. After each kill the index must open with its tables in agreement, hold exactly
the old or the new state, answer searches, and a rerun must reach the new state.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ragsieve.index import Index, IndexConfig
from ragsieve.index.store import FAULT_ENV, FAULT_POINTS, MANIFEST, sha256_text

pytestmark = pytest.mark.integration

EMBEDDER = "minilm-onnx"


def _cli(*args: str, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    if fault:
        env[FAULT_ENV] = fault
    return subprocess.run(
        [sys.executable, "-m", "ragsieve.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _write(path: Path, tag: str) -> None:
    path.write_text(
        f"{tag}: a lighthouse on a rocky cape.\n\nIts keeper {tag} logs the ships at night.\n",
        encoding="utf-8",
    )


def _state(index: Path) -> dict[str, str]:
    """doc_id -> sha256 of the committed index, after checking its tables agree."""
    idx = Index.open(index)
    hashes = idx.document_hashes()
    docs = idx.documents_table.to_table()
    n_of = dict(zip(docs["doc_id"].to_pylist(), docs["n_chunks"].to_pylist(), strict=True))
    chunks = idx.chunks_table.to_table()
    ids = chunks["id"].to_pylist()
    assert len(ids) == len(set(ids)), "duplicated chunks"
    assert Counter(chunks["doc_id"].to_pylist()) == {d: n for d, n in n_of.items() if n}
    assert idx.stats()["documents"] == len(hashes) and idx.stats()["chunks"] == len(ids)
    sents = set(idx.sentences_table.to_table()["doc_id"].to_pylist())
    assert sents == {d for d, n in n_of.items() if n}, "sentences and documents disagree"
    q = idx.embedder.embed(["lighthouse keeper"])
    assert idx.dense_search(q, 2)[0] and idx.bm25_search("lighthouse keeper", 2)
    assert idx.sentence_search(q[0], 2).num_rows
    return hashes


def _prepare(
    tmp_path: Path, scenario: str
) -> tuple[Path, list[str], dict[str, str], dict[str, str]]:
    """A fresh sentence-table index of four notes, the write command, the old and new states."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(4):
        _write(corpus / f"base{i}.md", f"base {i}")
    index = tmp_path / "index"
    # built in-process (the same store code) to save a subprocess; the writes under test are
    # real ``ragsieve`` processes
    Index.create(index, IndexConfig(embedder=EMBEDDER, sentences=True)).add_paths([corpus])
    old = _state(index)
    new = dict(old)
    if scenario == "add":
        more = tmp_path / "more"
        more.mkdir()
        for i in range(2):
            path = more / f"new{i}.md"
            _write(path, f"new {i}")
            new[str(path.resolve())] = sha256_text(path.read_text())
        cmd = ["index", str(more), "--index", str(index)]
    elif scenario == "update":
        doc = corpus / "base1.md"
        _write(doc, "changed")
        new[str(doc.resolve())] = sha256_text(doc.read_text())
        cmd = ["index", str(corpus), "--index", str(index)]
    else:
        victim = str((corpus / "base2.md").resolve())
        new.pop(victim)
        cmd = ["rm", victim, "--index", str(index)]
    return index, cmd, old, new


@pytest.mark.parametrize("n_point", list(enumerate(FAULT_POINTS)), ids=FAULT_POINTS)
def test_sigkill_at_each_commit_point(tmp_path: Path, n_point: tuple[int, str]) -> None:
    n, point = n_point
    scenario = ("add", "update", "remove")[n % 3]
    index, cmd, old, new = _prepare(tmp_path, scenario)
    r = _cli(*cmd, fault=point)
    assert r.returncode == -9, f"{point} was not reached by {scenario}: {r.stderr}"
    got = _state(index)
    assert got in (old, new), f"{point}/{scenario}: neither the old nor the new state"
    # Before the manifest replace nothing is visible; after it, everything is.
    assert got == (new if point == "after_manifest_replace" else old)
    again = _cli(*cmd)
    assert again.returncode == 0 or "no such document" in again.stderr, again.stderr
    assert _state(index) == new


def test_repair_after_a_kill_falls_back_to_the_last_commit(tmp_path: Path) -> None:
    """A write killed after its table writes, then the manifest lost: the newest table versions
    hold uncommitted rows, and repair must pick the last committed snapshot, not a mix."""
    index, cmd, old, new = _prepare(tmp_path, "update")
    assert _cli(*cmd, fault="after_documents_write@2").returncode == -9
    (index / MANIFEST).unlink()
    r = _cli("repair", "--index", str(index))
    assert r.returncode == 0, r.stderr
    assert "newer uncommitted version(s) dropped" in r.stdout
    assert _state(index) == old
    assert _cli(*cmd).returncode == 0
    assert _state(index) == new
