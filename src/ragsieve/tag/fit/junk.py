"""Layout lines as training negatives: what a PDF or HTML page yields beside
its prose (page numbers, running heads, rules, lone fences, bare headings), inserted at label 0
into a share of the tagger's training passages so that it learns they are never evidence.
"""

from __future__ import annotations

import random

from ragsieve.tag.fit.data import UNKNOWN, Example

#: Heading words that stand alone on a line of a manual's layout (a heading with no content).
_JUNK_WORDS = ("Contents", "Table of Contents", "Miscellaneous", "Notes", "See also", "Index")


def junk_unit(title: str, rng: random.Random) -> str:
    """One line of layout that a PDF or HTML page yields beside its prose:
    a page number, a rule or pipe, a lone code fence, a running head with its page, a chapter
    line, a bare heading word. Never evidence, whatever the question."""
    page = rng.randint(1, 400)
    head = title.strip() or rng.choice(["User Guide", "Reference Manual", "Chapter 2"])
    forms = [
        str(page),
        f"- {page} -",
        f"Page {page}",
        f"Page {page} of {page + rng.randint(0, 200)}",
        "|",
        "| |",
        "---",
        "```",
        "* * *",
        f"{head} {page}",
        f"{page} {head}",
        f"Chapter {rng.randint(1, 12)}: {head} {page}",
        f"Figure {rng.randint(1, 40)}",
        rng.choice(_JUNK_WORDS),
    ]
    return rng.choice(forms)


def add_junk(examples: list[Example], rng: random.Random, rate: float) -> list[Example]:
    """A share ``rate`` of the examples with known sentence labels get one or two layout lines
    (:func:`junk_unit`) inserted among their sentences, labelled 0: the tagger learns that a
    page number or running head is never kept, even beside the answer. Passages with unknown
    labels are left alone (a 0 there would turn their multiple-instance term off)."""
    out: list[Example] = []
    for ex in examples:
        if not ex.sentences or UNKNOWN in ex.labels or rng.random() >= rate:
            out.append(ex)
            continue
        sents, labels = list(ex.sentences), list(ex.labels)
        for _ in range(rng.randint(1, 2)):
            at = rng.randint(0, len(sents))
            sents.insert(at, junk_unit(ex.title, rng))
            labels.insert(at, 0)
        out.append(
            Example(
                ex.question,
                ex.title,
                sents,
                labels,
                ex.passage_label,
                ex.source,
                ex.split,
                ex.answer,
            )
        )
    return out
