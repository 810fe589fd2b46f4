"""The Ray engine: CLI mistakes, a real two-node Ray cluster on 127.0.0.1, and the same index
content as the local engine (on a ``file://`` URL and on S3).

Ray session files go to a private short temporary directory (``RAY_TMPDIR``; Unix socket paths
must stay under 108 bytes), so nothing is left in /tmp/ray, and every process the tests start
is stopped by its process group and PID in a ``finally``.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")
pytest.importorskip("lance_ray", reason="the ray extra is not installed (pip install -e '.[ray]')")

from ragsieve import search
from ragsieve.errors import InputError
from ragsieve.index import Index, IndexConfig
from ragsieve.index.ray_engine import WORKER_NICENESS_ENV, add_paths_ray, ray_session
from ragsieve.index.store import MANIFEST

pytestmark = pytest.mark.integration

DEFAULT_CLUSTER_FILE = Path("/tmp/ray/ray_current_cluster")
CHUNK_COLS = ["id", "doc_id", "idx", "title", "text", "start", "end", "sent_start", "sent_end"]


# ---------------------------------------------------------------------------------- helpers
def _make_docs(folder: Path, n: int) -> None:
    """Generated documents of varied length (one spans several chunks), a .jsonl, a stray file."""
    folder.mkdir(parents=True)
    for i in range(n):
        body = " ".join(
            f"Report {i} notes that sample {j} of batch {i * 3 + j} was stored at {j + 4} degrees."
            for j in range(4 + (i % 5) * 9)
        )
        (folder / f"report-{i:02d}.txt").write_text(body, encoding="utf-8")
    records = [
        {"id": f"rec-{k}", "title": f"Record {k}", "text": f"Field note {k}: otters use stones."}
        for k in range(3)
    ]
    (folder / "notes.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (folder / "figure.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")


def _table(idx: Index, name: str, key: str) -> dict[str, list[Any]]:
    t = getattr(idx, name).to_table().sort_by(key)
    return {c: t[c].to_pylist() for c in t.column_names}


def _assert_same_index(local: Index, ray_idx: Index) -> None:
    """Same chunk ids, texts, spans and token counts; vectors equal within float tolerance."""
    a, b = _table(local, "chunks_table", "id"), _table(ray_idx, "chunks_table", "id")
    assert len(a["id"]) > 0
    for col in [*CHUNK_COLS, "n_tokens"]:
        assert a[col] == b[col], col
    va, vb = np.array(a["vector"], dtype=np.float32), np.array(b["vector"], dtype=np.float32)
    assert va.shape == vb.shape == (len(a["id"]), 384)
    np.testing.assert_allclose(va, vb, atol=2e-5)
    da, db = (
        _table(local, "documents_table", "doc_id"),
        _table(ray_idx, "documents_table", "doc_id"),
    )
    assert da == db
    for key in ("n_documents", "n_chunks", "n_tokens", "fts", "config", "dim"):
        assert local.manifest[key] == ray_idx.manifest[key], key


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _processes_mentioning(marker: str) -> list[int]:
    """PIDs whose command line names ``marker`` (our private Ray temp dir): ours, nobody else's."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if marker.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
    return pids


@contextlib.contextmanager
def _private_ray_tmpdir() -> Iterator[str]:
    """A short private RAY_TMPDIR; removes it, and a default cluster file we caused, after."""
    tmp = tempfile.mkdtemp(prefix="rsray-", dir="/tmp")
    had_default = DEFAULT_CLUSTER_FILE.exists()
    try:
        yield tmp
    finally:
        for pid in _processes_mentioning(tmp):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if not had_default and DEFAULT_CLUSTER_FILE.exists():
            with contextlib.suppress(OSError):
                DEFAULT_CLUSTER_FILE.unlink()
        shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------------- (a) CLI mistakes
@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--engine", "spark"], "unknown engine 'spark'"),
        (["--address", "127.0.0.1:6379"], "--address and --workers need --engine ray"),
        (["--engine", "ray", "--address", "127.0.0.1:{port}"], "cannot join the Ray cluster"),
    ],
)
def test_cli_rejects_bad_engine_options_before_creating_anything(
    tmp_path: Path, corpus_dir: Path, args: list[str], fragment: str
) -> None:
    index_dir = tmp_path / "index"
    port = str(_free_port())  # nothing listens there: the command must not wait for Ray
    cmd = [sys.executable, "-m", "ragsieve.cli", "index", str(corpus_dir), "--index"]
    cmd += [str(index_dir), *(a.replace("{port}", port) for a in args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)  # guards a hang
    assert p.returncode == 2, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], p.stderr
    assert not index_dir.exists()


# --------------------------------------------------------------- (b) a real two-node cluster
def _start_node(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``ray start --block`` in its own session: one process group to stop it with."""
    ray_cli = str(Path(sys.executable).with_name("ray"))
    with open(log, "wb") as out:
        return subprocess.Popen(
            [ray_cli, "start", "--block", "--disable-usage-stats", *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_started(proc: subprocess.Popen[bytes], log: Path, deadline: float) -> None:
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"ray start exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        if "Ray runtime started" in log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    pytest.fail(f"ray start did not come up in time:\n{log.read_text()[-3000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the node's process group so its daemons exit cleanly, then SIGKILL what is left.

    ``ray start --block`` itself treats its daemons' SIGTERM exits as graceful and keeps
    blocking, so it is the one that usually needs the SIGKILL.
    """
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


@pytest.fixture()
def two_node_cluster(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A head (1 CPU) and a worker node (1 CPU) on 127.0.0.1; yields (address, client env)."""
    with _private_ray_tmpdir() as tmp:
        # Token authentication with a token of this test's own (Ray's generator is
        # secrets.token_hex(32)): a new machine has no ~/.ray/auth_token, and nothing here
        # may depend on one.
        env = {
            **{k: v for k, v in os.environ.items() if k != "RAY_AUTH_TOKEN_PATH"},
            "RAY_TMPDIR": tmp,
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
            # The cluster is the user's to tune; this one's workers run at the test's priority,
            # as a private Ray's do (Ray's nice 15 starves them beside busy processes).
            WORKER_NICENESS_ENV: "0",
        }
        port = _free_port()
        address = f"127.0.0.1:{port}"
        common = ["--num-cpus=1", "--node-ip-address=127.0.0.1"]
        procs: list[subprocess.Popen[bytes]] = []
        try:
            deadline = time.time() + 120
            head_log = tmp_path / "head.log"
            procs.append(
                _start_node(
                    [
                        "--head",
                        f"--port={port}",
                        "--include-dashboard=false",
                        f"--dashboard-agent-listen-port={_free_port()}",
                        *common,
                    ],
                    env,
                    head_log,
                )
            )
            _wait_started(procs[0], head_log, deadline)
            worker_log = tmp_path / "worker.log"
            procs.append(
                _start_node(
                    [
                        f"--address={address}",
                        f"--dashboard-agent-listen-port={_free_port()}",
                        *common,
                    ],
                    env,
                    worker_log,
                )
            )
            _wait_started(procs[1], worker_log, deadline)
            yield address, env
        finally:
            for proc in reversed(procs):
                _stop(proc)
            # Stopping the process groups must have taken every Ray process of ours with it
            # (_private_ray_tmpdir SIGKILLs stragglers either way).
            time.sleep(1)
            stragglers = _processes_mentioning(tmp)
            assert not stragglers, f"Ray processes left running: {stragglers}"


def test_cli_indexes_through_a_two_node_cluster(
    two_node_cluster: tuple[str, dict[str, str]], tmp_path: Path, corpus_dir: Path
) -> None:
    address, env = two_node_cluster
    gen = tmp_path / "generated"
    _make_docs(gen, 6)
    index_dir = tmp_path / "index"
    # Two one-CPU workers on two one-CPU nodes: one split/segment/embed actor on each node.
    cmd = [sys.executable, "-m", "ragsieve.cli", "index", str(corpus_dir), str(gen)]
    cmd += ["--index", str(index_dir), "--engine", "ray", "--address", address]
    cmd += ["--workers", "2", "--embedder", "minilm-onnx", "--json"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout)
    assert out["added"] == 4 + 6 + 3 and out["updated"] == out["unchanged"] == 0
    assert out["skipped"] == [{"path": str(gen / "figure.png"), "reason": "unsupported file type"}]
    assert out["chunks_written"] == out["total_chunks"] > out["added"]

    idx = Index.open(index_dir)
    assert idx.stats()["documents"] == 13 and idx.stats()["embedder"] == "minilm-onnx"
    assert json.loads((index_dir / MANIFEST).read_text())["n_chunks"] == out["total_chunks"]
    dense = search("Who decoded the bee waggle dance?", idx, k=3, retriever="dense")
    assert "honey-bees" in dense[0].chunk.doc_id
    bm25 = search("Champollion Coptic", idx, k=3, retriever="bm25")
    assert "rosetta" in bm25[0].chunk.doc_id
    hybrid = search("what do otters use?", idx, k=3, retriever="hybrid")
    assert "notes.jsonl#rec-" in hybrid[0].chunk.doc_id


# ------------------------------------------------------------- (c) same as the local engine
@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A private two-CPU Ray instance in this process (what ``--engine ray`` starts).

    Shared by the tests below, which come last in the file, so that it stops right after them.
    """

    with _private_ray_tmpdir() as tmp:
        old = os.environ.get("RAY_TMPDIR")
        os.environ["RAY_TMPDIR"] = tmp
        try:
            with ray_session(num_cpus=2):
                yield
        finally:
            if old is None:
                os.environ.pop("RAY_TMPDIR", None)
            else:
                os.environ["RAY_TMPDIR"] = old


def test_a_private_rays_workers_run_at_the_drivers_priority(local_ray: None) -> None:
    """Ray's own default starts workers at nice 15, which starves them beside busy processes;
    the private Ray that ``--engine ray`` starts runs them at the driver's priority."""
    import ray

    @ray.remote
    def niceness() -> int:
        return os.nice(0)

    assert ray.get(niceness.remote(), timeout=600) == os.nice(0)
    assert WORKER_NICENESS_ENV not in os.environ  # set only while the daemons started


def test_ray_engine_matches_local_engine_and_is_incremental(
    local_ray: None, tmp_path: Path, corpus_dir: Path
) -> None:
    gen = tmp_path / "generated"
    _make_docs(gen, 12)
    inputs = [corpus_dir.resolve(), gen]
    cfg = IndexConfig(embedder="minilm", chunker="fixed", chunk_tokens=60)
    local = Index.create(tmp_path / "local", cfg)
    # The Ray index lives behind a file:// URL: the object-store code path (pyarrow.fs manifest,
    # no flock), on local disk.
    url = (tmp_path / "ray-index").as_uri()
    ray_idx = Index.create(url, cfg)

    r_local, skipped_local = local.add_paths(inputs)
    r_ray, skipped_ray = add_paths_ray(ray_idx, inputs, workers=1)  # (b) runs 2 workers
    assert sorted(r_ray.added) == sorted(r_local.added) and len(r_ray.added) == 4 + 12 + 3
    assert skipped_ray == skipped_local == [(str(gen / "figure.png"), "unsupported file type")]
    assert (r_ray.n_chunks, r_ray.n_tokens) == (r_local.n_chunks, r_local.n_tokens)
    assert r_ray.n_chunks > len(r_ray.added)  # the long reports span several chunks
    _assert_same_index(local, Index.open(url))

    # Incremental: one changed report, one new file, the rest unchanged; same on both engines.
    (gen / "report-03.txt").write_text("Report 3 was withdrawn. The samples were lost.")
    (gen / "report-99.txt").write_text("A late report about cold storage of otter stones.")
    r_local, _ = local.add_paths(inputs)
    r_ray, _ = add_paths_ray(ray_idx, inputs, workers=1)
    changed = str((gen / "report-03.txt").resolve())
    assert r_ray.updated == r_local.updated == [changed]
    assert r_ray.added == r_local.added == [str((gen / "report-99.txt").resolve())]
    assert len(r_ray.unchanged) == len(r_local.unchanged) == 4 + 11 + 3
    reopened = Index.open(url)
    _assert_same_index(local, reopened)
    assert [c.text for c in reopened.chunks_of(changed)] == [
        "Report 3 was withdrawn. The samples were lost."
    ]
    assert "withdrawn" in search("which report was withdrawn?", reopened, k=1)[0].chunk.text

    # Nothing new: no Lance commit and no new manifest.
    before = reopened.manifest
    r_ray, _ = add_paths_ray(ray_idx, inputs)
    assert r_ray.added == r_ray.updated == [] and r_ray.n_chunks == 0
    assert Index.open(url).manifest == before

    # A bad explicit input fails the whole write before anything is committed.
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\x00\x01binary")
    with pytest.raises(InputError, match="looks binary"):
        add_paths_ray(ray_idx, [*inputs, bad])
    assert Index.open(url).manifest == before


def test_ray_engine_writes_the_sentence_table_as_the_local_engine_does(
    local_ray: None, tmp_path: Path, corpus_dir: Path
) -> None:
    """``--sentences`` through Ray: the same sentence rows (ids, spans, passages, Pareto
    vectors, attention links) as the local engine, and an update replaces a document's rows."""
    gen = tmp_path / "generated"
    _make_docs(gen, 4)
    inputs = [corpus_dir.resolve(), gen]
    # passage = chunk: the workers must read back the chunks written before them
    cfg = IndexConfig(
        embedder="minilm",
        chunker="fixed",
        chunk_tokens=60,
        sentences=True,
        sentence_passage="chunk",
    )
    local = Index.create(tmp_path / "local", cfg)
    ray_idx = Index.create(tmp_path / "ray", cfg)
    local.add_paths(inputs)
    add_paths_ray(ray_idx, inputs, workers=2)

    def same_sentences() -> None:
        a = _table(local, "sentences_table", "id")
        b = _table(Index.open(tmp_path / "ray"), "sentences_table", "id")
        assert len(a["id"]) > 40
        for col in a:
            if col in ("core", "context", "pareto", "link_w"):
                x = np.array([np.ravel(v) for v in a[col]], dtype=object)
                y = np.array([np.ravel(v) for v in b[col]], dtype=object)
                for u, v in zip(x, y, strict=True):
                    np.testing.assert_allclose(
                        np.asarray(u, np.float32), np.asarray(v, np.float32), atol=2e-5
                    )
            else:
                assert a[col] == b[col], col
        assert len(set(a["passage"])) > 1  # chunk passages, not one per document
        assert Index.open(tmp_path / "ray").manifest["n_sentences"] == len(a["id"])

    same_sentences()
    _assert_same_index(local, Index.open(tmp_path / "ray"))
    (gen / "report-01.txt").write_text("Report 1 was withdrawn. The samples were lost.")
    local.add_paths(inputs)
    r_ray, _ = add_paths_ray(ray_idx, inputs, workers=2)
    assert r_ray.updated == [str((gen / "report-01.txt").resolve())]
    same_sentences()
    hits = Index.open(tmp_path / "ray").sentence_rows(None).to_pylist()
    assert [h["text"] for h in hits if h["doc_id"] == r_ray.updated[0]] == [
        "Report 1 was withdrawn.",
        "The samples were lost.",
    ]


def test_ray_engine_writes_an_index_on_s3(
    local_ray: None, s3_bucket: tuple[str, dict[str, str]], corpus_dir: Path
) -> None:
    """Workers write the Lance fragments to S3 (moto) with the index's storage options."""
    bucket, opts = s3_bucket
    url = f"{bucket}/corpus"
    idx = Index.create(url, IndexConfig(embedder="minilm-onnx"), storage_options=opts)
    report, _ = add_paths_ray(idx, [corpus_dir], workers=1)
    assert len(report.added) == 4 and report.n_chunks > 4
    reopened = Index.open(url, storage_options=opts)
    assert reopened.stats()["chunks"] == report.n_chunks
    hits = search("Who decoded the bee waggle dance?", reopened, k=1)
    assert "honey-bees" in hits[0].chunk.doc_id
    again, _ = add_paths_ray(reopened, [corpus_dir])
    assert len(again.unchanged) == 4 and again.n_chunks == 0
