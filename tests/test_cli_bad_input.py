"""Bad input through the real ``ragsieve`` command: each case of the bad-input sweep that once
gave a traceback, a hang or a wrong exit code now gives one ``error:`` line, exit 2 (input),
3 (index) or 4 (LLM), and leaves the index as it was."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

from ragsieve.index.store import MANIFEST

pytestmark = pytest.mark.integration


def test_index_paths_that_cannot_be_directories(tmp_path: Path, corpus_dir: Path) -> None:
    doc = str(corpus_dir / "rosetta-stone.md")
    assert_one_line_error(
        run("index", doc, "--index", "/proc/ragsieve-x"), 3, "cannot create index directory"
    )
    regular = tmp_path / "file.txt"
    regular.write_text("not a folder")
    assert_one_line_error(
        run("index", doc, "--index", str(regular / "sub")), 3, "cannot create index"
    )
    assert regular.read_text() == "not a folder"
    # An empty --index would have meant the current directory.
    assert_one_line_error(run("index", doc, "--index", ""), 2, "not an empty string")
    assert_one_line_error(run("search", "x", "--index", "  "), 2, "not an empty string")


def test_a_named_pipe_is_refused_not_read(tmp_path: Path, corpus_dir: Path) -> None:
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    idx = tmp_path / "ix"
    # Explicitly named: refused at once (it used to block forever on the read).
    assert_one_line_error(
        run("index", str(fifo), "--index", str(idx), timeout=60), 2, "not a regular file"
    )
    assert not idx.exists()
    # Inside a folder: skipped with a warning, the regular files indexed.
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(corpus_dir / "rosetta-stone.md", folder)
    os.mkfifo(folder / "pipe.md")
    p = run("index", str(folder), "--index", str(idx), "--json", timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["added"] == 1
    assert any("pipe.md" in s["path"] and "regular" in s["reason"] for s in out["skipped"]), out


def test_damaged_manifest_is_one_line_and_repair_keeps_its_config(
    writable_index: Path,
) -> None:
    m = json.loads((writable_index / MANIFEST).read_text())
    before = m["n_documents"]
    del m["n_documents"]
    (writable_index / MANIFEST).write_text(json.dumps(m))
    line = assert_one_line_error(
        run("info", "--index", str(writable_index)), 3, "missing field n_documents"
    )
    assert "ragsieve repair" in line
    p = run("repair", "--index", str(writable_index), "--json")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["n_documents"] == before and rep["config_from"] in ("tables", "manifest")
    p = run("search", "Rosetta Stone decipherment", "--index", str(writable_index), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"]


def test_unwritable_outputs_fail_before_any_work(sample_index_dir: Path, tmp_path: Path) -> None:
    manifest = (sample_index_dir / MANIFEST).read_text()
    assert_one_line_error(
        run("explain", "bees", "--index", str(sample_index_dir), "--plot", "/proc/x/plot.png"),
        2,
        "--plot",
    )
    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({"question": "q?", "answers": ["a"], "documents": ["a b"]}) + "\n")
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    assert_one_line_error(
        run("eval", "--data", str(data), "--no-llm", "--out", str(blocker / "out")),
        2,
        "--out",
    )
    assert (sample_index_dir / MANIFEST).read_text() == manifest


def test_rm_of_an_unknown_document_removes_nothing_and_says_so(writable_index: Path) -> None:
    """Like ``rm -f``: the state asked for holds, so exit 0, with the name on stderr (a second
    ``rm`` of the same file is not an error)."""
    manifest = (writable_index / MANIFEST).read_text()
    p = run("rm", "no-such-doc.md", "--index", str(writable_index))
    assert p.returncode == 0 and p.stdout.strip() == "removed 0 documents"
    assert "not in the index" in p.stderr and "no-such-doc.md" in p.stderr
    assert (writable_index / MANIFEST).read_text() == manifest


def test_a_run_on_line_is_split_linearly_into_chunk_sized_pieces(tmp_path: Path) -> None:
    """A one-line file with no sentence end and a whitespace-free blob inside: every chunk fits
    the chunk size, together they cover the text, and the index answers a search."""
    words = " ".join(f"word{i % 997} river stone" for i in range(20_000))  # ~370 KB, one line
    blob = "QUJD" * 3000  # 12,000 characters without whitespace
    f = tmp_path / "long.txt"
    f.write_text(f"{words} {blob} tail words here")
    idx = tmp_path / "ix"
    p = run("index", str(f), "--index", str(idx), "--json", "--embedder", "minilm-onnx")
    assert p.returncode == 0, p.stderr
    from ragsieve.index import Index

    chunks = Index.open(idx).chunks_of(str(f.resolve()))
    assert max(c.n_tokens for c in chunks) <= 200
    text = f.read_text()
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")


@pytest.mark.parametrize("command", ["search", "ask", "explain"])
@pytest.mark.parametrize("text", ["\u200b\u200b", "\ufeff\u2060 \u00a0", "\u200d\u2029"])
def test_an_invisible_query_is_refused_like_a_blank_one(
    command: str, text: str, sample_index_dir: Path
) -> None:
    p = run(command, text, "--index", str(sample_index_dir))
    assert_one_line_error(p, 2, "is empty (only invisible characters: U+")
