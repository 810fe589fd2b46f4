"""Fixed-count sentence chunks: ``n`` consecutive sentences per chunk (default 2).

SAKI-RAG's setup (Sec. 4, "Chunks Size") splits documents "into chunks of two sentences each"
with a regular-expression tool; its Table 5 ablation compares methods on those fine-grained
chunks. Chunks never cross a blank-line paragraph break (a SQuAD article's paragraphs, a
paper's sections), and ``chunk_tokens`` still caps a chunk (a run-on sentence is cut as in
:func:`~ragsieve.segment.base.pack_sentences`).
"""

from __future__ import annotations

from ragsieve.errors import ConfigError
from ragsieve.segment.base import checked_chunk_tokens, pack_sentences, register, sentences_of
from ragsieve.segment.paragraph import group_by_paragraph
from ragsieve.types import Chunk, Document


@register("sentences")
class SentenceCountSegmenter:
    """``n`` sentences per chunk inside each paragraph (SAKI-RAG's two-sentence chunks)."""

    name = "sentences"

    def __init__(self, chunk_tokens: int = 200, n: int = 2) -> None:
        checked_chunk_tokens(chunk_tokens)
        if n < 1:
            raise ConfigError(f"sentences per chunk must be >= 1, got {n}")
        self.chunk_tokens = chunk_tokens
        self.n = n

    def segment(self, docs: list[Document]) -> list[list[Chunk]]:
        out: list[list[Chunk]] = []
        for d in docs:
            chunks: list[Chunk] = []
            for group in group_by_paragraph(d, sentences_of(d)):
                for i in range(0, len(group), self.n):
                    part = group[i : i + self.n]
                    chunks.extend(pack_sentences(d, part, self.chunk_tokens, len(chunks)))
            out.append(chunks)
        return out
