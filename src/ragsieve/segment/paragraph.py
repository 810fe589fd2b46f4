"""Paragraph chunking: one chunk per paragraph of the source (blank-line separated).

A heading paragraph (a Markdown ``#`` line, or a short line without final punctuation) is joined
to the paragraph that follows it, since a bare heading is never a useful retrieval unit. A
paragraph longer than ``chunk_tokens`` is packed into several sentence chunks so that no chunk
outgrows what the embedder can read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragsieve.segment.base import checked_chunk_tokens, pack_sentences, register, sentences_of
from ragsieve.types import Chunk, Document, Sentence

_PARA_BREAK = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class ParagraphConfig:
    chunk_tokens: int = 512


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the blank-line separated paragraphs of ``text``."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _PARA_BREAK.finditer(text):
        if text[pos : m.start()].strip():
            spans.append((pos, m.start()))
        pos = m.end()
    if text[pos:].strip():
        spans.append((pos, len(text)))
    return spans


def _is_heading(text: str) -> bool:
    s = text.strip()
    if s.startswith("#"):
        return True
    return "\n" not in s and len(s) < 80 and not s.endswith((".", "!", "?", ":", '"', "'"))


def group_by_paragraph(doc: Document, sents: list[Sentence]) -> list[list[Sentence]]:
    """Sentences grouped into paragraphs, headings merged into the following paragraph."""
    groups: list[list[Sentence]] = []
    spans = paragraph_spans(doc.text)
    j = 0
    for a, b in spans:
        group: list[Sentence] = []
        while j < len(sents) and sents[j].start < b:
            if sents[j].start >= a:
                group.append(sents[j])
            j += 1
        if group:
            groups.append(group)
    merged: list[list[Sentence]] = []
    pending: list[Sentence] = []
    for g in groups:
        text = doc.text[g[0].start : g[-1].end]
        if _is_heading(text) and g is not groups[-1]:
            pending.extend(g)
            continue
        merged.append(pending + g)
        pending = []
    if pending:
        merged.append(pending)
    return merged


@register("paragraph")
class ParagraphSegmenter:
    """One chunk per paragraph; long paragraphs are packed into several chunks."""

    name = "paragraph"

    def __init__(self, chunk_tokens: int = ParagraphConfig.chunk_tokens) -> None:
        self.config = ParagraphConfig(checked_chunk_tokens(chunk_tokens))

    def segment(self, docs: list[Document]) -> list[list[Chunk]]:
        out: list[list[Chunk]] = []
        for d in docs:
            chunks: list[Chunk] = []
            for group in group_by_paragraph(d, sentences_of(d)):
                chunks.extend(pack_sentences(d, group, self.config.chunk_tokens, len(chunks)))
            out.append(chunks)
        return out
