"""The answer span: the tagger's extractive answer inside a kept sentence (issue 44, item 6).

A tagger folder whose ONNX graph has a ``span_logits`` output (``[batch, word pieces, 2]``:
start and end logits per word piece) can point at the answer inside the sentences it keeps, as
SQuAD-style readers do. The span is chosen among kept sentences only (the context the reader
sees), never longer than :data:`MAX_SPAN_PIECES` word pieces, and carried with its location so
that a user can check it against the source.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Longest answer span, in word pieces (SQuAD answers: 99% are under 30).
MAX_SPAN_PIECES = 30
#: Name of the ONNX output that holds the span head's start and end logits.
SPAN_OUTPUT = "span_logits"


@dataclass(frozen=True)
class AnswerSpan:
    """An extractive answer: ``text`` is ``sentence[start:end]`` of sentence ``sentence`` of
    passage ``passage`` (indices into what the tagger was given), ``score`` the span's
    probability (softmax over start times softmax over end, within its window)."""

    text: str
    passage: int
    sentence: int
    start: int
    end: int
    score: float
