"""Issue 32's probe through the real ``ragsieve`` command: input that printed a traceback, hung
or was silently accepted now gives one ``error:`` line and a non-zero exit (or is indexed, for
odd but valid input), and leaves the index as it was. The full set is
benchmarks/bad_input_sweep.py --issue32; these are its quick cases."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

from ragsieve.index.store import MANIFEST

pytestmark = pytest.mark.integration


def _files(index: Path) -> dict[str, bytes]:
    return {
        str(f.relative_to(index)): f.read_bytes()
        for f in index.rglob("*")
        if f.is_file() and f.name != ".ragsieve.lock"
    }


def test_a_folder_with_a_non_utf8_name_and_a_million_spaces(
    writable_index: Path, tmp_path: Path
) -> None:
    d = os.fsencode(tmp_path / "d")
    os.makedirs(d)
    with open(os.path.join(d, b"zebra\xff.md"), "w") as f:
        f.write("# Zebras\nA note whose file name is not UTF-8: zebras have stripes.\n")
    (tmp_path / "d" / "spaces.txt").write_text("Herons wade. " + " " * 1_000_000 + "They fish.")
    p = run("index", str(tmp_path / "d"), "--index", str(writable_index), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["added"] == 2
    p = run("search", "zebra stripes", "--index", str(writable_index), "--json", "-k", "1")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["results"][0]["doc_id"].endswith("zebra\\xff.md")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["search", os.fsdecode(b"caf\xe9 \xff")], "not valid UTF-8"),
        (["ask", os.fsdecode(b"\xff?")], "not valid UTF-8"),
        (["search", "x", "--method", "naive[k=99999999999999999999]"], "k must be int"),
        (["search", "x", "--method", "naive[k=1,k=2]"], "given twice"),
        (["search", "x", "--method", "pareto[depth=-1]"], "depth"),
        (["search", "x", "--method", "tagger[span_link=both]"], "span_link must be one of"),
        (["search", "x", "--method", "tagger[span_snap=maybe]"], "span_snap"),
        (["ask", "x", "--llm", "openai:m@http://[::1"], "bad URL"),
        (["ask", "x", "--llm", "openai:m@http://host:abc/v1"], "bad URL"),
        (["explain", "x", "--plot", "/tmp/" + "a" * 300 + ".png"], "--plot"),
    ],
)
def test_bad_queries_specs_and_options(
    writable_index: Path, args: list[str], fragment: str
) -> None:
    before = _files(writable_index)
    code = 2
    assert_one_line_error(run(*args, "--index", str(writable_index)), code, fragment)
    assert _files(writable_index) == before


@pytest.mark.parametrize(
    "url", ["s3://ragsieve-no-bucket/i", "ftp://example.invalid/i", "az://c/i"]
)
def test_object_store_urls_fail_fast_without_network(url: str) -> None:
    # The subprocess timeout guards a hang only (no network is reached either way).
    assert_one_line_error(run("info", "--index", url, timeout=120), 3, url.split("/i")[0])


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("tables", [1, 2]),
        ("tables.chunks", True),
        ("config.embedder", 5),
        ("ann", "bogus"),
        ("dim", "384"),
    ],
)
def test_a_bad_manifest_names_the_bad_key(writable_index: Path, key: str, value: object) -> None:
    m = json.loads((writable_index / MANIFEST).read_text())
    *parents, last = key.split(".")
    d = m
    for k in parents:
        d = d[k]
    d[last] = value
    (writable_index / MANIFEST).write_text(json.dumps(m))
    line = assert_one_line_error(run("info", "--index", str(writable_index)), 3, "corrupt")
    assert key in line


def test_a_fifo_manifest_and_another_tools_table(writable_index: Path) -> None:
    import lance
    import pyarrow as pa

    good = (writable_index / MANIFEST).read_text()
    (writable_index / MANIFEST).unlink()
    os.mkfifo(writable_index / MANIFEST)
    p = run("info", "--index", str(writable_index), timeout=120)  # guards a hang on the FIFO
    assert_one_line_error(p, 3, "not a regular file")
    (writable_index / MANIFEST).unlink()
    other = writable_index / "chunks.lance"
    lance.write_dataset(pa.table({"a": [1]}), str(other), mode="overwrite")
    m = json.loads(good)
    m["tables"]["chunks"] = lance.dataset(str(other)).version
    (writable_index / MANIFEST).write_text(json.dumps(m))
    p = run("search", "x", "--index", str(writable_index))
    assert_one_line_error(p, 3, "not a ragsieve table")


def test_what_was_silently_accepted(writable_index: Path, tmp_path: Path) -> None:
    nul = tmp_path / "n.txt"
    nul.write_text("a" * 9000 + "\x00b")
    idx = str(writable_index)
    assert_one_line_error(run("index", str(nul), "--index", idx), 2, "NUL")
    doc = tmp_path / "ok.md"
    doc.write_text("Fine.\n")
    p = run("index", str(doc), "--index", str(tmp_path / "new"), "--chunk-tokens", "1000000000000")
    assert_one_line_error(p, 2, "chunk-tokens")
    assert not (tmp_path / "new").exists()
    empty = tmp_path / "e.txt"
    empty.write_text(" \n")
    assert_one_line_error(run("prune", "q?", str(empty)), 2, "is empty")
