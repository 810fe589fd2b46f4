"""The value types: one span type, located in the index by its sentence unit, and the typed
answer line that every caller prints or serialises."""

from __future__ import annotations

from ragsieve.types import LINE_KINDS, AnswerLine, Chunk, Context, Scored, SourceSpan


def _unit() -> Chunk:
    text = "Champollion announced it in 1822."
    return Chunk("stone#s3", "stone", 3, text, 120, 120 + len(text), 3, 4, 9, "Rosetta Stone")


def test_a_span_found_in_a_sentence_is_located_in_its_document() -> None:
    unit = _unit()
    found = SourceSpan("1822", 0.8, start=28, end=32, passage=2, sentence=5)
    assert unit.text[found.start : found.end] == found.text and found.doc_id == ""
    at = found.located(unit)
    assert (at.doc_id, at.chunk_id, at.title) == ("stone", "stone#s3", "Rosetta Stone")
    assert (at.start, at.end) == (148, 152) and (at.text, at.score) == ("1822", 0.8)
    # Its JSON is the located span's fields (as ``ask --json`` always wrote them).
    ctx = Context((Scored(unit, 0.9),), 9)
    out = at.to_json(ctx)
    assert list(out) == [*SourceSpan.JSON_FIELDS, "in_context"] and out["in_context"] is True
    assert at.to_json(Context((), 0))["in_context"] is False


def test_the_answer_line_serialises_whole() -> None:
    span = SourceSpan("1822", 0.8, "stone", "stone#s3", 148, 152, "Rosetta Stone")
    line = AnswerLine("1822", "span", 0.61, agrees=True, span=span)
    out = line.to_json()
    assert out == {
        "text": "1822",
        "kind": "span",
        "confidence": 0.61,
        "abstained": False,
        "why": None,
        "agrees": True,
        "span": span.to_json(),
    }
    gone = AnswerLine(None, "abstain", 0.1, "confidence 0.10 is under the floor 0.34")
    assert gone.to_json()["span"] is None and gone.kind in LINE_KINDS
