"""Fixtures of the framework tests (helpers in tests/pool_helpers.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pool_helpers import CORPUS, QUESTION, Paragraph, corpus_paragraphs


@pytest.fixture(scope="session")
def paragraphs() -> list[Paragraph]:
    return corpus_paragraphs()


@dataclass(frozen=True)
class Located:
    """Passages that carry their own location, as a caller may hand them over: a whole
    Markdown file (its ``##`` headings) and a PDF's text as ragsieve reads it (pages split by
    form feeds), each with the question whose answer sits under a known heading or page."""

    markdown: str
    markdown_question: str
    markdown_where: str
    pdf: str
    pdf_question: str
    pdf_where: str


@pytest.fixture(scope="session")
def located(tmp_path_factory: pytest.TempPathFactory) -> Located:
    from rich_docs import FACT, FILLER, write_pdf

    from ragsieve.formats import read_rich

    pdf = write_pdf(
        tmp_path_factory.mktemp("located") / "harbour.pdf",
        [["Harbour report", *FILLER[:3]], ["Dredging", FACT]],
        title="Harbour report",
    )
    return Located(
        markdown=(CORPUS / "rosetta-stone.md").read_text(encoding="utf-8"),
        markdown_question=QUESTION,
        markdown_where="Decipherment",
        pdf=read_rich(pdf).text,
        pdf_question="When was the dredger Albatross commissioned?",
        pdf_where="page 2",
    )
