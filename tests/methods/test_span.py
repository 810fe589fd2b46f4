"""The tagger's answer span on every surface (issue 44 item 6): located in the source by the
``tagger`` and ``full`` methods, carried on the answer beside the LLM's (``Answer.span``), the
answer itself with no LLM, and scored by the evaluation. Real indexes of the sample corpus,
the shipped tagger, and a copy of it without the span output (an older folder)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import scripted_llm

from ragsieve.index import Index
from ragsieve.methods import build_method, get_method
from ragsieve.methods.base import Retrieval
from ragsieve.tag.graph import drop_span_head
from ragsieve.tag.model import shipped_model_dir
from ragsieve.types import Answer, Chunk, Context, Scored, SourceSpan

pytestmark = pytest.mark.integration

QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


@pytest.fixture(scope="module")
def no_head(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped tagger folder with its span head dropped (``drop_span_head``): what a folder
    trained before the span head looks like (every other output bit-identical)."""
    out = tmp_path_factory.mktemp("tagger") / "no-span"
    shutil.copytree(shipped_model_dir(), out)
    for path in (out / "model.onnx", out / "model_fp32.onnx"):
        if path.is_file():
            drop_span_head(path, path)
    return out


def _located(index: Index, r: Retrieval | Answer) -> SourceSpan:
    """``r``'s span, checked against the source: its text is the document's characters
    ``start``-``end``, inside the sentence unit it names, a unit the tagger scored."""
    span = r.span
    assert span is not None
    doc = index.get_document(span.doc_id)
    assert doc is not None and doc.text[span.start : span.end] == span.text
    assert span.text.strip() and 0 < span.score <= 1
    units = [s.chunk for s in (r.candidates if isinstance(r, Retrieval) else r.context.chunks)]
    unit = next(c for c in units if c.id == span.chunk_id)
    assert unit.doc_id == span.doc_id and unit.start <= span.start < span.end <= unit.end
    assert span.title == unit.title
    return span


def test_tagger_and_full_locate_the_span_in_the_source(plain: Index, sentences: Index) -> None:
    for index, method in ((plain, "tagger"), (sentences, "full"), (plain, "full")):
        m = get_method(method, index)
        assert m.gives_spans()
        r = m.retrieve([QUESTION])[0]
        span = _located(index, r)
        # A kept sentence: in the context the LLM reads (no budget here), and it answers.
        assert span.chunk_id in [s.chunk.id for s in r.context.chunks]
        assert "1822" in span.text


def test_no_llm_answers_with_the_span(plain: Index) -> None:
    ans = get_method("tagger", plain).ask(QUESTION, None)
    span = _located(plain, ans)
    assert ans.text == span.text and ans.method == "tagger"
    assert (ans.usage.prompt_tokens, ans.usage.completion_tokens, ans.cost) == (0, 0, 0.0)
    assert ans.trace["llm"] is None and ans.line.kind == "span"
    assert "generate" not in ans.timings
    out = ans.to_json()
    assert out["answer"] == span.text and out["span"]["in_context"] is True
    assert {k: out["span"][k] for k in ("text", "doc_id", "chunk_id", "start", "end")} == {
        "text": span.text,
        "doc_id": span.doc_id,
        "chunk_id": span.chunk_id,
        "start": span.start,
        "end": span.end,
    }


def test_the_span_rides_beside_the_llm_answer(
    plain: Index, sentences: Index, scripted: Any
) -> None:
    script, url = scripted
    m = get_method("tagger", plain)
    r = m.retrieve([QUESTION])[0]
    ans = m.answer(r, scripted_llm(url))
    assert (ans.text, ans.usage.prompt_tokens) == ("answer 0", 100)  # the LLM's answer
    assert ans.span == r.span and ans.to_json()["span"]["text"] == _located(plain, ans).text
    # Through SAGE's feedback loop too: the span of the retrieval the loop started from.
    m = build_method("full[feedback=true,max_rounds=1]", sentences)
    r = m.retrieve([QUESTION])[0]
    ans = m.answer(r, scripted_llm(url))
    assert "feedback" in ans.trace and script.kinds()[-2:] == ["answer", "feedback"]
    assert ans.span is not None and ans.span == r.span


def test_methods_without_a_span_answer_none(plain: Index, no_head: Path) -> None:
    for m in (get_method("naive", plain), get_method("tagger", plain, model=str(no_head))):
        assert not m.gives_spans()
        r = m.retrieve([QUESTION])[0]
        assert r.span is None and r.context.chunks
        ans = m.answer(r, None)
        assert (ans.text, ans.span, ans.line.kind) == ("", None, "none")
        assert ans.to_json()["span"] is None and ans.context == r.context
    # The older folder keeps the same sentences as the shipped one: only the span is new.
    shipped = get_method("tagger", plain).retrieve([QUESTION])[0]
    old = get_method("tagger", plain, model=str(no_head)).retrieve([QUESTION])[0]
    assert [s.chunk.id for s in old.context.chunks] == [s.chunk.id for s in shipped.context.chunks]


def test_in_context_says_whether_the_llm_read_the_span() -> None:
    unit = Chunk("d#s0", "d", 0, "Champollion spoke in 1822.", 10, 36, 0, 1, 7, "Stone")
    span = SourceSpan("1822", 0.9, "d", "d#s0", 31, 35, "Stone")
    read = Context((Scored(unit, 0.8),), 7)
    assert span.to_json(read)["in_context"] is True
    assert span.to_json(Context((), 0))["in_context"] is False
    assert "in_context" not in span.to_json()
