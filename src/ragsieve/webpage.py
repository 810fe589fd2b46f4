"""An HTML page's tree before and after trafilatura reads it: what :mod:`ragsieve.formats`
needs beyond trafilatura's own options.

- A parser without libxml2's nesting limit, with linear-time paragraph text
  (:func:`linear_html_parser`), and a flat reader for a page nested past any tree parser.
- Permalink anchors emptied (:func:`drop_permalinks`), so that no title or heading ends in "¶".
- Headings kept (:class:`HeadingMarks`): trafilatura drops a page's ``<h1>``-``<h6>`` where
  they sit in a block it reads as boilerplate (DocBook's ``<div class="titlepage">``, Texinfo's
  and AsciiDoc's section headers), which left every unit of such a page without a ``where``.
  Each heading is marked in the tree as a paragraph that starts with a random token, and the
  token turned into the Markdown ``#`` line after extraction; no token is left in the text.
"""

from __future__ import annotations

import re
import secrets
from html.parser import HTMLParser
from typing import Any

from ragsieve.text.markup import code_fences, in_fence

#: Marks that page generators put beside a heading as its permalink (Sphinx's pilcrow, a
#: section sign, a link symbol, Font Awesome's link glyph): never part of a title or heading.
PERMALINK_MARKS = "\u00b6\u00a7\U0001f517\uf0c1"
#: The heading elements, by level.
HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: A site's chrome: a heading inside it (the site's name in its header) is left unmarked, for
#: trafilatura to leave out with the rest of the menu.
_CHROME_TAGS = ("header", "nav", "footer", "aside")


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


def linear_html_parser() -> None:
    """Give trafilatura an HTML parser without libxml2's nesting limit (``huge_tree``: a page
    nested 256 levels deep was cut there and read as "no text") and with the mixin above,
    once (a no-op if its layout changes)."""
    try:
        from lxml.html import HtmlElementClassLookup
        from lxml.html import HTMLParser as LxmlHTMLParser
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
            # trafilatura's own options (utils.HTML_PARSER), and huge_tree.
            utils.HTML_PARSER = LxmlHTMLParser(
                collect_ids=False,
                default_doctype=False,
                encoding="utf-8",
                remove_comments=True,
                remove_pis=True,
                huge_tree=True,
            )
            utils.HTML_PARSER.set_element_class_lookup(Lookup())
            _LINEAR_DONE = True
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - another trafilatura
        pass


_LINEAR_DONE = False


#: Elements whose content is not text a reader sees.
_UNSEEN_TAGS = frozenset({"script", "style", "noscript", "template", "head", "svg"})
#: Elements that end a line (a paragraph, a list item, a heading, a table row, a break).
_BLOCK_TAGS = frozenset(
    {"p", "div", "br", "li", "tr", "section", "article", "blockquote", "pre", "table", "ul"}
    | {"ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "main", "header"}
    | {"footer", "nav", "aside", "figure", "figcaption", "form", "fieldset", "address"}
)


class _FlatText(HTMLParser):
    """The visible text of a page from the standard library's event parser, which builds no
    tree and so has no nesting limit; headings as Markdown ``#`` lines."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.unseen = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in _UNSEEN_TAGS:
            self.unseen += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")
            if len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
                self.parts.append("#" * int(tag[1]) + " ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _UNSEEN_TAGS:
            self.unseen = max(0, self.unseen - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.unseen:
            self.parts.append(data)


def is_markup(raw: bytes) -> bool:
    """Whether ``raw`` is text with tags: UTF-8 without NUL bytes, holding a tag. A binary file
    named ``.html`` (a DOCX's zip bytes) is not read flat into a document of garbage."""
    if b"\x00" in raw:
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return re.search(rb"<[A-Za-z!/]", raw) is not None


def flat_html_text(raw: bytes) -> str:
    """The visible text of an HTML page, read flat (no tree): for a page nested deeper than
    libxml2 parses (thousands of levels), whose tree readers see nothing."""
    parser = _FlatText()
    parser.feed(raw.decode("utf-8", errors="replace"))
    parser.close()
    lines = (" ".join(ln.split()) for ln in "".join(parser.parts).split("\n"))
    return "\n\n".join(ln for ln in lines if ln and ln.strip("# "))


#: The text of a permalink anchor (``<a href="#id">¶</a>`` beside a heading): Sphinx, MkDocs,
#: Node.js's API pages (``#``), GitHub (an empty anchor around an icon).
_PERMALINK_TEXTS = {"", "#", *PERMALINK_MARKS}


def drop_permalinks(tree: Any) -> None:
    """Empty the permalink anchors of a parsed page, so that neither its title nor its
    headings end in "¶" or "#". Emptied, not removed: trafilatura drops the headings of a
    short page whose anchors are gone (it then takes another extraction path)."""
    for a in tree.iter("a"):
        if (a.get("href") or "").startswith("#") and a.text_content().strip() in _PERMALINK_TEXTS:
            for el in a.iter():
                el.text = None
                if el is not a:
                    el.tail = None


class HeadingMarks:
    """Headings carried through trafilatura: :meth:`mark` turns each non-empty heading of a
    parsed page (outside its header, menus and footer) into a paragraph ``<token><level>
    <text>``; :meth:`restore` turns each such line of the extracted Markdown into ``#`` x level
    and the text, and a heading that came out inside a line (a table cell, a list item) into
    its plain text. The token is new for each page (48 random bits), so a page cannot hold it
    by chance or on purpose."""

    def __init__(self) -> None:
        self.token = "rsh" + secrets.token_hex(6)
        self._line = re.compile(rf"^([ \t]*)\\?{self.token}([1-6]) ", re.MULTILINE)
        self._inline = re.compile(rf"\\?{self.token}[1-6] ?")
        self._marked = False

    def mark(self, tree: Any) -> int:
        """Mark the headings of ``tree`` in place; how many were marked."""
        self._marked = True
        n = 0
        for el in list(tree.iter(*HEADING_TAGS)):
            text = " ".join(el.text_content().split())
            if not text or next(el.iterancestors(*_CHROME_TAGS), None) is not None:
                continue
            for child in list(el):
                el.remove(child)
            el.text = f"{self.token}{el.tag[1]} {text}"
            el.tag = "p"
            n += 1
        return n

    def restore(self, text: str) -> str:
        """The extracted Markdown with each marked heading as a ``#`` line (or plain text), and
        every other ``#`` line outside a code fence escaped (``\\#``): every heading of the page
        was marked, so such a line is page text, a comment of a ``<pre>`` block that
        trafilatura wrote without a fence ("# If left unspecified, ..."). A fence trafilatura
        opens after text on a line gets a line of its own (:data:`_FENCE_AFTER_TEXT`)."""
        text = _FENCE_AFTER_TEXT.sub(r"\n\1", text)
        if self._marked:  # else the page was not parsed: its headings are trafilatura's own
            text = _unmarked_hashes(text)
        if self.token not in text:
            return text
        text = self._line.sub(lambda m: "#" * int(m.group(2)) + " ", text)
        return self._inline.sub("", text)


#: A code fence that trafilatura opens at the end of a line of text ("calls like ```"): Markdown
#: reads no fence there, so the one that closes it would open a fence that runs on, hiding
#: every heading after it. It goes on a line of its own.
_FENCE_AFTER_TEXT = re.compile(r"(?<=\S)[ \t]*(`{3,})[ \t]*$", re.MULTILINE)
#: A line that Markdown would read as a heading: up to three spaces, one to six ``#``, a space.
_HASH_LINE = re.compile(r"^( {0,3})(#{1,6}(?:[ \t]|$))", re.MULTILINE)


def _unmarked_hashes(text: str) -> str:
    """``text`` with the ``#`` heading lines outside code fences escaped (``\\# ...``)."""
    if "#" not in text:
        return text
    spans = code_fences(text)
    return _HASH_LINE.sub(
        lambda m: m.group() if in_fence(spans, m.start()) else f"{m.group(1)}\\{m.group(2)}",
        text,
    )
