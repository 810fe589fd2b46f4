"""JSONL document ids are namespaced by their file (``PATH#id``, ``PATH#line`` without an id), so
one file never overwrites another's records; an index written with the old bare ids is renamed
on the next write of the same file. Real CLI subprocesses on a real LanceDB index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run

from ragsieve.index import Index, IndexConfig
from ragsieve.types import Document

pytestmark = pytest.mark.integration

EMBEDDER = "minilm-onnx"


def _jsonl(path: Path, texts: list[str], ids: list[str] | None = None) -> Path:
    rows = [
        {"text": t} if ids is None else {"id": i, "text": t}
        for i, t in zip(ids or texts, texts, strict=True)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _index(*args: str) -> dict:
    r = run("index", *args, "--embedder", EMBEDDER, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_two_jsonl_files_without_ids_keep_all_documents(tmp_path: Path) -> None:
    """The issue's case: the second file reported "0 new, 2 changed" and 2 documents were gone."""
    idx = str(tmp_path / "idx")
    a = _jsonl(tmp_path / "a.jsonl", ["Alpacas hum.", "Bees dance.", "Cats purr."])
    b = _jsonl(tmp_path / "b.jsonl", ["Dogs bark.", "Eels glow."])
    assert _index(str(a), "--index", idx)["added"] == 3
    out = _index(str(b), "--index", idx)
    assert (out["added"], out["updated"], out["total_documents"]) == (2, 0, 5)
    ids = set(Index.open(idx).document_hashes())
    assert ids == {f"{a.resolve()}#{n}" for n in (1, 2, 3)} | {f"{b.resolve()}#{n}" for n in (1, 2)}


def test_a_record_id_never_replaces_a_file(tmp_path: Path) -> None:
    idx = str(tmp_path / "idx")
    note = tmp_path / "note.txt"
    note.write_text("The lighthouse flashes twice every ten seconds.\n")
    _index(str(note), "--index", idx)
    rec = _jsonl(tmp_path / "r.jsonl", ["Something else entirely."], [str(note.resolve())])
    out = _index(str(rec), "--index", idx)
    assert (out["added"], out["updated"], out["total_documents"]) == (1, 0, 2)
    doc = Index.open(idx).get_document(str(note.resolve()))
    assert doc is not None and "lighthouse" in doc.text


def test_an_index_with_bare_ids_is_renamed_on_the_next_write(tmp_path: Path) -> None:
    """Rows written exactly as ragsieve wrote JSONL records before ids were namespaced (bare
    id, source ``PATH:LINE``); the next ``index`` of the file renames them in place."""
    a = _jsonl(tmp_path / "a.jsonl", ["Alpacas hum.", "Bees dance."], ["x", "y"])
    b = _jsonl(tmp_path / "b.jsonl", ["Cats purr."])
    idx = Index.create(tmp_path / "idx", IndexConfig(embedder=EMBEDDER))
    src = a.resolve()
    idx.add(
        [
            Document(id="x", text="Alpacas hum.", source=f"{src}:1"),
            Document(id="y", text="Bees dance.", source=f"{src}:2"),
            Document(id="1", text="Cats purr.", source=f"{b.resolve()}:1"),
        ]
    )
    assert len(Index.open(idx.path).document_hashes()) == 3  # read with the old ids
    out = _index(str(a), "--index", str(idx.path))
    assert (out["added"], out["updated"], out["total_documents"]) == (0, 2, 3)
    ids = set(Index.open(idx.path).document_hashes())
    assert ids == {f"{src}#x", f"{src}#y", "1"}
    # "1" came from b.jsonl: a.jsonl's line-1 record would not have taken it either.
    out = _index(str(b), "--index", str(idx.path))
    assert (out["added"], out["updated"], out["total_documents"]) == (0, 1, 3)
    assert set(Index.open(idx.path).document_hashes()) == {
        f"{src}#x",
        f"{src}#y",
        f"{b.resolve()}#1",
    }
    r = run("search", "purring cats", "--index", str(idx.path), "--json", "-k", "1")
    assert json.loads(r.stdout)["results"][0]["doc_id"] == f"{b.resolve()}#1"
