"""The ANN index above a size threshold: built at commit, used by whole-index search with the
same top hits as exact search, extended (not retrained) by a small add, and never used for a
search restricted to a document pool. Real MiniLM vectors in a real Lance table."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ragsieve.errors import ConfigError
from ragsieve.index import Index
from ragsieve.index.store import ANN_ENV, ann_settings
from ragsieve.types import Document

pytestmark = pytest.mark.integration


def _sentences(corpus: Path) -> list[str]:
    text = " ".join(p.read_text() for p in sorted(corpus.glob("*")) if p.suffix in {".md", ".txt"})
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 5]


def _docs(corpus: Path, n: int, start: int = 0) -> list[Document]:
    sents = _sentences(corpus)
    m = len(sents)
    return [
        Document(f"d{i}", f"{sents[i % m]} {sents[(7 * i + 3) % m]} Record {i}.", f"Record {i}")
        for i in range(start, start + n)
    ]


def _exact_scores(idx: Index, q: np.ndarray) -> dict[str, float]:
    """Every chunk's exact cosine with ``q`` (the stored vectors are unit length)."""
    t = idx.chunks_table.to_table(columns=["id", "vector"])
    vecs = np.stack(t.column("vector").to_numpy(zero_copy_only=False))
    return dict(zip(t.column("id").to_pylist(), (vecs @ q).tolist(), strict=True))


def test_large_index_gets_an_ann_index_that_finds_the_exact_top_hits(
    tmp_path: Path, corpus_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ANN_ENV, "300")
    idx = Index.create(tmp_path / "index")
    idx.add(_docs(corpus_dir, 299))
    assert idx.manifest["ann"] is None  # below the threshold: exact, no vector index
    idx.add(_docs(corpus_dir, 40, start=299))
    ann = idx.manifest["ann"]
    assert ann["trained_rows"] == 339 and ann["index_type"] == "IVF_HNSW_SQ"
    kinds = {d.field_names[0]: d.type_url for d in idx.chunks_table.describe_indices()}
    assert set(kinds) == {"text", "vector"} and "Inverted" in kinds["text"]
    assert "VectorIndex" in kinds["vector"]
    queries = ["How did scholars read the hieroglyphs?", "Where do honey bees find flowers?"]
    qv = idx.embedder.embed(queries)
    hits = idx.dense_search(qv, 10)
    for q, got in zip(qv, hits, strict=True):
        exact = _exact_scores(idx, q)
        want = sorted(exact, key=exact.__getitem__, reverse=True)[:10]
        assert len({c.id for c, _ in got} & set(want)) >= 9
        # 8-bit quantised distances may swap near ties, never miss the best by more.
        assert exact[got[0][0].id] >= exact[want[0]] - 0.01

    # A small add extends the trained index; the new document is found first by its own text.
    new = Document("fresh", "Axolotls regrow whole limbs and parts of their hearts.", "Axolotl")
    idx.add([new])
    assert idx.manifest["ann"]["trained_rows"] == 339  # not retrained
    top = idx.dense_search(idx.embedder.embed([new.text]), 1)[0][0][0]
    assert top.doc_id == "fresh"

    # A document pool is searched exactly: every allowed chunk comes back.
    pool = ["d1", "d2", "fresh"]
    got = idx.dense_search(qv[:1], 10, [pool])[0]
    assert sorted(c.doc_id for c, _ in got) == sorted(pool)


def test_ann_threshold_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    s = ann_settings()
    assert s.min_chunks == 25_000
    assert (s.partitions(200_000), s.probes(28)) == (28, 17)  # measured: recall@10 0.969
    assert (s.partitions(1_000_000), s.probes(63)) == (62, 38)
    monkeypatch.setenv(ANN_ENV, "off")
    assert ann_settings().min_chunks > 10**15
    monkeypatch.setenv(ANN_ENV, "12")
    with pytest.raises(ConfigError, match="at least 256"):
        ann_settings()
    monkeypatch.setenv(ANN_ENV, "many")
    with pytest.raises(ConfigError, match="number of chunks"):
        ann_settings()
