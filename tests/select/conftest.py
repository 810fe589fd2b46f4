"""Real candidate chunks for the search tests: the sample corpus index, dense retrieval."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsieve.types import Scored

QUERIES = (
    "When was Voyager 1 launched and what did it find?",
    "How do honey bees communicate the location of flowers?",
    "Who deciphered the Rosetta Stone?",
    "How does a lighthouse lens work?",
)


@pytest.fixture(scope="session")
def real_pools(sample_index_dir: Path) -> dict[str, list[Scored]]:
    """Each query's 12 best chunks of the sample index (real text, real token counts)."""
    from ragsieve.index import Index
    from ragsieve.retrieve import get_retriever

    idx = Index.open(sample_index_dir)
    hits = get_retriever("dense", idx).retrieve(list(QUERIES), 12)
    pools = dict(zip(QUERIES, hits, strict=True))
    assert all(len(p) >= 8 for p in pools.values())
    return pools
