"""PDF, HTML and DOCX files as text, and where in such a document a passage sits.

Each format is read by a well-kept library, never by a parser of ours: ``pypdf`` (page by
page), ``trafilatura`` (an HTML page's main content, boilerplate such as menus and footers
left out, as Markdown so that its headings survive; :mod:`ragsieve.webpage` keeps those it
would drop) and ``python-docx`` (paragraphs and tables in document order, ``Heading N`` styles
as Markdown headings).

Provenance lives in the text itself, so every index and every stage carries it for free: a PDF's
pages are separated by one form feed each (``\\f``, on a line of its own, or inside the line
where a sentence runs on; a one-page PDF's text ends with one), and headings are Markdown ``#``
lines outside code fences. A PDF's layout is not its text (:func:`drop_page_layout`): running
headers and footers (a line at the top or bottom of several pages, its numbers aside) and
page-number lines ("7", "Page 7", "7 / 12") are left out, and a sentence that runs over a page
break is joined across it by :data:`PAGE_JOIN` (a form feed inside the line), so that page
provenance stays exact.
:func:`locate` turns a character offset (a chunk's or a sentence's ``start``) into ``page 3``
(a PDF: pages only, since a ``#`` line of a PDF's text is a code comment, not a heading) or the
heading above it, for ``search``, ``ask --json``, ``explain`` and the viewer. A ``.md`` file's
own headings work the same way.

Titles explain themselves (:func:`clean_title`): an HTML page's ``<title>`` (else its first
heading) without permalink marks ("¶"), a Markdown file's first heading as plain text
(:func:`markdown_title`), a PDF's ``/Title`` or else the heading its first page sets in larger
type, never a line that starts with ``#``.
"""

from __future__ import annotations

import bisect
import functools
import html
import itertools
import math
import re
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsieve.errors import InputError
from ragsieve.text.markup import code_fences, in_fence
from ragsieve.webpage import (
    PERMALINK_MARKS,
    HeadingMarks,
    drop_permalinks,
    flat_html_text,
    is_markup,
    linear_html_parser,
)

PDF_SUFFIXES = {".pdf"}
HTML_SUFFIXES = {".html", ".htm"}
DOCX_SUFFIXES = {".docx"}
RICH_SUFFIXES = PDF_SUFFIXES | HTML_SUFFIXES | DOCX_SUFFIXES

#: What separates two PDF pages in a document's text (a blank line for the chunkers, too).
PAGE_BREAK = "\n\f\n"
#: What joins two PDF pages where a sentence runs on from one to the next: a form feed inside
#: the line (the page count stays exact; the sentence splitter sees whitespace).
PAGE_JOIN = " \f "
#: What ends a one-page PDF's text: a form feed, so that every PDF's text holds one and
#: :func:`locate` knows it for a PDF (its locations are pages; a ``#`` line in it is content,
#: not a heading). A longer PDF's page breaks are enough, and its text stays as it was.
PDF_END = "\n\f"
#: A Markdown ATX heading: the closing ``#`` run needs a space before it (``# C#`` is "C#").
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)

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


def printable(text: Path | str) -> str:
    """``text`` (a path, or a message naming one) with the bytes of a non-UTF-8 file name
    (Python's surrogate escapes) written as ``\\xff``: an id, title or message that can be
    stored and printed."""
    return str(text).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


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


_MARKS_AROUND = re.compile(rf"^[\s{PERMALINK_MARKS}]+|[\s{PERMALINK_MARKS}]+$")
#: Titles that writers fill in for the user: not a title (the file name says more).
_PLACEHOLDER_TITLES = {"untitled", "untitled document", "document", "no title"}
#: ``Microsoft Word - report.docx``: what Office's PDF printer writes as every PDF's /Title.
_OFFICE_PREFIX = re.compile(r"^Microsoft (?:Word|PowerPoint|Excel|Office Word) - ", re.IGNORECASE)
_OFFICE_FILE = re.compile(r"\.(?:docx?|pptx?|xlsx?|rtf|odt)$", re.IGNORECASE)

_MD_CODE = re.compile(r"(`+)(.+?)\1")
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_MD_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]*)>")
_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]*>")
_MD_STARS = re.compile(r"(?<!\\)(\*{1,3}|~~)(?=\S)(.+?)(?<=[^\s\\])\1")
_MD_UNDERSCORES = re.compile(r"(?<![\w\\])(_{1,3})(?=\S)(.+?)(?<=[^\s\\])\1(?!\w)")
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_SETEXT_H1 = re.compile(r"^ {0,3}=+[ \t]*$")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}[ \t]*$")
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)


def clean_title(title: str) -> str:
    """A title as one shows it: one line, no permalink mark around it, no writer's placeholder
    (``Untitled``) and no ``Microsoft Word -`` prefix; ``""`` when nothing is left."""
    title = _MARKS_AROUND.sub("", short_title(title))
    if _OFFICE_PREFIX.match(title):  # "Microsoft Word - report.docx": "report"
        title = _OFFICE_FILE.sub("", _OFFICE_PREFIX.sub("", title))
    return "" if title.lower() in _PLACEHOLDER_TITLES else title


def plain_markdown(text: str) -> str:
    """A heading's Markdown as plain text: ``[text](url)`` -> text, ``![alt](src)`` -> alt,
    ``**x**``, ``_x_``, ``~~x~~`` and `` `x` `` -> x, HTML tags and backslash escapes dropped
    (a code span's content is kept as written), permalink marks around it dropped."""
    # Cut first: a title or a heading label is shown at most 200 characters long, and the
    # patterns below are quadratic on a megabyte line of unclosed brackets or stars.
    parts = _MD_CODE.split(text[:2000])  # text, ticks, code, text, ticks, code, ..., text
    out: list[str] = []
    for i, part in enumerate(parts):
        if i % 3 == 1:
            continue
        if i % 3 == 2:
            out.append(part.strip())
            continue
        part = _MD_LINK.sub(r"\1", _MD_IMAGE.sub(r"\1", part))
        part = _HTML_TAG.sub("", _MD_AUTOLINK.sub(r"\1", part))
        for _ in range(3):  # nested emphasis: ***x***, **_x_**
            part = _MD_UNDERSCORES.sub(r"\2", _MD_STARS.sub(r"\2", part))
        out.append(html.unescape(_MD_ESCAPE.sub(r"\1", part)))
    return _MARKS_AROUND.sub("", " ".join("".join(out).split()))


@functools.lru_cache(maxsize=16)
def headings(text: str) -> tuple[tuple[int, int, str], ...]:
    """The Markdown ``#`` headings of ``text`` as ``(offset, level, plain text)``, those inside
    code fences left out; none in a PDF's text (:data:`PDF_END`: a ``#`` line there is a shell
    or Python comment, since a PDF carries no Markdown). Cached: :func:`locate` asks it of the
    same document once per passage."""
    if "\f" in text:
        return ()
    spans = code_fences(text)
    out: list[tuple[int, int, str]] = []
    for m in _HEADING.finditer(text):
        if in_fence(spans, m.start()):
            continue
        label = plain_markdown(m.group(2))
        if label:
            out.append((m.start(), len(m.group(1)), label))
    return tuple(out)


def _front_matter_title(text: str) -> str:
    """``title:`` of a YAML front matter block (``---`` lines) at the top of ``text``."""
    if not text.startswith("---\n"):
        return ""
    end = text.find("\n---", 4)
    m = _FRONT_TITLE.search(text, 4, end if end > 0 else 4)
    return m.group(1).strip("\"'") if m else ""


def _setext_h1(text: str) -> tuple[int, str]:
    """The offset and text of the first ``T`` over ``===`` heading in the first 20,000
    characters of ``text`` (outside code fences), or ``(-1, "")``."""
    spans, pos = code_fences(text[:20_000]), 0
    lines = text[:20_000].split("\n")
    for above, line in itertools.pairwise(lines):
        inside = in_fence(spans, pos)
        plain = above.strip() and not above.startswith(("#", "    "))
        if not inside and plain and _SETEXT_H1.match(line):
            return pos, plain_markdown(above)
        pos += len(above) + 1
    return -1, ""


def markdown_title(text: str) -> str:
    """A Markdown file's title as plain text: its front matter's ``title:``, else its first
    level-1 heading (``# T`` or ``T`` over ``===``) outside code fences, else the heading it
    opens with (any level); ``""`` when it has none of these."""
    title = _front_matter_title(text)
    heads = headings(text)
    if not title:
        atx = next(((h[0], h[2]) for h in heads if h[1] == 1), (-1, ""))
        setext = _setext_h1(text)
        found = [h for h in (atx, setext) if h[0] >= 0]
        title = min(found)[1] if found else ""
    if not title and heads:
        first = len(text) - len(text.lstrip())
        title = heads[0][2] if heads[0][0] == first else ""
    return clean_title(title)


def rst_title(text: str) -> str:
    """A reStructuredText file's title: the first line underlined (and maybe overlined) by a
    run of punctuation at least as long as it; ``""`` when there is none."""
    lines = text[:20_000].splitlines()
    for above, line in itertools.pairwise(lines):
        label = above.strip()
        if (
            label
            and not _RST_UNDERLINE.match(label)
            and _RST_UNDERLINE.match(line)
            and len(line.rstrip()) >= len(label)
        ):
            return clean_title(plain_markdown(label.replace("``", "`")))
    return ""


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
            f"{printable(path)}: cannot read this {what} file (not a zip archive: {e})"
        ) from e
    if len(infos) > MAX_ZIP_MEMBERS:
        raise InputError(
            f"{printable(path)}: {what} holds {len(infos)} parts "
            f"(more than {MAX_ZIP_MEMBERS}): not read"
        )
    total = sum(i.file_size for i in infos)
    if total > MAX_ZIP_UNCOMPRESSED:
        raise InputError(
            f"{printable(path)}: {what} would inflate to {total / 2**20:.0f} MB (limit "
            f"{MAX_ZIP_UNCOMPRESSED // 2**20} MB): a zip bomb or too large; not read"
        )
    for i in infos:
        ratio = i.file_size / max(1, i.compress_size)
        if i.file_size > ZIP_RATIO_FROM and ratio > MAX_ZIP_RATIO:
            raise InputError(
                f"{printable(path)}: {what} part {i.filename} inflates {ratio:.0f}:1 to "
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
        raise InputError(f"{printable(path)} is empty")
    try:
        if suffix in PDF_SUFFIXES:
            out = _read_pdf(path)
        elif suffix in HTML_SUFFIXES:
            out = _read_html(path)
        elif suffix in DOCX_SUFFIXES:
            out = _read_docx(path)
        else:  # pragma: no cover - io.read_file dispatches only these
            raise InputError(f"{printable(path)}: not a PDF, HTML or DOCX file")
    except InputError:
        raise
    except Exception as e:  # a damaged file: the library's own words, on one line
        first = printable(" ".join(str(e)[:1000].split())[:200]) or type(e).__name__
        kind = suffix[1:].upper()
        raise InputError(f"{printable(path)}: cannot read this {kind} file ({first})") from e
    if not out.text.replace("\f", "").strip():
        raise InputError(f"{printable(path)} has no text")
    return RichText(out.text, clean_title(out.title))


def _read_pdf(path: Path) -> RichText:
    import logging

    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its per-object notices are not ours
    with path.open("rb") as fh:
        reader = PdfReader(fh)
        if reader.is_encrypted and not reader.decrypt(""):  # an empty user password opens many
            raise InputError(
                f"{printable(path)} is encrypted (password protected): decrypt it first "
                "(e.g. qpdf --decrypt) and index the result"
            )
        return _pdf_text(path, reader)


def _pdf_text(path: Path, reader: Any) -> RichText:
    runs: list[tuple[float, str]] = []  # page 1's text runs with their type size

    def visit(text: str, cm: Any, tm: Any, _font: Any, size: Any) -> None:
        try:  # a damaged matrix costs the title its heading, never the document its text
            scale = math.hypot(float(tm[2]), float(tm[3])) * math.hypot(float(cm[2]), float(cm[3]))
            if text.strip() and math.isfinite(scale * float(size)):
                runs.append((round(float(size) * (scale or 1.0), 1), text))
        except (TypeError, ValueError, IndexError):
            pass

    pages = [
        _clean((page.extract_text(visitor_text=visit if i == 0 else None)) or "").strip()
        for i, page in enumerate(reader.pages)
    ]
    if pages and not any(pages):
        raise InputError(
            f"{printable(path)} has no text layer ({len(pages)} page(s), a scan?): run OCR on it "
            "first (e.g. ocrmypdf) and index the result"
        )
    meta = reader.metadata
    # Its /Title (a writer's placeholder is none), never a line of its text: a PDF carries no
    # Markdown, and its first "# ..." line is as likely a code comment as a heading.
    title = clean_title(str(meta.title)) if meta is not None and meta.title else ""
    pages = drop_page_layout(pages)
    text = "".join(_page_joins(pages)) + (PDF_END if len(pages) == 1 else "")
    return RichText(text, title or _pdf_heading(runs))


#: Lines at each end of a page where running headers, footers and page numbers sit.
EDGE_LINES = 2
#: A line at a page's edge on at least this many pages (its numbers aside) runs there.
RUNNING_PAGES = 3
_NUMBER = re.compile(r"\d+")
#: A page-number line: "7", "- 7 -", "Page 7", "page 7 of 12", "7 / 12", "vii".
_PAGE_NUMBER = re.compile(
    r"^[\s\-\u2013\u2014]*(?:page\s+)?(?:\d{1,5}|[ivxlcdm]{1,7})"
    r"(?:\s*(?:/|of)\s*\d{1,5})?[\s\-\u2013\u2014]*$",
    re.IGNORECASE,
)


def _edge(lines: list[str], drop: set[int], n: int) -> set[int]:
    """The indexes of the first and last ``n`` non-blank lines of a page (those in ``drop``
    aside)."""
    full = [i for i, line in enumerate(lines) if line.strip() and i not in drop]
    return set(full[:n] + full[-n:])


def _layout_key(line: str) -> str:
    """A line as its running copies share it: numbers (page, chapter) as ``#``, spaces one."""
    return _NUMBER.sub("#", " ".join(line.split()))


def _head_shape(key: str) -> str:
    """What a running head keeps from chapter to chapter: its first word (with letters),
    ``""`` for a line that starts otherwise."""
    first = key.split(" ", 1)[0]
    return first if len(key) > len(first) and any(c.isalpha() for c in first) else ""


def drop_page_layout(pages: list[str]) -> list[str]:
    """PDF pages without their layout lines: a page number among a page's first or last
    :data:`EDGE_LINES` non-blank lines, and a page's first or last line otherwise (a running
    head or foot) when it has letters, ends with no punctuation (a label such as "Returns:" or a
    sentence is text) and stands there on :data:`RUNNING_PAGES` or more pages,
    numbers aside (two pages when it ends with its page's number: "Chapter 3: Utilities 7", a
    chapter of two pages), or that ends with a number and starts with the same word as such
    lines on :data:`RUNNING_PAGES` or more pages ("Chapter 2: Copyright 2", "Chapter 6:
    Compatibility 7"). A line inside a page is never dropped; a page of layout alone is left
    empty (unless every page is: then nothing is dropped)."""
    lines = [p.split("\n") for p in pages]
    numbers = [
        {i for i in _edge(ls, set(), EDGE_LINES) if _PAGE_NUMBER.match(ls[i])} for ls in lines
    ]
    ends = [_edge(ls, nums, 1) for ls, nums in zip(lines, numbers, strict=True)]
    seen: Counter[str] = Counter()
    for ls, end in zip(lines, ends, strict=True):
        seen.update({_layout_key(ls[i]) for i in end})
    running = {
        k
        for k, n in seen.items()
        if any(c.isalpha() for c in k)
        and not k.endswith((".", ":", ";", ","))  # "Possible return values:" is text
        and n >= (2 if k.endswith(" #") else RUNNING_PAGES)
    }
    # "Chapter 2: Copyright 2", "Chapter 6: Compatibility 7": one page each, one shape.
    shapes = Counter(_head_shape(k) for k in seen if k.endswith(" #"))
    running.update(
        k
        for k in seen
        if k.endswith(" #") and _head_shape(k) and shapes[_head_shape(k)] >= RUNNING_PAGES
    )
    out = []
    for ls, nums, end in zip(lines, numbers, ends, strict=True):
        drop = nums | {i for i in end if _layout_key(ls[i]) in running}
        out.append("\n".join(line for i, line in enumerate(ls) if i not in drop).strip())
    return out if any(out) else pages


#: A page that ends this way has not ended its sentence: a lower-case letter, a digit or a
#: comma.
_OPEN_END = re.compile(r"[a-z0-9,]$")
#: A page that starts this way continues a sentence: a lower-case letter, "(", or a digit
#: that does not number a heading ("2.3. DESCRIPTION", "4 Function reference").
_CONTINUES = re.compile(r"^(?:[a-z(]|\d(?!(?:[\d.]*\s+[A-Z])))")
#: A page that ends with one of these words runs on, whatever the next one starts with
#: ("... was built in" / "Rotterdam by ...").
_OPEN_WORD = re.compile(
    r"\b(?:a|an|the|of|in|on|at|to|for|from|by|with|and|or|as|is|are|was|were)$"
)
#: A page that starts with a numbered heading ("4 Function reference") starts afresh.
_HEADING_START = re.compile(r"\d+(?:\.\d+)*\.?[ \t]+[A-Z]")
#: A numbered heading line ("3.3.1. BZ2_bzCompressInit"): a page that ends with one ends there.
_NUMBERED_HEADING = re.compile(r"(?:^|\n)\d+(?:\.\d+)*\.?[ \t]+\S[^\n]*$")


def _page_joins(pages: list[str]) -> Iterator[str]:
    """The pages with what goes between them: :data:`PAGE_JOIN` where a sentence runs on
    (the page ends mid-sentence, and the next one starts in lower case or with a digit or the
    page ends with a word such as "of" or "in"; never at a numbered heading), else
    :data:`PAGE_BREAK`."""
    for i, page in enumerate(pages):
        if i:
            before = pages[i - 1]
            runs_on = (
                _OPEN_END.search(before)
                and (_CONTINUES.match(page) or _OPEN_WORD.search(before[-12:]))
                and not _NUMBERED_HEADING.search(before[-300:])
                and not _HEADING_START.match(page)
            )
            yield PAGE_JOIN if runs_on else PAGE_BREAK
        yield page


#: A run of text set this many times larger than a page's body text is a heading.
PDF_HEADING_SCALE = 1.2


def _pdf_heading(runs: list[tuple[float, str]]) -> str:
    """A PDF's first heading, as its typesetting shows it: the first text on page 1 set at
    least :data:`PDF_HEADING_SCALE` times larger than the size most of its characters have
    (with the runs that follow it at that size); ``""`` when none stands out or it is a
    ``#`` line (a code comment, never a title)."""
    sizes: Counter[float] = Counter()
    for size, text in runs:
        sizes[size] += len(text)
    if not sizes:
        return ""
    body = sizes.most_common(1)[0][0]
    first = next((i for i, (size, _) in enumerate(runs) if size >= PDF_HEADING_SCALE * body), -1)
    if first < 0:
        return ""
    size = runs[first][0]
    text = " ".join(t for s, t in itertools.takewhile(lambda r: r[0] == size, runs[first:]))
    title = clean_title(text)
    return "" if title.startswith("#") or not any(c.isalpha() for c in title) else title


def _read_html(path: Path) -> RichText:
    import trafilatura
    from trafilatura.settings import use_config

    linear_html_parser()

    html = path.read_bytes()
    tree = trafilatura.load_html(html)  # parsed once: the title and the text read this tree
    title = ""
    marks = HeadingMarks()
    if tree is not None:
        drop_permalinks(tree)
        title = _html_title(tree)  # before the headings are marked: the first one may be it
        marks.mark(tree)
    # Its defaults give up on pages under 250 characters of content; a short note is a
    # document too.
    config = use_config()
    config.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")
    config.set("DEFAULT", "MIN_OUTPUT_SIZE", "1")
    text = trafilatura.extract(
        html if tree is None else tree,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        favor_recall=True,
        config=config,
    )
    text = marks.restore(text or "")
    if not text or not text.strip():  # a page with little running text: all of its text
        text = trafilatura.html2txt(html)
    if (not text or not text.strip()) and is_markup(html):  # nested past any tree parser's
        text = flat_html_text(html)  # limit: read it flat
    return RichText(_clean(text or ""), title)


def _html_title(tree: Any) -> str:
    """A parsed page's title: its ``<title>``, else its ``og:title``, else its first heading
    (``h1``, else ``h2`` ...), cleaned; ``""`` when it has none. The ``<title>`` comes first:
    a documentation site's pages often share one ``<h1>`` (the site's name) in their header."""

    def candidates() -> Iterator[Any]:  # lazily: each one is a walk of a large page
        yield tree.find(".//head/title")
        yield from tree.xpath("//meta[@property='og:title']/@content")[:1]
        yield from (next(tree.iter(f"h{n}"), None) for n in range(1, 7))

    for c in candidates():
        text = c if isinstance(c, str) else c.text_content() if c is not None else ""
        title = clean_title(str(text))
        if title:
            return title
    return ""


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
        level = _docx_heading_level(item)
        blocks.append(f"{'#' * level} {text}" if level else text)
    text = _clean("\n\n".join(b for b in blocks if b))
    # Its core properties' title, else its first Title or Heading 1 paragraph.
    title = clean_title(document.core_properties.title or "") or markdown_title(text)
    return RichText(text, title)


#: How far up a paragraph style's ``basedOn`` chain a heading style is looked for.
_STYLE_DEPTH = 8


def _outline_heading(element: Any) -> int | None:
    """The heading level a ``w:outlineLvl`` in a paragraph's or a style's own properties sets
    (0-8 -> 1-6; 9 is body text, 0), or None where it sets none."""
    from docx.oxml.ns import qn

    ppr = element.find(qn("w:pPr")) if element is not None else None
    lvl = ppr.find(qn("w:outlineLvl")) if ppr is not None else None
    value = lvl.get(qn("w:val")) if lvl is not None else None
    if value is None or not value.isdigit():
        return None
    return min(6, int(value) + 1) if int(value) < 9 else 0


def _docx_heading_level(paragraph: Any) -> int:
    """A DOCX paragraph's heading level (1-6; 0: body text), as Word's navigation pane reads
    it: a ``Title`` (1) or ``Heading N`` style, also through a custom style based on one (a
    house style "Chapter" based on Heading 1), else an outline level set on the paragraph or
    its style (level 0-8 -> 1-6; 9 is body text). Without these, a DOCX that styles its own
    headings gave its units no ``where``."""
    own = _outline_heading(paragraph._p)
    if own is not None:
        return own
    style = paragraph.style
    for _ in range(_STYLE_DEPTH):
        if style is None:
            break
        name = style.name or ""
        number = name.removeprefix("Heading ").strip()
        if name == "Title":
            return 1
        if name.startswith("Heading ") and number.isdigit():
            return min(6, int(number))
        outline = _outline_heading(style.element)
        if outline is not None:
            return outline
        style = style.base_style
    return 0


def locate(text: str, start: int, end: int | None = None) -> str:
    """Where the span ``[start, end)`` of a document's ``text`` sits: ``page N`` in a PDF
    (``pages 2-3`` when it crosses a page break; a PDF's text holds a form feed, and its
    locations are pages only), else the nearest Markdown heading above its start (outside code
    fences, as plain text), or ``""`` when the text has neither."""
    if "\f" in text:
        first = text.count("\f", 0, max(0, start)) + 1
        last = first if end is None else text.count("\f", 0, max(start, end)) + 1
        return f"page {first}" if last == first else f"pages {first}-{last}"
    heads = headings(text)
    i = bisect.bisect_right([h[0] for h in heads], start) - 1
    return heads[i][2] if i >= 0 else ""
