"""Markdown's syntax read from document text: a span shown as plain text, and where the code
fences are (a ``#`` line inside one is code, not a heading).

A span of document text shown as plain text: the Markdown inline markup that HTML and
Markdown sources carry (a link's URL, a backslash escape, emphasis stars) is not part of an
answer ("[RFC8878](https://...)" answers "RFC8878"; "$XDG\\_CONFIG\\_HOME" is
"$XDG_CONFIG_HOME").

Only what CommonMark defines as inline syntax is removed: a link or image keeps its text, an
escaped ASCII punctuation mark its mark, a pair of ``*`` runs around words its words, and a run
of two or more ``*`` left alone at either end goes. A lone ``*`` stays (a glob: ``*.tar.gz``), and
so do underscores (identifiers: ``__NOGLOBS__``) and a backslash before anything else
(``MIME-TreeMagic\\0\\n``). The dev figures: docs/llm.md, "Spans without markup".
"""

from __future__ import annotations

import bisect
import math
import re

__all__ = ["code_fences", "in_fence", "plain"]

#: A code fence's line (``` or ~~~, indented at most 3 spaces): ``#`` lines inside are code.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
#: ``[text](url "title")`` and ``![alt](src)``: the text stays.
_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*<?[^)\s>]*>?(?:\s+\"[^\"\n]*\")?\s*\)")
#: A backslash before ASCII punctuation (CommonMark's escapable characters).
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
#: A pair of star runs around words (``*git ls-files*``, ``**ffi_status**``).
_STARS = re.compile(r"(?<![\\*])(\*{1,3})(?=[^\s*])(.+?)(?<=[^\s*\\])\1(?!\*)")
#: A run of two or more stars alone at an end (``segmentation fault.**``).
_LOOSE = re.compile(r"^\*{2,}\s*|\s*\*{2,}$")


def plain(text: str) -> str:
    """``text`` without Markdown inline markup (links, escapes, emphasis stars), trimmed."""
    out = _LINK.sub(r"\1", text)
    out = _STARS.sub(r"\2", out)
    out = _ESCAPE.sub(r"\1", out)
    return _LOOSE.sub("", out.strip()).strip()


def code_fences(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of the Markdown code fences in ``text``, in order (an unclosed
    one runs to the end; a fence closes on a run of its own mark at least as long)."""
    if "```" not in text and "~~~" not in text:
        return []
    spans: list[tuple[int, int]] = []
    opened: re.Match[str] | None = None
    for m in _FENCE.finditer(text):
        mark = m.group(1)
        if opened is None:
            opened = m
        elif mark[0] == opened.group(1)[0] and len(mark) >= len(opened.group(1)):
            spans.append((opened.start(), m.end()))
            opened = None
    if opened is not None:
        spans.append((opened.start(), len(text)))
    return spans


def in_fence(spans: list[tuple[int, int]], at: int) -> bool:
    """Whether offset ``at`` lies inside one of ``spans`` (:func:`code_fences`: in order, apart),
    found by bisection on the spans themselves (no list built per call)."""
    i = bisect.bisect_right(spans, (at, math.inf)) - 1
    return i >= 0 and at < spans[i][1]
