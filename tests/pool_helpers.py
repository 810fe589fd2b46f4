"""The sample corpus as paragraphs, and the question whose answer ("1822", in the Rosetta
Stone's decipherment paragraph) a selection must keep: shared by tests/test_pool.py and the
framework tests under tests/integrations/."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "corpus"
QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


@dataclass(frozen=True)
class Paragraph:
    title: str
    text: str
    source: str
    para: int


def corpus_paragraphs() -> list[Paragraph]:
    """Every paragraph of examples/corpus (headings dropped), with its document's title."""
    out: list[Paragraph] = []
    for path in sorted(CORPUS.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        title = text.splitlines()[0].lstrip("# ").strip()
        for para in re.split(r"\n\s*\n", text):
            if para.strip() and not para.startswith("#"):
                out.append(Paragraph(title, para.strip(), path.name, len(out)))
    return out


def is_answer(text: str) -> bool:
    """The Champollion sentence (the lighthouse paragraph has another 1822: Fresnel's lens)."""
    return "1822" in text and "Fresnel" not in text
