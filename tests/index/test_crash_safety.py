"""Kill ``ragsieve index`` with SIGKILL in the middle of a write: the old index must survive."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragsieve.index import Index
from ragsieve.index.store import MANIFEST

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
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ragsieve.cli",
            "index",
            str(corpus),
            "--index",
            str(writable_index),
        ],
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
        [
            sys.executable,
            "-m",
            "ragsieve.cli",
            "index",
            str(corpus),
            "--index",
            str(writable_index),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["added"] == N_DOCS
    idx = Index.open(writable_index)
    assert idx.stats()["documents"] == before["n_documents"] + N_DOCS
    ids = idx.chunks_table.to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)) == idx.stats()["chunks"]
