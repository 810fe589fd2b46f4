"""Look-alike answers as hard span examples: a gold sentence that holds, beside the answer,
another value of the answer's kind ("Voyager 2 was launched first, on 20 August 1977; Voyager 1
followed on 5 September 1977"). The span head's start/end softmax already sets the answer
against every other word piece of the window; seeing these windows more often weighs the
neighbour of the same kind, the span's commonest wrong pick, more heavily.
"""

from __future__ import annotations

import re

from ragsieve.tag.fit.data import Example

_NUMBER = re.compile(r"\w*\d[\w.,:/-]*")
_NAME = re.compile(r"\b[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*")
_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def look_alike(ex: Example) -> bool:
    """Whether a gold sentence of ``ex`` holds its answer and another value of the same kind
    that the question does not name: another number when the answer holds a digit, else
    another capitalised name (not the sentence's first word) when the answer is one. The answer
    is found in its sentence ignoring case, as the span's gold characters are."""
    if not ex.answer or ex.passage_label != 1:
        return False
    if any(c.isdigit() for c in ex.answer):
        kind = _NUMBER
    elif ex.answer[:1].isupper():
        kind = _NAME
    else:
        return False
    asked = _words(ex.question) | _words(ex.answer)
    answer = re.compile(re.escape(ex.answer), re.IGNORECASE)
    for sentence, label in zip(ex.sentences, ex.labels, strict=True):
        if label != 1 or not answer.search(sentence):
            continue
        rest = answer.sub(" ", sentence)
        for m in kind.finditer(rest):
            if m.start() == 0 and kind is _NAME:
                continue
            if not _words(m.group()) <= asked:
                return True
    return False


def add_look_alikes(examples: list[Example], repeat: int) -> list[Example]:
    """``examples`` with every :func:`look_alike` one ``repeat - 1`` more times (1: unchanged)."""
    if repeat <= 1:
        return examples
    return examples + [ex for ex in examples if look_alike(ex)] * (repeat - 1)
