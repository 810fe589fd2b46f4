"""The answer line: the tagger's answer span or the LLM's reply (issue 44, stop 53).

The packaged local readers (SmolLM2, Qwen2.5 0.5B) answer worse than the span they are shown
beside (dev: span F1 0.511, SmolLM2 0.142, qwen-0.5b 0.373). A reader that says so
(``span_first``, on for those two) has the span as its answer line when the span is sure and
the question is not a yes/no one (a span cannot say yes or no); its reply stays in
``Answer.reply``. The point was chosen on dev by the rule in docs/llm.md ("The answer line").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ragsieve.types import Answer, SourceSpan

#: A question whose first word is one of these asks yes or no ("Are both ...?", "Did he ...?").
YES_NO_FIRST = frozenset(
    {"is", "are", "was", "were", "am", "do", "does", "did", "can", "could", "has", "have"}
    | {"had", "will", "would", "should", "shall", "may", "might", "must"}
)

#: The span answers when its score reaches this (chosen on dev, docs/llm.md).
SPAN_FIRST_POINT = 0.0

_FIRST_WORD = re.compile(r"[A-Za-z']+")


def is_yes_no(question: str) -> bool:
    """Whether ``question`` asks yes or no, by its first word."""
    m = _FIRST_WORD.search(question)
    return m is not None and m.group(0).lower() in YES_NO_FIRST


def span_answers(question: str, span: SourceSpan | None, point: float = SPAN_FIRST_POINT) -> bool:
    """Whether the span, not the reply, is the answer line of ``question``."""
    return (
        span is not None
        and bool(span.text.strip())
        and not is_yes_no(question)
        and (span.score >= point)
    )


def span_first(llm: Any) -> bool:
    """Whether ``llm`` asks for the span as its answer line (``span_first``: the packaged
    local readers; a reader without the attribute keeps its reply)."""
    return bool(getattr(llm, "span_first", False))


def answer_line(
    answer: Answer, span: SourceSpan | None, llm: Any, *, multiple_choice: bool = False
) -> Answer:
    """``answer`` (an LLM's) with the span beside it and its answer line: the reply, or for a
    reader with ``span_first`` the span where :func:`span_answers` says so (never for a
    multiple-choice question, whose reply picks an option); ``trace["answer"]`` is ``"span"``
    or ``"reply"``."""
    use_span = not multiple_choice and span_first(llm) and span_answers(answer.question, span)
    trace = {**answer.trace, "answer": "span" if use_span else "reply"}
    text = span.text if use_span and span is not None else answer.text
    return replace(answer, text=text, reply=answer.text, span=span, trace=trace)
