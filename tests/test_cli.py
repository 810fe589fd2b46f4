"""The real ``ragsieve`` command in subprocesses: outputs, JSON shapes and one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

from ragsieve.index.store import MANIFEST

pytestmark = pytest.mark.integration


def test_index_search_info_json(tmp_path: Path, corpus_dir: Path) -> None:
    idx = tmp_path / "ix"
    p = run("index", str(corpus_dir), "--index", str(idx), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["added"] == 4 and out["chunks_written"] == out["total_chunks"] > 0
    assert out["tokens_per_second"] > 0
    p = run("index", str(corpus_dir), "--index", str(idx), "--json")
    assert json.loads(p.stdout)["unchanged"] == 4
    p = run(
        "search",
        "When was the Fresnel lens first installed?",
        "--index",
        str(idx),
        "--k",
        "2",
        "--retriever",
        "hybrid",
        "--json",
    )
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)["results"]
    assert len(res) == 2 and "Cordouan" in res[0]["text"]
    assert set(res[0]) >= {"chunk_id", "doc_id", "text", "score"}
    p = run("search", "Fresnel lens", "--index", str(idx), "--k", "1")
    assert p.returncode == 0 and "How lighthouses work" in p.stdout
    p = run("info", "--index", str(idx), "--json")
    assert json.loads(p.stdout)["documents"] == 4


def test_bad_inputs_give_one_line_errors_and_leave_the_index_alone(
    writable_index: Path, tmp_path: Path
) -> None:
    manifest = (writable_index / MANIFEST).read_text()
    assert_one_line_error(
        run("index", str(tmp_path / "missing"), "--index", str(writable_index)),
        2,
        "no such file",
    )
    binary = tmp_path / "blob.txt"
    binary.write_bytes(b"\x00\x01\x02")
    assert_one_line_error(run("index", str(binary), "--index", str(writable_index)), 2, "binary")
    empty = tmp_path / "empty.md"
    empty.write_text("")
    assert_one_line_error(run("index", str(empty), "--index", str(writable_index)), 2, "empty")
    assert_one_line_error(
        run("index", str(empty), "--index", str(writable_index), "--chunk-tokens", "50"),
        2,
        "was built with --chunk-tokens 200",
    )
    assert_one_line_error(run("search", "  ", "--index", str(writable_index)), 2, "empty")
    assert_one_line_error(
        run("ask", "What?", "--index", str(writable_index), "--method", "magic"),
        2,
        "unknown method",
    )
    assert_one_line_error(
        run("search", "x", "--index", str(writable_index), "--retriever", "colbert"),
        2,
        "unknown retriever",
    )
    assert_one_line_error(run("search", "x", "--index", str(tmp_path / "none")), 3, "no index")
    assert (writable_index / MANIFEST).read_text() == manifest
    # A new index is not created when its inputs are bad.
    assert_one_line_error(run("index", str(empty), "--index", str(tmp_path / "new")), 2, "empty")
    assert not (tmp_path / "new").exists()


def test_corrupt_index_is_reported_and_debug_shows_traceback(
    writable_index: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(writable_index, broken)
    (broken / MANIFEST).write_text("{garbage")
    assert_one_line_error(run("search", "bees", "--index", str(broken)), 3, "corrupt")
    p = run("search", "bees", "--index", str(broken), "--debug")
    assert p.returncode != 0 and "Traceback" in p.stderr


def test_ask_json_with_the_local_llm(sample_index_dir: Path) -> None:
    opts = ["--method", "naive", "--k", "2", "--max-tokens", "32", "--json"]
    p = run("ask", "Who decoded the honey bee waggle dance?", "-i", str(sample_index_dir), *opts)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out) >= {"answer", "context", "tokens", "trace", "timings", "cost"}
    assert "Frisch" in out["answer"]
    assert len(out["context"]) == 2
    assert set(out["context"][0]) >= {"chunk_id", "doc_id", "text", "score"}
    assert out["tokens"]["context"] == sum(c["tokens"] for c in out["trace"]["candidates"][:2])
    assert out["tokens"]["prompt"] > out["tokens"]["context"] > 0
    assert 0 < out["tokens"]["completion"] <= 32
    assert out["trace"]["selected"] == [c["chunk_id"] for c in out["context"]]
    assert {"retrieve", "select", "generate"} <= set(out["timings"])


def test_ask_total_budget_with_the_local_llm(sample_index_dir: Path) -> None:
    """``--total-budget`` bounds every call's prompt: the context is trimmed to fit (three
    sample chunks make a prompt of 600+ tokens); a budget that cannot hold the question, or one
    below 1, is one line, exit 2."""
    base = ["ask", "Who decoded the honey bee waggle dance?", "--index", str(sample_index_dir)]
    base += ["--method", "naive", "--k", "3", "--max-tokens", "16"]
    p = run(*base, "--total-budget", "300", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    cap = out["trace"]["total_budget_cap"]
    assert cap["total_budget"] == 300 and cap["dropped"] >= 1
    assert len(out["context"]) == 3 - cap["dropped"] >= 1
    calls = out["trace"]["llm"]["call_tokens"]
    assert [c["call"] for c in calls] == ["answer"] and out["trace"]["llm"]["total_budget"] == 300
    assert calls[0]["estimate"] <= 300 and calls[0]["prompt"] == out["tokens"]["prompt"]
    assert_one_line_error(run(*base, "--total-budget", "5"), 2, "raise --total-budget")
    assert_one_line_error(run(*base, "--total-budget", "0"), 2, "--total-budget")


def test_ask_with_an_unreachable_llm_endpoint_is_one_line(sample_index_dir: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = run(
        "ask",
        "Who decoded the waggle dance?",
        "--index",
        str(sample_index_dir),
        "--llm",
        f"openai:test@http://127.0.0.1:{port}/v1",
    )
    assert_one_line_error(p, 4, "unreachable")
    assert_one_line_error(
        run("ask", "x", "--index", str(sample_index_dir), "--llm", "gpt-9000"),
        2,
        "unknown LLM spec",
    )


def test_search_imports_neither_torch_nor_lancedb(sample_index_dir: Path) -> None:
    """The query path of a MiniLM index embeds with the int8 ONNX build and reads Lance
    directly: a cold ``ragsieve search`` loads no torch, sentence-transformers or lancedb
    (about 6 s and 1.5 s of imports on 2 cores)."""
    import subprocess
    import sys

    probe = (
        "import atexit, runpy, sys\n"
        "heavy = ('torch', 'sentence_transformers', 'lancedb')\n"
        "atexit.register(lambda: print('LOADED', [m for m in heavy if m in sys.modules]))\n"
        f"sys.argv = ['ragsieve', 'search', 'hieroglyphs', '--index', {str(sample_index_dir)!r},"
        " '--k', '2', '--json']\n"
        "runpy.run_module('ragsieve.cli', run_name='__main__')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr
    body, loaded = out.stdout.rsplit("LOADED", 1)
    assert loaded.strip() == "[]"
    hits = json.loads(body)["results"]
    assert len(hits) == 2 and "hieroglyph" in (hits[0]["text"] + hits[1]["text"]).lower()


def test_a_bad_ann_threshold_is_one_line_and_writes_nothing(
    writable_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = (writable_index / MANIFEST).read_text()
    doc = tmp_path / "otters.md"
    doc.write_text("# Otters\n\nSea otters use stones to open shellfish.\n")
    monkeypatch.setenv("RAGSIEVE_ANN_MIN_CHUNKS", "many")
    for target in (writable_index, tmp_path / "new"):
        assert_one_line_error(
            run("index", str(doc), "--index", str(target)), 2, "RAGSIEVE_ANN_MIN_CHUNKS"
        )
    assert (writable_index / MANIFEST).read_text() == manifest
    assert not (tmp_path / "new").exists()
    monkeypatch.delenv("RAGSIEVE_ANN_MIN_CHUNKS")
    out = run("search", "hieroglyphs", "--index", str(writable_index), "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["results"]
