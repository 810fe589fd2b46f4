"""Fixtures of the method tests: the session's real indexes of the sample corpus, opened once
per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsieve.index import Index


@pytest.fixture(scope="module")
def plain(sample_index_dir: Path) -> Index:
    """The sample corpus in the default chunks (read-only)."""
    return Index.open(sample_index_dir)


@pytest.fixture(scope="module")
def sentences(sentence_index_dir: Path) -> Index:
    """The sample corpus in SAKI's two-sentence chunks with the sentence table (read-only)."""
    return Index.open(sentence_index_dir)
