"""Naive RAG chunking: whole sentences packed up to a fixed token count (default 200).

SAGE (Section VII-A) defines its Naive RAG baseline this way: "divides continuous texts into
segments of 200 tokens each, ensuring sentences are not split across different chunks".
"""

from __future__ import annotations

from dataclasses import dataclass

from ragsieve.segment.base import checked_chunk_tokens, pack_sentences, register, sentences_of
from ragsieve.types import Chunk, Document


@dataclass(frozen=True)
class FixedConfig:
    chunk_tokens: int = 200


@register("fixed")
class FixedSegmenter:
    """Greedy sentence packing up to ``chunk_tokens`` tokens."""

    name = "fixed"

    def __init__(self, chunk_tokens: int = FixedConfig.chunk_tokens) -> None:
        self.config = FixedConfig(checked_chunk_tokens(chunk_tokens))

    def segment(self, docs: list[Document]) -> list[list[Chunk]]:
        return [pack_sentences(d, sentences_of(d), self.config.chunk_tokens) for d in docs]
