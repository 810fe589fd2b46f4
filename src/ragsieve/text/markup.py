"""A span of document text shown as plain text: the Markdown inline markup that HTML and
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

import re

__all__ = ["plain"]

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
