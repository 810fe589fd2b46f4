"""The answer span: the tagger's extractive answer inside a kept sentence.

A tagger folder whose ONNX graph has a ``span_logits`` output (``[batch, word pieces, 2]``:
start and end logits per word piece) can point at the answer inside the sentences it keeps, as
SQuAD-style readers do. The span is chosen among kept sentences only (the context the reader
sees), never longer than :data:`MAX_SPAN_PIECES` word pieces, and carried with its location so
that a user can check it against the source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragsieve.tag.verdict import Tagged

#: Longest answer span, in word pieces (SQuAD answers: 99% are under 30).
MAX_SPAN_PIECES = 30
#: Name of the ONNX output that holds the span head's start and end logits.
SPAN_OUTPUT = "span_logits"
#: The span head's name: the network's module (``span_head.weight``, absent from weights
#: trained before the span head existed) and the prefix of a head added to a trained graph
#: (``span_head.0.weight``, its nodes too), so that a refit drops the old one and
#: ``onnx_state_dict`` reads it back.
SPAN_HEAD = "span_head."


@dataclass(frozen=True)
class SentenceSpan:
    """One sentence's best span in one reading: word pieces ``first`` to ``last`` (inclusive,
    counted in the sentence's own pieces, as the sentence tokenised alone gives them) and its
    ``score``: the span's probability (softmax over start times softmax over end, within its
    window). :func:`ragsieve.tag.prune.best_span` turns the best one into characters, a
    :class:`~ragsieve.types.SourceSpan`."""

    first: int
    last: int
    score: float


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    m = x.max()
    return x - m - np.log(np.exp(x - m).sum())


def best_spans(
    logits: np.ndarray,
    sentence_of: np.ndarray,
    max_pieces: int = MAX_SPAN_PIECES,
    null: bool = False,
) -> dict[int, SentenceSpan]:
    """Each sentence's best span in one window: ``logits`` ``[pieces, 2]`` (start, end),
    ``sentence_of`` each piece's sentence (< 0: none). Start and end are softmaxed over the
    window's sentence pieces (the question and title are never an answer); a span starts and
    ends inside one sentence, start <= end, at most ``max_pieces`` pieces. ``null`` (a head
    trained with unanswerable windows, ``span_null`` in its folder's config): the [CLS] piece
    joins both softmaxes as "no answer here", never as a span, so a score is low where the
    head says the window does not answer."""
    sent = np.asarray(sentence_of)
    body = np.flatnonzero(sent >= 0)
    if body.size == 0:
        return {}
    read = np.concatenate([[0], body]) if null else body  # [CLS] first, in the softmax only
    skip = read.size - body.size
    ls = _log_softmax(logits[read, 0])[skip:]
    le = _log_softmax(logits[read, 1])[skip:]
    sb = sent[body]
    out: dict[int, SentenceSpan] = {}
    for s in dict.fromkeys(sb.tolist()):
        at = np.flatnonzero(sb == s)  # contiguous: a window holds whole sentences in order
        a, b = int(at[0]), int(at[-1]) + 1
        n = b - a
        pair = ls[a:b, None] + le[None, a:b]
        i, j = np.indices((n, n))
        pair[(j < i) | (j - i >= max_pieces)] = -np.inf
        k = int(np.argmax(pair))
        first, last = divmod(k, n)
        out[int(s)] = SentenceSpan(first, last, float(np.exp(pair[first, last])))
    return out


def piece_offsets(tokenizer: Any, text: str) -> list[tuple[int, int]]:
    """Character offsets of ``text``'s word pieces, tokenised alone as the tagger reads a
    sentence (no special tokens)."""
    return [tuple(o) for o in tokenizer.encode(text, add_special_tokens=False).offsets]


def char_span(tokenizer: Any, text: str, first: int, last: int) -> tuple[int, int]:
    """``(start, end)`` characters of word pieces ``first`` to ``last`` of ``text``."""
    offsets = piece_offsets(tokenizer, text)
    if not offsets:
        return 0, 0
    last = min(last, len(offsets) - 1)
    first = min(first, last)
    return int(offsets[first][0]), int(offsets[last][1])


#: Quotes a snapped span sheds from its ends (ASCII and curly).
_QUOTES = "'\"`\u2018\u2019\u201c\u201d"
#: Sentence punctuation a snapped span sheds from its ends (a full stop only at its end).
_PUNCT = ",;:!?"
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def _ends_word(c: str) -> bool:
    """Whether ``c`` separates words for snapping: white space, an em dash or an en dash
    ("the fifth Karmapa\u2014one")."""
    return c.isspace() or c in "\u2014\u2013"


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` without a glued footnote mark, the quotes, punctuation, possessive 's,
    enclosing round, square or curly brackets and unpaired brackets at the ends of
    ``text[start:end]`` (:func:`snap_span`)."""
    while start < end:
        a, b = text[start], text[end - 1]
        span = text[start:end]
        glued = span.rfind("[")
        if b == "]" and glued > 0 and not span[glued - 1].isspace():
            end = start + glued  # a footnote mark glued to the answer: "Gaddafi,[b]"
        elif a in _QUOTES or a in _PUNCT:
            start += 1
        elif b in _QUOTES or b in _PUNCT or b == ".":
            end -= 1
        elif end - start > 2 and span[-2:] in ("'s", "\u2019s"):
            end -= 2
        elif a in "([{" and b == _PAIRS[a]:  # "(Michael)": the brackets around the answer
            start, end = start + 1, end - 1
        elif a in _PAIRS and _PAIRS[a] not in span:
            start += 1
        elif b in _PAIRS.values() and not any(o in span for o, c in _PAIRS.items() if c == b):
            end -= 1
        else:
            break
    return start, end


def snap_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` widened to the whole words of ``text`` it touches (words end at white
    space and at em and en dashes), then trimmed of a footnote mark glued to its end, quotes,
    the punctuation , ; : ! ? and a final full stop, a possessive 's, brackets around it and a
    bracket without its partner; the span as it was if nothing would be left.

    The span head chooses word pieces, so on technical text it can stop inside a word ("48" of
    "48-bit") or take a quote with it ("\u2018<nettle/sha2.h>"); docs/tagger.md, "Word
    snapping"."""
    if not 0 <= start < end <= len(text):
        return start, end
    a, b = start, end
    while a > 0 and not _ends_word(text[a - 1]):
        a -= 1
    while b < len(text) and not _ends_word(text[b]):
        b += 1
    a, b = _trim(text, a, b)
    return (a, b) if a < b else (start, end)


@dataclass(frozen=True)
class SpanTagged(Tagged):
    """A :class:`Tagged` from a tagger with a span head: ``spans[i]`` is sentence i's best
    span in this reading (None: a heading, a sentence without words, one the window cut
    away)."""

    spans: tuple[SentenceSpan | None, ...] = ()


#: A thing named with a qualifier: "Voyager 1", "Apollo 11", "Henry VIII", "Type B".
_QUALIFIED = re.compile(r"\b([A-Z][\w-]+)\s+(\d+|[IVX]+\b|[A-Z]\b)")
#: Where a sentence's clauses part: a semicolon, or a comma before a conjunction.
_CLAUSE_END = re.compile(r";\s*|,\s+(?=(?:and|but|while|whereas|whilst)\b)")


def clauses(sentence: str) -> list[tuple[int, int]]:
    """``(start, end)`` characters of each clause of ``sentence`` (:data:`_CLAUSE_END`)."""
    out, at = [], 0
    for m in _CLAUSE_END.finditer(sentence):
        out.append((at, m.start()))
        at = m.end()
    out.append((at, len(sentence)))
    return [(a, b) for a, b in out if sentence[a:b].strip()]


def own_clause(question: str, sentence: str, start: int, end: int) -> tuple[int, int] | None:
    """The clause of ``sentence`` that names what ``question`` asks about, where the span
    ``start``-``end`` sits in a clause that names its neighbour instead: for "When was Voyager 1
    launched?", the span "20 August 1977" in "Voyager 2 was launched first, on 20 August 1977;
    Voyager 1 followed on 5 September 1977" sits beside "Voyager 2", and the clause to answer
    from is the one naming "Voyager 1". None when the span's clause is right (or no clause
    is)."""
    asked = {(m.group(1), m.group(2)) for m in _QUALIFIED.finditer(question)}
    if not asked:
        return None
    parts = clauses(sentence)
    here = next(((a, b) for a, b in parts if a <= start < b), None)
    if here is None or len(parts) < 2:
        return None

    def names(a: int, b: int) -> set[tuple[str, str]]:
        return {(m.group(1), m.group(2)) for m in _QUALIFIED.finditer(sentence[a:b])}

    mine = names(*here)
    heads = {n for n, _ in asked}
    if mine & asked or not any(n in heads for n, _ in mine):
        return None
    return next(((a, b) for a, b in parts if (a, b) != here and names(a, b) & asked), None)
