"""Which indexed documents a path names: the files of a folder, a glob, one file, one id.

``index FOLDER`` keeps the index in step with the folder (documents of files that have left it
are removed), and ``rm`` takes folders and globs; both ask here which documents a path covers.
A document's file is its id when the id is an absolute path (``.txt``/``.md``/...), else the
file part of its source (``/abs/corpus.jsonl:12`` for a JSONL record).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

_GLOB_CHARS = set("*?[")


def document_file(doc: Mapping[str, Any]) -> str | None:
    """The absolute path of the file a document was read from, or None when unknown."""
    doc_id, source = str(doc.get("doc_id", "")), str(doc.get("source") or "")
    if os.path.isabs(doc_id):
        return doc_id
    if source:
        path, sep, line = source.rpartition(":")
        if sep and line.isdigit() and os.path.isabs(path):
            return path
        if os.path.isabs(source):
            return source
    return None


def _under(file: str, folder: str) -> bool:
    return file == folder or file.startswith(folder.rstrip(os.sep) + os.sep)


def stale_documents(
    documents: Iterable[Mapping[str, Any]],
    folders: Iterable[Path],
    read_ids: set[str],
    skipped: Iterable[str] = (),
) -> list[str]:
    """Ids of the documents under ``folders`` that this read did not produce and whose file has
    left the folder (or, in a JSONL file read again, whose record has). A file still there but
    not read this time (skipped as unreadable, hidden, indexed by name earlier) keeps its
    documents."""
    docs = list(documents)
    roots = [str(Path(f).resolve()) for f in folders]
    kept_files = {str(Path(s).resolve()) for s in skipped}
    read_files = {document_file(d) for d in docs if d["doc_id"] in read_ids}
    out: list[str] = []
    for d in docs:
        file = document_file(d)
        if file is None or d["doc_id"] in read_ids or file in kept_files:
            continue
        if not any(_under(file, r) for r in roots):
            continue
        if not os.path.exists(file) or file in read_files:
            out.append(str(d["doc_id"]))
    return out


def matching_documents(documents: Iterable[Mapping[str, Any]], arg: str) -> list[str]:
    """Ids of the documents that ``arg`` names: an id, a file (relative or absolute, present or
    not), a folder (every document under it) or a glob over files (``'notes/*.md'``)."""
    docs = list(documents)
    ids = [str(d["doc_id"]) for d in docs]
    if arg in ids:
        return [arg]
    full = str(Path(arg).expanduser().absolute())
    resolved = str(Path(arg).expanduser().resolve())
    if _GLOB_CHARS & set(arg):
        return [
            str(d["doc_id"])
            for d in docs
            if (f := document_file(d)) is not None
            and (fnmatch.fnmatchcase(f, full) or fnmatch.fnmatchcase(f, resolved))
        ]
    return [
        str(d["doc_id"])
        for d in docs
        if (f := document_file(d)) is not None and (_under(f, resolved) or _under(f, full))
    ]
