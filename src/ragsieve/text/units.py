"""Which text units can be evidence: a unit without words (a bare page number, a table rule,
a pipe, a code fence alone) is layout, never a candidate for selection.

One predicate, :func:`has_words`, used wherever sentence units are made for selection, so that
every method and every reader agrees on what layout junk is.
"""

from __future__ import annotations

import re

__all__ = ["has_words", "is_navigation"]

#: Two letters in a row (any script): "9", "3 / 12", "|", "---|---", "- 7 -" and "4 H" (a table
#: cell and a stray glyph) have none.
_WORD = re.compile(r"[^\W\d_]{2}")
#: One letter named as code: a flag ("-a"), a specifier ("%r"), a quoted name ("`M`").
_NAME = re.compile(r"[-%`\\][^\W\d_]")
#: A letter of a script written without spaces (CJK, kana, Hangul): one is a word.
_WIDE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]")
#: A Markdown code fence line alone, with its info string (```` ```python ````, ``~~~``).
_FENCE_ONLY = re.compile(r"^\s*(?:`{3,}|~{3,})[\w+.#-]*\s*$")
#: Dot leaders, five dots or more with at most one space between them: a table-of-contents or
#: index line ("7.7.3.2 ECDSA . . . . . . 84"), which names a section and is never its content.
_LEADERS = re.compile(r"(?:\. ?){5,}")
#: A navigation line of a manual's HTML page ("Next: The Format String, Up: Invoking [Contents]
#: [Index]"): two or more "Next:", "Previous:", "Up:" labels, or a bracketed "[Contents]" /
#: "[Index]" link (brackets escaped or not: Markdown from HTML escapes them).
_NAV_LABEL = re.compile(r"\b(?:Next|Previous|Prev|Up)\s*:", re.IGNORECASE)
_NAV_LINK = re.compile(r"\\?\[\s*(?:Contents|Index)\s*\\?\]", re.IGNORECASE)
#: A lone capitalised heading of a man page or manual ("OPTIONS", "SEE ALSO", "EXIT STATUS"):
#: up to three upper-case words and nothing else.
_CAPS_HEADING = re.compile(r"^\s*[A-Z][A-Z'-]+(?:\s+[A-Z][A-Z'-]+){0,2}\s*:?\s*$")


def has_words(text: str) -> bool:
    """Whether ``text`` holds a word: two letters in a row, one letter named as code ("-a",
    "%r", "`M`": an option the reader may need) or one letter of a script written without
    spaces. A unit without one (a number alone, a rule, pipes, a code fence alone with or
    without its language name) is layout, not evidence; so is a table-of-contents line (dot
    leaders), whose words only name a section found elsewhere, and so are a page's navigation
    line and a lone capitalised heading (:func:`is_navigation`)."""
    if _FENCE_ONLY.match(text) or _LEADERS.search(text) or is_navigation(text):
        return False
    return bool(_WORD.search(text) or _NAME.search(text) or _WIDE.search(text))


def is_navigation(text: str) -> bool:
    """Whether ``text`` only steers a reader through a manual: a navigation line ("Next: ...,
    Up: ... [Contents][Index]") or a lone capitalised heading ("OPTIONS", "SEE ALSO")."""
    return (
        len(_NAV_LABEL.findall(text)) >= 2
        or _NAV_LINK.search(text) is not None
        or _CAPS_HEADING.match(text) is not None
    )
