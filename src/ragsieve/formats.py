"""PDF, HTML and DOCX files as text, and where in such a document a passage sits.

Each format is read by a well-kept library, never by a parser of ours: ``pypdf`` (page by
page), ``trafilatura`` (an HTML page's main content, boilerplate such as menus and footers
left out, as Markdown so that its headings survive) and ``python-docx`` (paragraphs and tables
in document order, ``Heading N`` styles as Markdown headings).

Provenance lives in the text itself, so every index and every stage carries it for free: a PDF's
pages are separated by a form feed (``\\f``, on a line of its own), and headings are Markdown
``#`` lines. :func:`locate` turns a character offset (a chunk's or a sentence's ``start``) into
``page 3`` or the heading above it, for ``search``, ``ask --json``, ``explain`` and the viewer.
A ``.md`` file's own headings work the same way.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path

from ragsieve.errors import InputError

PDF_SUFFIXES = {".pdf"}
HTML_SUFFIXES = {".html", ".htm"}
DOCX_SUFFIXES = {".docx"}
RICH_SUFFIXES = PDF_SUFFIXES | HTML_SUFFIXES | DOCX_SUFFIXES

#: What separates two PDF pages in a document's text (a blank line for the chunkers, too).
PAGE_BREAK = "\n\f\n"
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


@dataclass(frozen=True)
class RichText:
    """A file's text and the title its metadata or first heading gives (may be empty)."""

    text: str
    title: str = ""


def read_rich(path: Path) -> RichText:
    """The text of a PDF, HTML or DOCX file; :class:`InputError` (one line) when it has none."""
    suffix = path.suffix.lower()
    try:
        if suffix in PDF_SUFFIXES:
            out = _read_pdf(path)
        elif suffix in HTML_SUFFIXES:
            out = _read_html(path)
        elif suffix in DOCX_SUFFIXES:
            out = _read_docx(path)
        else:  # pragma: no cover - io.read_file dispatches only these
            raise InputError(f"{path}: not a PDF, HTML or DOCX file")
    except InputError:
        raise
    except Exception as e:  # a damaged file: the library's own words, on one line
        first = " ".join(str(e).split())[:200] or type(e).__name__
        raise InputError(f"{path}: cannot read this {suffix[1:].upper()} file ({first})") from e
    if not out.text.replace("\f", "").strip():
        raise InputError(f"{path} has no text")
    return out


def _read_pdf(path: Path) -> RichText:
    import logging

    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its per-object notices are not ours
    reader = PdfReader(path)
    pages = [(page.extract_text() or "").strip() for page in reader.pages]
    if pages and not any(pages):
        raise InputError(
            f"{path} has no text layer ({len(pages)} page(s), a scan?): run OCR on it first "
            "(e.g. ocrmypdf) and index the result"
        )
    meta = reader.metadata
    title = str(meta.title).strip() if meta is not None and meta.title else ""
    if title.lower() in {"untitled", "untitled document"}:  # writers' placeholder, not a title
        title = ""
    return RichText(PAGE_BREAK.join(pages), title)


def _read_html(path: Path) -> RichText:
    import trafilatura
    from trafilatura.settings import use_config

    html = path.read_bytes()
    # Its defaults give up on pages under 250 characters of content; a short note is a
    # document too.
    config = use_config()
    config.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")
    config.set("DEFAULT", "MIN_OUTPUT_SIZE", "1")
    text = trafilatura.extract(
        html,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        favor_recall=True,
        config=config,
    )
    if not text or not text.strip():  # a page with little running text: all of its text
        text = trafilatura.html2txt(html)
    meta = trafilatura.extract_metadata(html)
    title = (meta.title or "").strip() if meta is not None else ""
    return RichText(text or "", title)


def _read_docx(path: Path) -> RichText:
    import docx
    from docx.table import Table

    document = docx.Document(str(path))
    blocks: list[str] = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows = [" | ".join(c.text.strip() for c in row.cells) for row in item.rows]
            blocks.append("\n".join(r for r in rows if r.strip(" |")))
            continue
        text = item.text.strip()
        if not text:
            continue
        style = (item.style.name if item.style is not None else "") or ""
        level = style.removeprefix("Heading ").strip()
        if style == "Title":
            blocks.append(f"# {text}")
        elif style.startswith("Heading ") and level.isdigit():
            blocks.append(f"{'#' * min(6, int(level))} {text}")
        else:
            blocks.append(text)
    title = (document.core_properties.title or "").strip()
    return RichText("\n\n".join(b for b in blocks if b), title)


def locate(text: str, start: int, end: int | None = None) -> str:
    """Where the span ``[start, end)`` of a document's ``text`` sits: ``page N`` (a PDF;
    ``pages 2-3`` when it crosses a page break), the nearest Markdown heading above its start,
    both (``page 3, Results``), or ``""`` when the text has neither."""
    parts: list[str] = []
    if "\f" in text:
        first = text.count("\f", 0, max(0, start)) + 1
        last = first if end is None else text.count("\f", 0, max(start, end)) + 1
        parts.append(f"page {first}" if last == first else f"pages {first}-{last}")
    heads = [(m.start(), m.group(2).strip()) for m in _HEADING.finditer(text)]
    i = bisect.bisect_right([h[0] for h in heads], start) - 1
    if i >= 0:
        parts.append(heads[i][1])
    return ", ".join(parts)
