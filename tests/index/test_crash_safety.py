"""Kill ``ragsieve index`` with SIGKILL in the middle of a write: the old index must survive."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragsieve.index import Index
from ragsieve.index.store import MANIFEST, sha256_text

pytestmark = pytest.mark.integration

N_DOCS = 200


def _make_corpus(folder: Path, n: int) -> None:
    folder.mkdir()
    for i in range(n):
        body = " ".join(
            f"Document {i} sentence {j} talks about topic {i * 7 + j} in some detail."
            for j in range(12)
        )
        (folder / f"doc{i:03d}.txt").write_text(body, encoding="utf-8")


def _versions(index_dir: Path) -> int:
    return len(list((index_dir / "chunks.lance" / "_versions").iterdir()))


def test_sigkill_mid_write_leaves_previous_index_usable(
    writable_index: Path, tmp_path: Path
) -> None:
    before = json.loads((writable_index / MANIFEST).read_text())
    corpus = tmp_path / "more"
    # The indexer segments 64 documents at a time and flushes a batch of chunks (one Lance
    # commit) after each; 200 documents give four flushes, so waiting for the second commit
    # kills it with two flushes, the full-text index and the manifest still to come.
    _make_corpus(corpus, N_DOCS)
    env = {**os.environ, "RAGSIEVE_WRITE_BATCH_CHUNKS": "4"}  # flush after every batch
    start_versions = _versions(writable_index)
    cmd = [sys.executable, "-m", "ragsieve.cli", "index", str(corpus), "--index"]
    cmd.append(str(writable_index))
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while time.time() < deadline and _versions(writable_index) <= start_versions + 1:
        assert proc.poll() is None, "indexer finished before it could be killed"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # New Lance versions were written, but the manifest still names the old ones.
    assert _versions(writable_index) > start_versions + 1
    after = json.loads((writable_index / MANIFEST).read_text())
    assert after["tables"] == before["tables"]
    idx = Index.open(writable_index)
    assert idx.stats()["documents"] == before["n_documents"]
    assert idx.chunks_table.count_rows() == before["n_chunks"]
    hits = idx.bm25_search("Champollion", 3)
    assert hits and "rosetta" in hits[0][0].doc_id
    # Re-running completes, with nothing duplicated or lost.
    done = subprocess.run(
        [*cmd, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["added"] == N_DOCS
    idx = Index.open(writable_index)
    assert idx.stats()["documents"] == before["n_documents"] + N_DOCS
    ids = idx.chunks_table.to_table().column("id").to_pylist()
    assert len(ids) == len(set(ids)) == idx.stats()["chunks"]


# ------------------------------------------------------------------ kills at random points

ROUNDS = 5
N_LOOP_DOCS = 60


def _write_round(folder: Path, rnd: int) -> dict[str, str]:
    """(Re)write every document with text unique to this round; return doc_id -> sha256."""
    folder.mkdir(exist_ok=True)
    hashes = {}
    for i in range(N_LOOP_DOCS):
        body = " ".join(
            f"Round {rnd} document {i} sentence {j} is about subject {i * 13 + j + rnd}."
            for j in range(10)
        )
        path = folder / f"doc{i:03d}.txt"
        path.write_text(body, encoding="utf-8")
        hashes[str(path.resolve())] = sha256_text(body)
    return hashes


def _check_consistent(index_dir: Path) -> dict[str, str]:
    """The committed index is internally consistent; returns its doc_id -> sha256."""
    idx = Index.open(index_dir)
    hashes = idx.document_hashes()
    chunks = idx.chunks_table.to_table().select(["id", "doc_id"])
    ids = chunks.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "duplicated chunks"
    assert set(chunks.column("doc_id").to_pylist()) == set(hashes), "chunks and documents differ"
    assert idx.bm25_search("Champollion", 1), "full-text index unusable"
    return hashes


def test_sigkill_at_random_points_never_corrupts(writable_index: Path, tmp_path: Path) -> None:
    """Kills at seeded random moments while a new version of the corpus is being indexed.

    A first, complete run measures how long one run takes (T); each later round rewrites every
    document and kills the indexer at a random moment in [0.1 T, 1.1 T], so kills land during
    start-up, segmentation, the batch flushes, the full-text rebuild and the manifest swap, and
    some runs finish. After every round the committed index must be exactly the previous state
    or exactly the new one, never a mix; a final run completes with nothing duplicated or lost.
    """
    rng = random.Random(20261123)
    corpus = tmp_path / "loop"
    env = {**os.environ, "RAGSIEVE_WRITE_BATCH_CHUNKS": "4"}
    cmd = [sys.executable, "-m", "ragsieve.cli", "index", str(corpus), "--index"]
    base = _check_consistent(writable_index)
    new = _write_round(corpus, 0)
    t0 = time.perf_counter()
    first = subprocess.run([*cmd, str(writable_index)], env=env, capture_output=True, timeout=300)
    full_run = time.perf_counter() - t0
    assert first.returncode == 0, first.stderr
    committed = _check_consistent(writable_index)
    assert committed == {**base, **new}
    outcomes = []
    for rnd in range(1, ROUNDS + 1):
        new = _write_round(corpus, rnd)
        delay = rng.uniform(0.1, 1.1) * full_run
        proc = subprocess.Popen(
            [*cmd, str(writable_index)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            proc.wait(timeout=delay)
            how = "finished"
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            how = f"killed at {delay:.1f}s of {full_run:.1f}s"
        state = _check_consistent(writable_index)
        if state == {**committed, **new}:
            committed = state
            outcomes.append(f"{how}: new state")
        else:
            assert state == committed, f"round {rnd}: index is neither the old nor the new state"
            outcomes.append(f"{how}: old state")
    print("kill outcomes:", outcomes)
    assert any(o.startswith("killed") for o in outcomes), outcomes
    done = subprocess.run(
        [*cmd, str(writable_index)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    final = _check_consistent(writable_index)
    assert final == {**base, **new}
    assert Index.open(writable_index).bm25_search(f"Round {ROUNDS} document 17", 3)
