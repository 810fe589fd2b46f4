"""How a listing names a document: its title, and where two documents share a title, the
shortest end of their paths that tells them apart (``Overview · v18/api.html``).

Two pages of one site often carry one ``<title>``; a listing that prints only the title leaves
the user to guess which of them it means. The stored title is left as it is: only what
``info --documents``, ``search`` and ``ask`` print gains the path's end.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

#: What joins a shared title and the end of the path that tells its document apart.
SEPARATOR = " \u00b7 "
_PATH_SEP = re.compile(r"[/\\]+")


def distinguishing_suffixes(ids: Iterable[str]) -> dict[str, str]:
    """For documents that share a title: each id's shortest end (in path components, ``/`` or
    ``\\``) that no other id in ``ids`` ends with; the whole id when none is shorter."""
    parts = {i: [p for p in _PATH_SEP.split(i) if p] or [i] for i in set(ids)}
    out: dict[str, str] = {}
    left = set(parts)
    depth = 1
    while left:
        ends = {i: "/".join(parts[i][-depth:]) for i in left}
        counts = Counter(ends.values())
        # An id whose whole path is the end of another's cannot be told apart by less.
        for i, end in ends.items():
            if counts[end] == 1 or depth >= len(parts[i]):
                out[i] = end if counts[end] == 1 else i
        left -= set(out)
        depth += 1
    return out


def display_names(docs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``doc_id -> name`` for ``(doc_id, title)`` pairs: the title where no other document of
    ``docs`` has it, ``title · end of path`` where some do, the id where the title is empty."""
    by_title: dict[str, set[str]] = defaultdict(set)
    for doc_id, title in docs:
        by_title[title].add(doc_id)
    out: dict[str, str] = {}
    for title, ids in by_title.items():
        if not title:
            out.update((i, i) for i in ids)
        elif len(ids) == 1:
            out.update((i, title) for i in ids)
        else:
            ends = distinguishing_suffixes(ids)
            out.update((i, f"{title}{SEPARATOR}{ends[i]}") for i in ids)
    return out
