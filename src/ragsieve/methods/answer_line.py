"""The answer line: the tagger's answer span or the LLM's reply (issue 44, stop 53).

The packaged local readers (SmolLM2, Qwen2.5 0.5B) answer worse than the span they are shown
beside (dev: span F1 0.511, SmolLM2 0.142, qwen-0.5b 0.373). A reader that says so
(``span_first``, on for those two) has the span as its answer line when the span is sure and
the question is not a yes/no one (a span cannot say yes or no); its reply stays in
``Answer.reply``. The point was chosen on dev by the rule in docs/llm.md ("The answer line").
A question that asks which of two options ("..., A or B?") is answered by the option the reply
names, as a span cannot compare, and a yes/no question by the yes or no the reply says
(docs/llm.md, "A choice keeps the reply's choice", "A yes/no question's line").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ragsieve.llm.control import without_control
from ragsieve.types import Answer, SourceSpan

#: A question whose first word is one of these asks yes or no ("Are both ...?", "Did he ...?").
YES_NO_FIRST = frozenset(
    {"is", "are", "was", "were", "am", "do", "does", "did", "can", "could", "has", "have"}
    | {"had", "will", "would", "should", "shall", "may", "might", "must"}
)

#: The span answers when its score reaches this (chosen on dev, docs/llm.md).
SPAN_FIRST_POINT = 0.0

#: A question with one of these after its first word asks for something else ("Will Ferrell had
#: a role in the film directed by whom?").
WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "where", "when", "why", "how"})

#: The most words an option of a choice question may have.
CHOICE_WORDS = 8

_FIRST_WORD = re.compile(r"[A-Za-z']+")
_QUOTES = "\"'“”‘’ \t"
_YES_OR_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s")


def is_yes_no(question: str) -> bool:
    """Whether ``question`` asks yes or no: its first word is an auxiliary, and neither a wh-word
    (:data:`WH_WORDS`) nor "or" follows ("Was Ada or Bob born first?" asks which)."""
    words = [w.lower() for w in _FIRST_WORD.findall(question)]
    return (
        bool(words)
        and words[0] in YES_NO_FIRST
        and not WH_WORDS.intersection(words[1:])
        and "or" not in words[1:]
    )


def said_yes_no(reply: str) -> str | None:
    """The first of the words "yes" and "no" that ``reply``'s first sentence says (whole words,
    lower-cased); None when it says neither."""
    m = _YES_OR_NO.search(_FIRST_SENTENCE.split(reply.strip(), maxsplit=1)[0])
    return m.group(1).lower() if m else None


def span_answers(question: str, span: SourceSpan | None, point: float = SPAN_FIRST_POINT) -> bool:
    """Whether the span, not the reply, is the answer line of ``question``."""
    return (
        span is not None
        and bool(span.text.strip())
        and not is_yes_no(question)
        and (span.score >= point)
    )


def choice_options(question: str) -> tuple[str, str] | None:
    """The two options of a question that asks "..., A or B?" (after its last comma, split at
    its last " or ", quotes trimmed, each of 1 to :data:`CHOICE_WORDS` words); None for any
    other question, a yes/no one included."""
    q = question.strip()
    if not q.endswith("?") or "," not in q or is_yes_no(q):
        return None
    tail = q[:-1].rsplit(",", 1)[1]
    if " or " not in tail:
        return None
    options = tuple(o.strip(_QUOTES) for o in tail.rsplit(" or ", 1))
    if not all(0 < len(o.split()) <= CHOICE_WORDS for o in options):
        return None
    return options[0], options[1]


def chosen_option(reply: str, options: tuple[str, str]) -> str | None:
    """The option that ``reply`` names first (whole words, case-insensitive; at one place, the
    longer), or None when it names neither."""
    found: list[tuple[int, int, str]] = []
    for o in options:
        m = re.search(rf"(?<!\w){re.escape(o)}(?!\w)", reply, re.IGNORECASE)
        if m is not None:
            found.append((m.start(), -len(o), o))
    return min(found)[2] if found else None


def span_first(llm: Any) -> bool:
    """Whether ``llm`` asks for the span as its answer line (``span_first``: the packaged
    local readers; a reader without the attribute keeps its reply)."""
    return bool(getattr(llm, "span_first", False))


def answer_line(
    answer: Answer, span: SourceSpan | None, llm: Any, *, multiple_choice: bool = False
) -> Answer:
    """``answer`` (an LLM's) with the span beside it and its answer line: the reply, or for a
    reader with ``span_first`` the option its reply names for a choice question
    (:func:`choice_options`) or the yes or no it says for a yes/no question, else the span where
    :func:`span_answers` says so (never for a multiple-choice question, whose reply picks an
    option); ``trace["answer"]`` is ``"choice"``, ``"yes-no"``, ``"span"`` or ``"reply"``."""
    own = not multiple_choice and span_first(llm)
    options = choice_options(answer.question) if own else None
    chosen = chosen_option(answer.text, options) if options is not None else None
    said = said_yes_no(answer.text) if own and is_yes_no(answer.question) else None
    if chosen is not None:
        how, text = "choice", chosen
    elif said is not None:
        how, text = "yes-no", said
    elif own and span is not None and span_answers(answer.question, span):
        how, text = "span", span.text
    else:
        how, text = "reply", answer.text
    trace = {**answer.trace, "answer": how}
    # A span is document text: the chat markers it may hold are never part of the line.
    text = without_control(text)
    return replace(answer, text=text, reply=answer.text, span=span, trace=trace)
