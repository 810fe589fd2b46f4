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
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsieve.errors import InputError

PDF_SUFFIXES = {".pdf"}
HTML_SUFFIXES = {".html", ".htm"}
DOCX_SUFFIXES = {".docx"}
RICH_SUFFIXES = PDF_SUFFIXES | HTML_SUFFIXES | DOCX_SUFFIXES

#: What separates two PDF pages in a document's text (a blank line for the chunkers, too).
PAGE_BREAK = "\n\f\n"
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)

#: Whitespace runs longer than this are cut to it when a file is read: a million spaces
#: overflow the BPE tokenizer's stack (tiktoken panics), and no text needs them.
MAX_WHITESPACE_RUN = 200
_LONG_SPACE = re.compile(rf"\s{{{MAX_WHITESPACE_RUN + 1},}}")

#: A title longer than this is cut at a word and ends with an ellipsis: a PDF's ``/Title`` can
#: hold a megabyte, and every hit, ``info --documents`` and the viewer carry the title.
MAX_TITLE_CHARS = 200

#: Bounds on a zip container (DOCX) before and while it is inflated. python-docx holds every
#: part in memory and parses its XML into a tree several times its size, so 200 MB of parts is
#: already ~1-2 GB of memory; a real DOCX, even a book with its images, is far below it.
MAX_ZIP_UNCOMPRESSED = 200 * 1024 * 1024
#: A member over :data:`ZIP_RATIO_FROM` bytes that inflates more than this many times is a
#: zip bomb (a text DOCX's XML inflates ~5-20 times; a run of one repeated byte, ~1000).
MAX_ZIP_RATIO = 100
ZIP_RATIO_FROM = 4 * 1024 * 1024
#: More parts than any document has (each costs a central-directory entry to read).
MAX_ZIP_MEMBERS = 10_000


def _name(path: Path | str) -> str:
    """``path`` (or a message naming it) as one can print and store it: a non-UTF-8 name's
    bytes (Python's surrogate escapes) written as ``\\xff``."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def collapse_space(text: str) -> str:
    """Shorten whitespace runs over :data:`MAX_WHITESPACE_RUN` characters: a run holding two or
    more line breaks becomes a paragraph break (two newlines), one with a single line break a
    newline (so a heading after it still starts its line), any other its first characters."""
    if len(text) <= MAX_WHITESPACE_RUN:
        return text

    def cut(m: re.Match[str]) -> str:
        run = m.group(0)
        lines = run.count("\n")
        return "\n\n" if lines >= 2 else "\n" if lines else run[:MAX_WHITESPACE_RUN]

    return _LONG_SPACE.sub(cut, text)


def _clean(text: str) -> str:
    """A piece of a rich document's text as the index keeps it: no form feed (it marks PDF
    pages, for :func:`locate`) and no overlong whitespace run."""
    return collapse_space(text.replace("\f", "\n"))


def short_title(title: str) -> str:
    """``title`` on one line and at most :data:`MAX_TITLE_CHARS` characters (cut at a word,
    ending with an ellipsis)."""
    title = " ".join(title.split()) if len(title) < 100_000 else " ".join(title[:4096].split())
    if len(title) <= MAX_TITLE_CHARS:
        return title
    cut = title[: MAX_TITLE_CHARS - 1]
    space = cut.rfind(" ")
    if space >= MAX_TITLE_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip() + "\u2026"


def check_zip(path: Path, what: str) -> None:
    """Refuse a zip container (a DOCX) that is not a zip or would inflate past the bounds above.

    The central directory's declared sizes are checked here; while a part is read, Python's
    ``zipfile`` stops at the declared size (and fails on the CRC), so a header that lies about
    its size cannot inflate past it.
    """
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as e:
        raise InputError(
            f"{_name(path)}: cannot read this {what} file (not a zip archive: {e})"
        ) from e
    if len(infos) > MAX_ZIP_MEMBERS:
        raise InputError(
            f"{_name(path)}: {what} holds {len(infos)} parts "
            f"(more than {MAX_ZIP_MEMBERS}): not read"
        )
    total = sum(i.file_size for i in infos)
    if total > MAX_ZIP_UNCOMPRESSED:
        raise InputError(
            f"{_name(path)}: {what} would inflate to {total / 2**20:.0f} MB (limit "
            f"{MAX_ZIP_UNCOMPRESSED // 2**20} MB): a zip bomb or too large; not read"
        )
    for i in infos:
        ratio = i.file_size / max(1, i.compress_size)
        if i.file_size > ZIP_RATIO_FROM and ratio > MAX_ZIP_RATIO:
            raise InputError(
                f"{_name(path)}: {what} part {i.filename} inflates {ratio:.0f}:1 to "
                f"{i.file_size / 2**20:.0f} MB (limit {MAX_ZIP_RATIO}:1): a zip bomb; not read"
            )


@dataclass(frozen=True)
class RichText:
    """A file's text and the title its metadata or first heading gives (may be empty)."""

    text: str
    title: str = ""


def read_rich(path: Path) -> RichText:
    """The text of a PDF, HTML or DOCX file; :class:`InputError` (one line) when it has none."""
    suffix = path.suffix.lower()
    if path.stat().st_size == 0:
        raise InputError(f"{_name(path)} is empty")
    try:
        if suffix in PDF_SUFFIXES:
            out = _read_pdf(path)
        elif suffix in HTML_SUFFIXES:
            out = _read_html(path)
        elif suffix in DOCX_SUFFIXES:
            out = _read_docx(path)
        else:  # pragma: no cover - io.read_file dispatches only these
            raise InputError(f"{_name(path)}: not a PDF, HTML or DOCX file")
    except InputError:
        raise
    except Exception as e:  # a damaged file: the library's own words, on one line
        first = _name(" ".join(str(e)[:1000].split())[:200]) or type(e).__name__
        kind = suffix[1:].upper()
        raise InputError(f"{_name(path)}: cannot read this {kind} file ({first})") from e
    if not out.text.replace("\f", "").strip():
        raise InputError(f"{_name(path)} has no text")
    return RichText(out.text, short_title(out.title))


def _read_pdf(path: Path) -> RichText:
    import logging

    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its per-object notices are not ours
    with path.open("rb") as fh:
        reader = PdfReader(fh)
        if reader.is_encrypted and not reader.decrypt(""):  # an empty user password opens many
            raise InputError(
                f"{_name(path)} is encrypted (password protected): decrypt it first "
                "(e.g. qpdf --decrypt) and index the result"
            )
        return _pdf_text(path, reader)


def _pdf_text(path: Path, reader: Any) -> RichText:
    pages = [_clean(page.extract_text() or "").strip() for page in reader.pages]
    if pages and not any(pages):
        raise InputError(
            f"{_name(path)} has no text layer ({len(pages)} page(s), a scan?): run OCR on it first "
            "(e.g. ocrmypdf) and index the result"
        )
    meta = reader.metadata
    title = str(meta.title).strip() if meta is not None and meta.title else ""
    if title.lower() in {"untitled", "untitled document"}:  # writers' placeholder, not a title
        title = ""
    return RichText(PAGE_BREAK.join(pages), title)


class _LinearParagraphText:
    """A mixin for trafilatura's lxml elements: its extractor asks ``//p//text()`` of the
    whole page once, and libxml2 (2.14) answers that in time quadratic in the number of ``<p>``
    (merging node sets): 28.6 s of the 35 s a 15 MB page of 200,000 paragraphs took. The same
    text nodes, in document order, gathered paragraph by paragraph, take linear time."""

    def xpath(self, path: str, **kw: Any) -> Any:
        if path != "//p//text()" or kw:
            return super().xpath(path, **kw)  # type: ignore[misc]
        root = self.getroottree().getroot()  # type: ignore[attr-defined]
        out: list[Any] = []
        for p in root.iter("p"):
            if next(p.iterancestors("p"), None) is None:  # a nested <p> is in its parent's
                out.extend(p.xpath(".//text()"))
        return out


def _linear_html_parser() -> None:
    """Give trafilatura's HTML parser the mixin above, once (a no-op if its layout changes)."""
    try:
        from lxml.html import HtmlElementClassLookup
        from trafilatura import utils

        mixed: dict[type, type] = {}

        class Lookup(HtmlElementClassLookup):  # type: ignore[misc]
            def lookup(self, kind: str, doc: Any, namespace: Any, name: str) -> Any:
                cls = super().lookup(kind, doc, namespace, name)
                if kind != "element" or cls is None:
                    return cls
                if cls not in mixed:
                    mixed[cls] = type(cls.__name__, (_LinearParagraphText, cls), {})
                return mixed[cls]

        global _LINEAR_DONE
        if not _LINEAR_DONE:
            utils.HTML_PARSER.set_element_class_lookup(Lookup())
            _LINEAR_DONE = True
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - another trafilatura
        pass


_LINEAR_DONE = False


def _read_html(path: Path) -> RichText:
    import trafilatura
    from trafilatura.settings import use_config

    _linear_html_parser()

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
    return RichText(_clean(text or ""), title)


def _read_docx(path: Path) -> RichText:
    import docx
    from docx.table import Table

    check_zip(path, "DOCX")
    with path.open("rb") as fh:  # a file object: python-docx would re-encode a str name
        document = docx.Document(fh)
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
    return RichText(_clean("\n\n".join(b for b in blocks if b)), title)


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
