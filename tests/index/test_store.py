from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsieve.errors import ConfigError, IndexStoreError, InputError
from ragsieve.index import Index, IndexConfig
from ragsieve.index.store import MANIFEST
from ragsieve.types import Document

pytestmark = pytest.mark.integration


def test_sample_index_has_documents_chunks_and_search(sample_index_dir: Path) -> None:
    idx = Index.open(sample_index_dir)
    st = idx.stats()
    assert st["documents"] == 4
    assert st["chunks"] >= 8
    assert st["chunker"] == "fixed" and st["chunk_tokens"] == 200
    q = idx.embedder.embed(["Who decoded the bee waggle dance?"])
    top = idx.dense_search(q, 3)[0]
    assert "honey-bees" in top[0][0].doc_id
    assert all(0.0 <= s <= 1.0 for _, s in top)
    bm = idx.bm25_search("Champollion Coptic", 3)
    assert "rosetta" in bm[0][0].doc_id
    chunks = idx.chunks_of(top[0][0].doc_id)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    doc = idx.get_document(top[0][0].doc_id)
    assert doc is not None
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text
    assert [c.index for c in idx.neighbours(chunks[1])] == [0, 1, 2]


def test_readd_changed_and_unchanged_documents(writable_index: Path) -> None:
    idx = Index.open(writable_index)
    before = idx.stats()
    docs = [Document("new-1", "Quokkas live on Rottnest Island. They are small marsupials.")]
    r = idx.add(docs)
    assert r.added == ["new-1"] and r.n_chunks == 1
    r = idx.add(docs)
    assert r.unchanged == ["new-1"] and r.n_chunks == 0
    r = idx.add([Document("new-1", "Quokkas are marsupials found in Western Australia.")])
    assert r.updated == ["new-1"]
    again = Index.open(writable_index)
    assert again.stats()["documents"] == before["documents"] + 1
    assert again.stats()["chunks"] == before["chunks"] + 1
    assert [c.text for c in again.chunks_of("new-1")] == [
        "Quokkas are marsupials found in Western Australia."
    ]
    hits = again.bm25_search("Rottnest", 5)
    assert all(h[0].doc_id != "new-1" for h in hits)  # old text is gone from BM25 too
    assert again.remove(["new-1", "absent"]) == ["new-1"]
    assert Index.open(writable_index).stats()["chunks"] == before["chunks"]


def test_config_mismatch_and_bad_directories(writable_index: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--chunk-tokens 200 \\(asked 100\\)"):
        Index.open_or_create(writable_index, IndexConfig(chunk_tokens=100))
    with pytest.raises(IndexStoreError, match="no index"):
        Index.open(tmp_path / "missing")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("x")
    with pytest.raises(IndexStoreError, match="not a ragsieve index"):
        Index.open(tmp_path / "junk")
    with pytest.raises(InputError, match="not empty"):
        Index.create(tmp_path / "junk")


def test_corrupt_manifest_and_missing_table_are_clear_errors(writable_index: Path) -> None:
    m = writable_index / MANIFEST
    good = m.read_text()
    m.write_text("{ not json")
    with pytest.raises(IndexStoreError, match="corrupt"):
        Index.open(writable_index)
    bad = json.loads(good)
    bad["tables"]["chunks"] = "x"
    m.write_text(json.dumps(bad))
    with pytest.raises(IndexStoreError, match="corrupt"):
        Index.open(writable_index)
    m.write_text(good)
    import shutil

    shutil.rmtree(writable_index / "chunks.lance")
    with pytest.raises(IndexStoreError, match="corrupt"):
        Index.open(writable_index)


def test_uncommitted_versions_are_invisible_and_rolled_back(writable_index: Path) -> None:
    """Simulate a writer that died after a Lance commit but before the manifest."""
    import lancedb

    idx = Index.open(writable_index)
    n = idx.stats()["chunks"]
    tbl = lancedb.connect(str(writable_index)).open_table("chunks")
    rows = tbl.to_arrow().slice(0, 2)
    tbl.add(rows)  # an orphan commit that no manifest names
    assert Index.open(writable_index).chunks_table.count_rows() == n
    idx.add([Document("x", "A new document about otters.")])
    fresh = Index.open(writable_index)
    assert fresh.chunks_table.count_rows() == n + 1 == fresh.stats()["chunks"]
