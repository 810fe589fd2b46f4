"""Every prompt text ragsieve sends to an LLM, and the parsers for their answers.

Prompts live in one module so that a method comparison changes the retrieval, never the
wording, and so that a prompt change is one reviewable diff. Builders return OpenAI-style
message lists usable with any :class:`~ragsieve.llm.base.LLM`.

* :func:`build_answer_messages` -- the grounded QA prompt (open-ended or multiple-choice).
* :func:`build_feedback_messages` -- SAGE's self-feedback prompt, copied from Figure 6 of the
  SAGE paper; :func:`parse_feedback` reads its "Evaluation Score" / "Context Adjustment".
* :func:`build_judge_messages` -- SAKI-RAG's binary relevance judge (Eq. 6: the LLM sees
  ``[k_i; q]`` and answers "1" for relevant); :func:`parse_judge` reads the verdict. The paper's
  Appendix A.1 shows its exact wording only as an image, which our copy of the paper lacks, so
  this wording is ours (see docs/llm.md).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

# --------------------------------------------------------------------------- answering

# Plain wording on purpose: the default local model (SmolLM2-135M) echoed or mangled longer
# instructions ("A few words or one sentence: ..."). "In a few words, taken from the context"
# replaced "Use the context passages to answer the question briefly": with it Qwen2.5 0.5B stopped
# saying "I don't know" to answers it was given and its token F1 doubled (docs/llm.md,
# benchmarks/bench_reader.py).
ANSWER_SYSTEM = (
    "You are a helpful assistant. Answer the question in a few words, taken from the context "
    'passages. If the answer is not in the context, say "I don\'t know".'
)

ANSWER_SYSTEM_CHOICE = (
    "You are a helpful assistant. Use the context passages to answer the multiple-choice "
    "question. Reply with the letter of the correct option."
)

OPTION_LETTERS = string.ascii_uppercase


def format_context(chunks: Sequence[str]) -> str:
    """Number the chunks ``[1] ...`` so answers and feedback can refer to them."""
    return "\n\n".join(f"[{i}] {c.strip()}" for i, c in enumerate(chunks, 1))


def format_options(options: Sequence[str]) -> str:
    if len(options) > len(OPTION_LETTERS):
        raise ValueError(f"at most {len(OPTION_LETTERS)} options, got {len(options)}")
    return "\n".join(f"{OPTION_LETTERS[i]}. {o.strip()}" for i, o in enumerate(options))


def build_answer_prompt(
    question: str, chunks: Sequence[str], options: Sequence[str] | None = None
) -> str:
    """The user-message text of the answer prompt: numbered context, question, options."""
    parts = ["Context:", format_context(chunks) if chunks else "(no context)", ""]
    parts.append(f"Question: {question.strip()}")
    if options:
        parts += ["", "Options:", format_options(options), "", "Answer with the option letter."]
    else:
        parts += ["", "Answer:"]
    return "\n".join(parts)


def build_answer_messages(
    question: str, chunks: list[str], options: list[str] | None = None
) -> list[dict[str, str]]:
    """System + user messages asking for a short answer grounded in ``chunks``.

    With ``options`` the model is asked for the option letter (parse with
    :func:`parse_choice`), as SAGE tailors the prompt to multiple-choice questions.
    """
    system = ANSWER_SYSTEM_CHOICE if options else ANSWER_SYSTEM
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": build_answer_prompt(question, chunks, options)},
    ]


def is_answer_prompt(messages: Sequence[dict[str, str]]) -> bool:
    """Whether ``messages`` are an answer prompt of :func:`build_answer_messages` (open-ended or
    multiple-choice): a local reader ends its reply to one at the first line break
    (``LlamaCppLLM(short_answer=True)``), since the answer asked for is a few words."""
    first = messages[0] if messages else {}
    return first.get("role") == "system" and first.get("content") in (
        ANSWER_SYSTEM,
        ANSWER_SYSTEM_CHOICE,
    )


_LEADING_LETTER = re.compile(r"\(?([A-Z])(?:[.):]|\)?$|\)?\s+(?![a-z]))")
_NAMED_LETTER = re.compile(
    r"\b(?i:answer|option|choice)\b[^A-Za-z\n]{0,12}(?:(?i:is)\s*)?\(?([A-Z])\b"
)
_BRACKET_LETTER = re.compile(r"\(([A-Za-z])\)")
_TRAILING_LETTER = re.compile(r"(?:^|\s)\(?([A-Z])\)?[.!]?$")


def parse_choice(text: str, options: Sequence[str]) -> int | None:
    """Index of the option the model chose, or None.

    Tried in order: a reply that starts with the letter ("B", "B.", "(B)", "B) Paris" -- but
    not the word "A" in "A cat ..."), "answer/option is B", a bracketed "(B)", a final
    "... B", and finally a reply that contains exactly one option's text.
    """
    letters = OPTION_LETTERS[: len(options)]
    reply = text.strip()
    for m in (
        _LEADING_LETTER.match(reply),
        _NAMED_LETTER.search(reply),
        _BRACKET_LETTER.search(reply),
        _TRAILING_LETTER.search(reply),
    ):
        if m and m.group(1).upper() in letters:
            return letters.index(m.group(1).upper())
    low = reply.lower()
    hits = [i for i, o in enumerate(options) if o.strip() and o.strip().lower() in low]
    return hits[0] if len(hits) == 1 else None


# --------------------------------------------------------------------------- SAGE feedback

# Figure 6 of SAGE ("Prompt of Self-Feedback"), verbatim; {prompt} is the original answer
# prompt (context + question) and {answer} the LLM's answer to it.
FEEDBACK_TEMPLATE = (
    "**Original Prompt:** {prompt}\n"
    "\n"
    "**Original Answer:** {answer}\n"
    "\n"
    "**Objective (O):** You are to evaluate the original answer for the original prompt on a "
    "scale of 1 to 10 based on its accuracy and reasonability. Additionally, determine if the "
    "original prompt needs more related context (1) or less context (-1).\n"
    "\n"
    "**Style (S):** Provide a clear and concise evaluation in a formal and professional style.\n"
    "\n"
    "**Response (R):** Ensure the output follows this format:\n"
    "Evaluation Score: [1-10]. (The answer is highly accurate if Score ≥ 9.)\n"
    "Context Adjustment: [1, -1].\n"
    'Context adjustment should output "less context (-1)" with a probability of 60%, and '
    '"more context (1)" with a probability of 40%.\n'
    "\n"
    "**(output example):**\n"
    "Evaluation Score: 8\n"
    "Context Adjustment: -1"
)


def build_feedback_messages(
    question: str,
    context_chunks: list[str],
    answer: str,
    options: list[str] | None = None,
) -> list[dict[str, str]]:
    """SAGE's self-feedback prompt (Figure 6) as one user message; parse the reply with
    :func:`parse_feedback`. The "original prompt" is the answer prompt the LLM saw."""
    prompt = build_answer_prompt(question, context_chunks, options)
    text = FEEDBACK_TEMPLATE.format(prompt=prompt, answer=answer.strip())
    return [{"role": "user", "content": text}]


@dataclass(frozen=True)
class Feedback:
    """Parsed self-feedback: ``score`` in 1..10 and ``adjustment`` in {-1, +1}; either is None
    when the reply does not state it (the caller decides the fallback)."""

    score: int | None
    adjustment: int | None


# Between the label and the value: markdown bold, brackets, quotes, ":" or "=", and "is"/"of".
# "-" is left out on purpose so that "Score: -3" is not read as 3.
_SEP = r"[\s*_:=\[(\"'`]*(?:(?:is|of)\b[\s*_:=\[(\"'`]*)?"
# The value must not be the start of a range: an echo of Figure 6's "[1-10]" is no score.
_SCORE = re.compile(r"(?i)\bevaluation\s+score" + _SEP + r"(\d{1,2})(?![\d.]*\s*-\s*\d)(?!\d)")
_BARE_SCORE = re.compile(r"(?i)\bscore" + _SEP + r"(\d{1,2})(?![\d.]*\s*-\s*\d)(?!\d)")
_ADJUST = re.compile(r"(?i)context\s+adjustment\s*[:=]?\s*\[?\s*([^\n]*)")
_ADJUST_VALUE = re.compile(r"(?<![\d])([+-]?\s?1)(?![\d])")


def _parse_score(text: str) -> int | None:
    for pattern in (_SCORE, _BARE_SCORE):
        for m in pattern.finditer(text):
            value = int(m.group(1))
            if 1 <= value <= 10:
                return value
    return None


# Echoes of Figure 6's format lines: "[1, -1]" and the 60%/40% instruction.
_ADJUST_ECHO = re.compile(r"(?i)^[^\w+-]*[+-]?\s?1\s*(?:,|/|or)\s*[+-]?\s?1\b|probability")


def _parse_adjustment(text: str) -> int | None:
    for m in _ADJUST.finditer(text):
        line = m.group(1)
        if _ADJUST_ECHO.search(line):
            continue
        v = _ADJUST_VALUE.search(line)
        if v:
            return -1 if v.group(1).replace(" ", "").startswith("-") else 1
        low = line.lower()
        if ("less" in low) != ("more" in low):
            return -1 if "less" in low else 1
    return None


def parse_feedback(text: str) -> Feedback:
    """Read "Evaluation Score: N" and "Context Adjustment: ±1" from a feedback reply.

    Small models wrap, embellish and echo the format, so this tolerates markdown bold,
    brackets, "8/10", "is 8", a bare "Score: 8", "+1" and worded forms such as "less context
    (-1)". Echoes of Figure 6's format line ("[1-10]", "[1, -1]") are skipped rather than read
    as a score of 1 or an adjustment of +1; the first unambiguous statement wins. A field that
    cannot be read is None and the caller decides (SAGE's loop stops and keeps its answer).
    """
    return Feedback(score=_parse_score(text), adjustment=_parse_adjustment(text))


# --------------------------------------------------------------------------- SAKI-RAG judge

JUDGE_SYSTEM = (
    "You judge whether a text passage is relevant to a question. A passage is relevant if it "
    "contains information that helps answer the question. Reply with a single digit: 1 if the "
    "passage is relevant, 0 if it is not."
)

JUDGE_TEMPLATE = (
    "Passage:\n{text}\n\nQuestion: {question}\n\n"
    "Is the passage relevant to the question? Answer 1 (relevant) or 0 (not relevant)."
)


def build_judge_messages(question: str, text: str) -> list[dict[str, str]]:
    """SAKI-RAG's binary relevance judgement of a context-expanded candidate (Eq. 6).

    The reply's first token is "1" or "0", so a local model can also be scored without
    generating: ``LlamaCppLLM.yes_probability`` pools the "1"/"yes" vs "0"/"no" probabilities.
    """
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {"role": "user", "content": JUDGE_TEMPLATE.format(text=text.strip(), question=question)},
    ]


_VERDICT = re.compile(r"(?i)\b(1|0|yes|no|true|false|relevant|irrelevant|not relevant)\b")


def parse_judge(text: str) -> bool | None:
    """True for "1"/"yes"/"relevant", False for "0"/"no"/"not relevant"; None if unclear."""
    m = _VERDICT.search(text)
    if not m:
        return None
    return m.group(1).lower() in {"1", "yes", "true", "relevant"}
