"""How a listing of an index names its documents: :func:`~ragsieve.titles.display_names`, each
title told apart from every document of the index that shares it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ragsieve.index.tables import _sql_str
from ragsieve.titles import display_names

if TYPE_CHECKING:
    from ragsieve.index import Index


def names_in_index(index: Index, docs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """:func:`display_names` of the ``(doc_id, title)`` pairs a listing shows, each title told
    apart from every document of ``index`` that shares it (not only from those shown: a hit
    named "Overview" is ambiguous when the index holds two Overviews, even if one is shown).
    Reads only the ids of the documents with those titles."""
    shown = dict(docs)
    titles = sorted({t for t in shown.values() if t})
    pairs = list(shown.items())
    if titles:
        where = f"title IN ({', '.join(_sql_str(t) for t in titles)})"
        rows = index.documents_table.to_table(columns=["doc_id", "title"], filter=where)
        pairs += zip(
            rows.column("doc_id").to_pylist(), rows.column("title").to_pylist(), strict=True
        )
    names = display_names(dict(pairs).items())
    return {doc_id: names[doc_id] for doc_id in shown}
