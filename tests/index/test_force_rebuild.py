"""``index --force`` rebuilds beside the old index: a bad embedder, or a SIGKILL or SIGINT at any
point of the rebuild, leaves the previous index answering the same search with the same
document count. Real ``ragsieve`` subprocesses on a real LanceDB index."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ragsieve.index.store import LOCK, MANIFEST

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "examples" / "corpus"
ONE = CORPUS / "voyager.md"
EMBEDDER = "minilm-onnx"
QUERY = "Who deciphered the hieroglyphs?"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragsieve.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def _force_one(
    idx: Path, *more: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``index ONE --force --sentences`` on ``idx``: a rebuild that reaches every commit point."""
    args = ["index", str(ONE), "--index", str(idx), "--force", "--sentences"]
    return _cli(*args, "--embedder", EMBEDDER, *more, env=env)


def _state(index: Path) -> tuple[int, list[tuple[str, str, float]]]:
    """(documents, the top-5 hits of QUERY) as the CLI reports them."""
    r = _cli("info", "--index", str(index), "--json")
    assert r.returncode == 0, r.stderr
    docs = json.loads(r.stdout)["documents"]
    r = _cli("search", QUERY, "--index", str(index), "--json", "-k", "5")
    assert r.returncode == 0, r.stderr
    hits = [
        (h["doc_id"], h["chunk_id"], round(h["score"], 5)) for h in json.loads(r.stdout)["results"]
    ]
    return docs, hits


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    idx = tmp_path_factory.mktemp("force") / "idx"
    r = _cli("index", str(CORPUS), "--index", str(idx), "--embedder", EMBEDDER)
    assert r.returncode == 0, r.stderr
    return idx, _state(idx)


def test_force_with_a_bad_embedder_keeps_the_old_index(built: tuple[Path, Any]) -> None:
    """The issue's case: the folder was left holding only the lock file."""
    idx, before = built
    manifest = (idx / MANIFEST).read_text()
    for bad in ("st:/no/such/model", "nosuchembedder"):
        r = _cli("index", str(ONE), "--index", str(idx), "--force", "--embedder", bad)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("error: ") and "Traceback" not in r.stderr
        assert (idx / MANIFEST).read_text() == manifest
    # A bad option (not only the embedder) touches nothing either.
    r = _cli("index", str(ONE), "--index", str(idx), "--force", "--chunker", "nosuch")
    assert r.returncode == 2 and (idx / MANIFEST).read_text() == manifest
    assert _state(idx) == before


@pytest.mark.parametrize(
    "point",
    [
        "after_chunks_write",
        "after_sentences_write",
        "after_documents_write",
        "after_fts_index",
        "before_manifest_replace",
    ],
)
def test_force_killed_mid_rebuild_keeps_the_old_index(built: tuple[Path, Any], point: str) -> None:
    """SIGKILL at each commit point of a --force rebuild (with a sentence table, so every
    point is reached) before the manifest replace: the old index answers as before, and the
    next --force rebuild then succeeds."""
    idx, before = built
    r = _force_one(idx, env={"RAGSIEVE_FAULT": point})
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert _state(idx) == before


def test_force_interrupted_at_random_points_then_completed(
    built: tuple[Path, Any], tmp_path: Path
) -> None:
    """SIGINT and SIGKILL at random moments once the rebuild holds the write lock; then a
    rebuild that completes replaces the index, and the dropped sentence table goes with it."""
    idx, before = built
    rng = random.Random(32)
    for sig in (signal.SIGINT, signal.SIGKILL, signal.SIGINT):
        (idx / LOCK).unlink(missing_ok=True)
        args = ["index", str(CORPUS), "--index", str(idx), "--force", "--sentences"]
        p = subprocess.Popen(
            [sys.executable, "-m", "ragsieve.cli", *args, "--embedder", EMBEDDER],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and p.poll() is None:
            lock = idx / LOCK
            if lock.exists() and lock.read_text().startswith(f"pid {p.pid} "):
                break
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 1.0))
        if p.poll() is None:
            p.send_signal(sig)
        _, err = p.communicate(timeout=120)
        if p.returncode == 0:  # finished before the signal: nothing to check this round
            continue
        assert "Traceback" not in err
        assert _state(idx) == before

    r = _force_one(idx, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total_documents"] == 1
    assert (idx / "sentences.lance").is_dir()
    r = _cli("index", str(ONE), "--index", str(idx), "--force", "--embedder", EMBEDDER)
    assert r.returncode == 0, r.stderr
    assert not (idx / "sentences.lance").exists()
    docs, hits = _state(idx)
    assert docs == 1 and {h[0] for h in hits} == {str(ONE.resolve())}
