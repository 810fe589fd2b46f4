"""Sentence splitting (placeholder regex; to be replaced by the measured choice).

Contract: ``split_sentences(text)`` returns sorted, non-overlapping ``(start, end)`` character
spans; each span's text is non-empty and has no leading/trailing whitespace; every
non-whitespace character of ``text`` lies in exactly one span.
"""

from __future__ import annotations

import re

_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9])|\n\s*\n|\n(?=\s*[#*\-\d])")


def split_sentences(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _BOUNDARY.finditer(text):
        _add(text, pos, m.start(), spans)
        pos = m.end()
    _add(text, pos, len(text), spans)
    return spans


def _add(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))
