from __future__ import annotations

from pathlib import Path

import pytest

from ragsieve.errors import ConfigError, InputError
from ragsieve.index import Index
from ragsieve.retrieve import get_retriever
from ragsieve.retrieve.base import RRF_K

pytestmark = pytest.mark.integration

QUESTIONS = {
    "When did Voyager 1 reach interstellar space?": "voyager",
    "Which lens did Fresnel demonstrate in 1822?": "lighthouses",
    "How long does a summer worker bee live?": "honey-bees",
    "Where is the Rosetta Stone displayed?": "rosetta",
}


@pytest.mark.parametrize("name", ["dense", "bm25", "hybrid"])
def test_each_retriever_finds_the_right_document(sample_index_dir: Path, name: str) -> None:
    idx = Index.open(sample_index_dir)
    r = get_retriever(name, idx)
    results = r.retrieve(list(QUESTIONS), 3)
    assert len(results) == len(QUESTIONS)
    for hits, expected in zip(results, QUESTIONS.values(), strict=True):
        assert 1 <= len(hits) <= 3
        assert expected in hits[0].chunk.doc_id
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        assert name in hits[0].scores or "rrf" in hits[0].scores


def test_hybrid_is_reciprocal_rank_fusion(sample_index_dir: Path) -> None:
    idx = Index.open(sample_index_dir)
    q = "Karl von Frisch Nobel Prize"
    dense = get_retriever("dense", idx).retrieve([q], 40)[0]
    bm25 = get_retriever("bm25", idx).retrieve([q], 40)[0]
    hybrid = get_retriever("hybrid", idx).retrieve([q], 5)[0]
    expected: dict[str, float] = {}
    for lst in (dense, bm25):
        for rank, s in enumerate(lst, start=1):
            expected[s.chunk.id] = expected.get(s.chunk.id, 0.0) + 1 / (RRF_K + rank)
    for h in hybrid:
        assert h.score == pytest.approx(expected[h.chunk.id])
    best = max(expected.values())
    assert hybrid[0].score == pytest.approx(best)


def test_empty_query_and_unknown_retriever(sample_index_dir: Path) -> None:
    idx = Index.open(sample_index_dir)
    with pytest.raises(InputError, match="empty"):
        get_retriever("dense", idx).retrieve(["  "], 3)
    with pytest.raises(ConfigError, match="unknown retriever"):
        get_retriever("colbert", idx)


@pytest.mark.parametrize("name", ["dense", "bm25", "hybrid"])
def test_doc_filter_is_one_pool_per_query(sample_index_dir: Path, name: str) -> None:
    idx = Index.open(sample_index_dir)
    r = get_retriever(name, idx)
    pool = sorted({c for c in idx.chunks_table.to_table().column("doc_id").to_pylist()})
    bees = [d for d in pool if "honey-bees" in d]
    (hits,) = r.retrieve(["How long does a summer worker bee live?"], 3, [bees])
    assert hits and all(h.chunk.doc_id in bees for h in hits)
    # A flat list (one pool not wrapped per query) used to find nothing, silently.
    with pytest.raises(InputError, match="one list of document ids"):
        r.retrieve(["How long does a summer worker bee live?"], 3, bees)
    with pytest.raises(InputError, match="2 entries for 1 queries"):
        r.retrieve(["bees?"], 3, [bees, None])
