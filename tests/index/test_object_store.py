"""The index on an object store: S3 (a real S3 protocol server, moto) and ``file://`` URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsieve.errors import IndexStoreError
from ragsieve.index import Index, IndexConfig
from ragsieve.index.location import Location, is_url
from ragsieve.index.store import MANIFEST
from ragsieve.types import Document

pytestmark = pytest.mark.integration


def test_urls_and_paths_are_told_apart() -> None:
    assert is_url("s3://bucket/prefix") and is_url("file:///tmp/x") and is_url("gs://b/p")
    assert not is_url("my-index") and not is_url("/abs/path") and not is_url(Path("s3:/x"))


def test_file_url_manifest_is_replaced_whole(tmp_path: Path) -> None:
    loc = Location((tmp_path / "ix").as_uri())
    assert loc.is_url and not loc.exists()
    loc.mkdir()
    loc.replace_text(MANIFEST, '{"v": 1}')
    loc.replace_text(MANIFEST, '{"v": 2}')
    assert loc.read_text(MANIFEST) == '{"v": 2}'
    assert sorted(loc.children()) == [MANIFEST]  # the temporary object was moved, not copied
    assert (tmp_path / "ix" / MANIFEST).read_text() == '{"v": 2}'


def test_index_on_s3_add_search_update_remove(s3_bucket: tuple[str, dict[str, str]]) -> None:
    bucket, opts = s3_bucket
    url = f"{bucket}/notes"
    with pytest.raises(IndexStoreError, match="no index at"):
        Index.open(url, storage_options=opts)
    idx = Index.create(url, IndexConfig(embedder="minilm-onnx"), storage_options=opts)
    docs = [
        Document("otters", "Sea otters use stones to crack shells. They float on their backs."),
        Document("rosetta", "Champollion deciphered the hieroglyphs of the Rosetta Stone."),
    ]
    assert idx.add(docs).added == ["otters", "rosetta"]

    again = Index.open(url, storage_options=opts)
    assert isinstance(again.path, str) and again.path == url
    assert again.stats()["documents"] == 2 and again.stats()["chunks"] == 2
    assert again.bm25_search("Champollion", 2)[0][0].doc_id == "rosetta"
    q = again.embedder.embed(["which animal uses tools?"])
    assert again.dense_search(q, 1)[0][0][0].doc_id == "otters"

    r = again.add([Document("otters", "Sea otters sleep holding hands."), docs[1]])
    assert r.updated == ["otters"] and r.unchanged == ["rosetta"]
    fresh = Index.open(url, storage_options=opts)
    assert [c.text for c in fresh.chunks_of("otters")] == ["Sea otters sleep holding hands."]
    assert fresh.remove(["rosetta"]) == ["rosetta"]
    final = Index.open(url, storage_options=opts)
    assert final.stats()["documents"] == 1 and final.bm25_search("Champollion", 2) == []
    names = Location(url, opts).children()
    assert sorted(names) == ["chunks.lance", "documents.lance", MANIFEST]
    with pytest.raises(IndexStoreError, match="already an index"):
        Index.create(url, storage_options=opts)
