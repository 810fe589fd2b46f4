"""Write safety of an index through the real CLI: lost manifests, repair, waiting writers,
read-only indexes. Every command is a real ``ragsieve`` subprocess on a real LanceDB index."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ragsieve.index.location import Location
from ragsieve.index.store import LOCK, MANIFEST

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "examples" / "corpus"
EMBEDDER = "minilm-onnx"  # the packaged MiniLM through ONNX Runtime: the quickest to start


def _cli(*args: str, env: dict[str, str] | None = None, timeout: int = 300) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "ragsieve.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ragsieve.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _info(index: Path) -> dict[str, Any]:
    r = _cli("info", "--index", str(index), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    out.pop("updated")
    out.pop("path")
    return out


def _search(index: Path, query: str) -> list[tuple[str, str, float]]:
    r = _cli("search", query, "--index", str(index), "--json", "-k", "5")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["results"]
    return [(h["doc_id"], h["chunk_id"], round(h["score"], 5)) for h in hits]


def _files(index: Path) -> dict[str, int]:
    """Every file under the index with its size (the lock file aside)."""
    return {
        str(f.relative_to(index)): f.stat().st_size
        for f in index.rglob("*")
        if f.is_file() and f.name != LOCK
    }


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def _doc_ids(index: Path) -> set[str]:
    from ragsieve.index import Index

    return set(Index.open(index).document_hashes())


# ------------------------------------------------------------------ lost manifest


def test_lost_manifest_is_refused_then_repaired(tmp_path: Path) -> None:
    """The issue's case: an index whose ragsieve.json was deleted is never overwritten."""
    idx = tmp_path / "idx"
    r = _cli("index", str(CORPUS), "--index", str(idx), "--embedder", EMBEDDER)
    assert r.returncode == 0, r.stderr
    state = _info(idx)
    hits = _search(idx, "Who deciphered the hieroglyphs?")
    assert state["documents"] == 4 and hits

    (idx / MANIFEST).unlink()
    before = _files(idx)
    new = tmp_path / "quokka.md"
    new.write_text("Quokkas are small marsupials that live on Rottnest Island.\n")
    r = _cli("index", str(new), "--index", str(idx))
    assert r.returncode == 3
    line = _one_error_line(r.stderr)
    assert f"ragsieve repair --index {idx}" in line and "--force" in line
    assert _files(idx) == before, "a refused write changed the index"
    for cmd in (["info"], ["search", "hieroglyphs"], ["rm", "x"]):
        r = _cli(*cmd, "--index", str(idx))
        assert r.returncode == 3 and "repair" in _one_error_line(r.stderr)

    r = _cli("repair", "--index", str(idx))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"rebuilt {MANIFEST}") and "4 documents" in r.stdout
    assert _info(idx) == state
    assert _search(idx, "Who deciphered the hieroglyphs?") == hits
    r = _cli("repair", "--index", str(idx))
    assert r.returncode == 0 and "nothing to repair" in r.stdout

    r = _cli("index", str(new), "--index", str(idx), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total_documents"] == 5
    assert _doc_ids(idx) == {str(p.resolve()) for p in [*CORPUS.iterdir(), new]}
    assert _search(idx, "marsupials on Rottnest")[0][0] == str(new.resolve())


def test_force_rebuilds_and_a_killed_first_run_starts_over(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    assert _cli("index", str(CORPUS), "--index", str(idx), "--embedder", EMBEDDER).returncode == 0
    (idx / MANIFEST).unlink()
    one = CORPUS / "voyager.md"
    r = _cli("index", str(one), "--index", str(idx), "--force", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total_documents"] == 1
    assert _doc_ids(idx) == {str(one.resolve())}

    # A first run killed after creating its empty tables, before its first manifest: the
    # tables never held a row, so the next run starts over without asking.
    fresh = tmp_path / "fresh"
    r = _cli(
        "index",
        str(one),
        "--index",
        str(fresh),
        "--embedder",
        EMBEDDER,
        env={"RAGSIEVE_FAULT": "create_before_manifest"},
    )
    assert r.returncode == -9
    assert not (fresh / MANIFEST).exists() and (fresh / "chunks.lance").is_dir()
    r = _cli("index", str(one), "--index", str(fresh), "--embedder", EMBEDDER, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total_documents"] == 1

    # A directory holding anything else is never taken over, --force or not.
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    r = _cli("index", str(one), "--index", str(other), "--force")
    assert r.returncode == 2 and "not a ragsieve index" in _one_error_line(r.stderr)
    assert sorted(os.listdir(other)) == ["notes.txt"]


def test_repair_without_tables_is_one_line_exit_3(tmp_path: Path) -> None:
    r = _cli("repair", "--index", str(tmp_path))
    assert r.returncode == 3 and "--force" in _one_error_line(r.stderr)
    assert os.listdir(tmp_path) == []  # not even a lock file


# ------------------------------------------------------------------ writers wait


def _tiny_docs(folder: Path, tag: str, n: int) -> set[str]:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"{tag}{i}.txt").write_text(f"Note {tag} {i}: the {tag} fact number {i}.\n")
    return {str(p.resolve()) for p in folder.iterdir()}


def test_two_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    """Two ``ragsieve index`` processes on one index at once (the first trial creates it):
    both sets of documents end up indexed. benchmarks/bench_writers.py runs 10 trials."""
    idx = tmp_path / "idx"
    expected: set[str] = set()
    for trial in range(2):
        a = _tiny_docs(tmp_path / f"a{trial}", f"a{trial}x", 5)
        b = _tiny_docs(tmp_path / f"b{trial}", f"b{trial}y", 5)
        procs = [
            _spawn(
                "index", str(tmp_path / f"{s}{trial}"), "--index", str(idx), "--embedder", EMBEDDER
            )
            for s in ("a", "b")
        ]
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        expected |= a | b
        assert _doc_ids(idx) == expected


def test_a_writer_waits_for_the_lock_then_gives_up(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    assert _cli("index", str(CORPUS), "--index", str(idx), "--embedder", EMBEDDER).returncode == 0
    doc = str((CORPUS / "voyager.md").resolve())
    with Location(idx).write_lock(LOCK):  # a real flock, as another writer holds it
        r = _cli("rm", doc, "--index", str(idx), "--wait", "1")
        assert r.returncode == 3
        line = _one_error_line(r.stderr.replace(r.stderr.splitlines()[0] + "\n", "", 1))
        assert "being written by another process" in line and "after waiting 1 s" in line
        assert r.stderr.startswith("waiting up to 1 s for the write lock")
        assert f"pid {os.getpid()}" in r.stderr
        waiter = _spawn("rm", doc, "--index", str(idx), "--wait", "120")
        time.sleep(10)  # start-up takes a few seconds; then it must be waiting, not failing
        assert waiter.poll() is None, "the writer did not wait for the lock"
        assert doc in _doc_ids(idx)
    _, err = waiter.communicate(timeout=120)
    assert waiter.returncode == 0, err
    assert "waiting up to 120 s for the write lock" in err
    assert doc not in _doc_ids(idx)


# ------------------------------------------------------------------ read-only index


def _readonly_prefix(target: Path) -> list[str] | None:
    """A command prefix that runs in a private mount namespace where ``target`` is a read-only
    bind mount: read-only for root too (chmod is not). None where that is not permitted."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    script = f"mount --bind '{target}' '{target}' && mount -o remount,bind,ro '{target}' && "
    probe = subprocess.run(
        [unshare, "-m", "sh", "-c", script + f"! touch '{target}/.probe' 2>/dev/null"],
        capture_output=True,
    )
    if probe.returncode != 0 or (target / ".probe").exists():
        return None
    return [unshare, "-m", "sh", "-c", script + 'exec "$@"', "sh"]


def test_read_only_index_is_one_line_exit_3(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    assert _cli("index", str(CORPUS), "--index", str(idx), "--embedder", EMBEDDER).returncode == 0
    prefix = _readonly_prefix(idx)
    if prefix is None:
        pytest.skip("no read-only bind mount here (needs unshare -m and mount as root)")
    before = _files(idx)
    py = [sys.executable, "-m", "ragsieve.cli"]
    doc = str((CORPUS / "voyager.md").resolve())
    new = tmp_path / "new.md"
    new.write_text("A new note about lighthouses and their keepers.\n")
    for cmd in (["rm", doc], ["index", str(new)], ["repair"]):
        r = subprocess.run(
            [*prefix, *py, *cmd, "--index", str(idx)], capture_output=True, text=True, timeout=300
        )
        if cmd[0] == "repair":  # a valid manifest: nothing to write, so nothing to refuse
            assert r.returncode in (0, 3), r.stderr
            continue
        assert r.returncode == 3, r.stderr
        assert "is read-only" in _one_error_line(r.stderr)
    assert _files(idx) == before
    assert _info(idx)["documents"] == 4
