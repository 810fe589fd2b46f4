"""Which text units can be evidence: a unit without words (a bare page number, a table rule,
a pipe, a code fence alone) is layout, never a candidate for selection.

One predicate, :func:`has_words`, used wherever sentence units are made for selection, so that
every method and every reader agrees on what layout junk is (issue 44, item 3).
"""

from __future__ import annotations

import re

__all__ = ["has_words"]

#: A letter (any script): "9", "3 / 12", "|", "---|---" and "- 7 -" have none; a flag ("-a"),
#: a format specifier ("%r") or a one-letter option is a name the reader may need.
_LETTER = re.compile(r"[^\W\d_]")
#: A Markdown code fence line alone, with its info string (```` ```python ````, ``~~~``).
_FENCE_ONLY = re.compile(r"^\s*(?:`{3,}|~{3,})[\w+.#-]*\s*$")


def has_words(text: str) -> bool:
    """Whether ``text`` holds a word: a letter of any script, outside a code fence line. A unit
    without one (a number alone, a rule, pipes, a code fence alone with or without its
    language name) is layout, not evidence; "- `%r`" or "-a" names an option and is kept."""
    if _FENCE_ONLY.match(text):
        return False
    return bool(_LETTER.search(text))
