"""Fixtures of the framework tests (helpers in tests/pool_helpers.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pool_helpers import CORPUS, QUESTION, Paragraph, corpus_paragraphs

from ragsieve.errors import InputError


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


#: What an adapter selected, as ``(text, metadata)`` per piece.
Selected = list[tuple[str, dict[str, Any]]]


@pytest.fixture(scope="session")
def assert_located(
    located: Located,
) -> Callable[[Callable[[str], Selected], Callable[[dict[str, Any]], str]], None]:
    """The check of every adapter's where-test: for the Markdown and the PDF question, the
    piece with the answer names its heading or page, and each piece's ``ragsieve_where`` is
    what :func:`~ragsieve.formats.locate` reads at its offsets in its source text.
    ``select(question)`` runs the adapter; ``source(metadata)`` is a piece's source text."""
    from ragsieve.formats import locate

    def check(select: Callable[[str], Selected], source: Callable[[dict[str, Any]], str]) -> None:
        for question, where in [
            (located.markdown_question, located.markdown_where),
            (located.pdf_question, located.pdf_where),
        ]:
            out = select(question)
            hit = next(m for text, m in out if "1822" in text or "Albatross" in text)
            assert hit["ragsieve_where"] == where
            for _, m in out:
                at = locate(source(m), m["ragsieve_start"], m["ragsieve_end"])
                assert m["ragsieve_where"] == at and at

    return check


@pytest.fixture(scope="session")
def assert_refuses_bad_queries() -> Callable[[Callable[[Any], Any], str], None]:
    """The check of the index retrievers' bad-query tests: ``call(query)`` refuses None and
    ``blank`` with one line each, and still answers the question afterwards."""

    def check(call: Callable[[Any], Any], blank: str) -> None:
        for query, fragment in [(None, "query must be a string, got None"), (blank, "is empty")]:
            with pytest.raises(InputError, match=fragment):
                call(query)
        assert call(QUESTION)  # and the retriever still answers

    return check
