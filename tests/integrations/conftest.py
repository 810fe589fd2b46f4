"""Fixtures of the framework tests (helpers in tests/pool_helpers.py)."""

from __future__ import annotations

import pytest
from pool_helpers import Paragraph, corpus_paragraphs


@pytest.fixture(scope="session")
def paragraphs() -> list[Paragraph]:
    return corpus_paragraphs()
