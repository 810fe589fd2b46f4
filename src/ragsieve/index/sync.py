"""Which indexed documents a path names: the files of a folder, a glob, one file, one id.

``index FOLDER`` keeps the index in step with the folder (documents of files that have left it
are removed), and ``rm`` takes folders and globs; both ask here which documents a path covers,
and both remove only what the user named:

* A document's file is its id when the id is an absolute path (``.txt``/``.md``/...), else the
  file part of its source (``/abs/corpus.jsonl:12`` for a JSONL record). A file a folder walk
  found through a symlink keeps the link's path in its source: the folder holds the document
  only while it holds the link.
* A file is gone only when the system says so (ENOENT, ENOTDIR); a file or folder that cannot
  be read (permission denied, a symlink loop) may still be there, and keeps its documents.
* ``rm`` globs follow the shell: ``*``, ``?`` and ``[...]`` stay inside one path component,
  ``**`` crosses folders, and a name that is an indexed file (or a real one) is taken literally
  before it is read as a glob (``'a[1].md'``). An empty name is refused.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ragsieve.errors import InputError

_GLOB_CHARS = set("*?[")


def _jsonl_file(doc_id: str, source: str) -> str | None:
    """``PATH`` of a JSONL record's source ``PATH:LINE`` (absolute), else None."""
    path, sep, line = source.rpartition(":")
    if not (sep and line.isdigit() and os.path.isabs(path)):
        return None
    # A record's id is ``PATH#id`` (or a bare id, from before ids were namespaced).
    return path if not os.path.isabs(doc_id) or doc_id.startswith(path + "#") else None


def document_file(doc: Mapping[str, Any]) -> str | None:
    """The absolute path of the file a document was read from, or None when unknown."""
    doc_id, source = str(doc.get("doc_id", "")), str(doc.get("source") or "")
    record = _jsonl_file(doc_id, source)
    if record is not None:
        return record
    if os.path.isabs(doc_id):
        return doc_id
    if source and os.path.isabs(source):
        return source
    return None


def found_at(doc: Mapping[str, Any]) -> str | None:
    """Where a folder walk found the document's file when that is another path (a symlink, or
    the file reached through a symlinked folder): its absolute source. None otherwise."""
    doc_id, source = str(doc.get("doc_id", "")), str(doc.get("source") or "")
    if not source or not os.path.isabs(source) or _jsonl_file(doc_id, source) is not None:
        return None
    at = os.path.normpath(source)
    return None if at == document_file(doc) else at


def _paths(doc: Mapping[str, Any]) -> list[str]:
    """The paths that name a document: its file, and where a walk found it."""
    return [p for p in (document_file(doc), found_at(doc)) if p is not None]


def _abs(path: str | Path) -> str:
    """``path`` absolute and normalised (``..`` folded), symlinks not followed."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(str(path))))


def _real(path: str | Path) -> str:
    """``path`` with its symlinks followed as far as they go; never raises (a symlink loop
    stays as it is, where ``Path.resolve`` raises ``RuntimeError``)."""
    try:
        return os.path.realpath(os.path.expanduser(str(path)))
    except (OSError, ValueError):
        return _abs(path)


def _under(file: str, folder: str) -> bool:
    return file == folder or file.startswith(folder.rstrip(os.sep) + os.sep)


def _gone(path: str) -> bool:
    """Whether ``path`` is certainly not there. Permission denied, a loop or any other error
    means "cannot tell", and a document whose file cannot be told gone is kept."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):
        return False
    return False


def stale_documents(
    documents: Iterable[Mapping[str, Any]],
    folders: Iterable[Path],
    read_ids: set[str],
    skipped: Iterable[str] = (),
) -> list[str]:
    """Ids of the documents under ``folders`` that this read did not produce and whose file has
    left the folder (or, in a JSONL file read again, whose record has; or whose symlink now
    points at another file). A file still there but not read this time (skipped as unreadable,
    hidden, indexed by name earlier), a file or folder the read skipped, and a file that cannot
    be told gone (its folder unreadable) keep their documents."""
    docs = list(documents)
    roots = {form for f in folders for form in (_abs(f), _real(f))}
    kept = {form for s in skipped for form in (_abs(s), _real(s))}
    read = [d for d in docs if d["doc_id"] in read_ids]
    read_files = {document_file(d) for d in read}
    read_at = {found_at(d) for d in read} - {None}
    out: list[str] = []
    for d in docs:
        if d["doc_id"] in read_ids:
            continue
        paths = _paths(d)
        mine = [p for p in paths if any(_under(p, r) for r in roots)]
        if not mine or any(_under(p, k) for p in paths for k in kept):  # not ours, or unread
            continue
        file, at = paths[0], found_at(d)
        # The file itself when it lies in the folder, else the link the folder held it by.
        gone = _gone(file) if file in mine else at is not None and _gone(at)
        if gone or file in read_files or at in read_at:
            out.append(str(d["doc_id"]))
    return out


def outside_documents(
    documents: Iterable[Mapping[str, Any]], folders: Iterable[Path], read_ids: set[str]
) -> list[tuple[str, str, str, str]]:
    """``(doc_id, link, file, root)`` of each document that a walk of ``folders`` found through a
    symlink (its source lies in the folder) while its file resolves outside it: a walk that
    does not follow such links drops them. A document this read produced (its file lies in
    another folder given) stays."""
    forms = [(_abs(f), _real(f)) for f in folders]
    out: list[tuple[str, str, str, str]] = []
    for d in documents:
        file, at = document_file(d), found_at(d)
        if file is None or at is None or d["doc_id"] in read_ids:
            continue
        for given, real in forms:
            if (_under(at, given) or _under(at, real)) and not (
                _under(file, real) or _under(_real(file), real)
            ):
                out.append((str(d["doc_id"]), at, file, real))
                break
    return out


def outside_roots(
    documents: Iterable[Mapping[str, Any]], roots: Mapping[str, bool], linked_only: bool = False
) -> list[str]:
    """Ids of the documents whose file resolves outside every root the index was read from
    (``roots``: real path -> whether symlinks out of it were followed). A document found
    through a link in a root that followed its links belongs to that root; a document with no
    file (added as a :class:`~ragsieve.types.Document`) belongs to none and is never hidden.
    ``linked_only``: only documents found through a link (the roots may be incomplete)."""
    real_roots = list(roots)
    followed = [r for r, follow in roots.items() if follow]
    out: list[str] = []
    for d in documents:
        file = document_file(d)
        if file is None or any(_under(file, r) for r in real_roots):
            continue
        at = found_at(d)
        if linked_only and at is None:
            continue
        if at is not None and followed:
            where = os.path.join(_real(os.path.dirname(at)), os.path.basename(at))
            if any(_under(where, r) for r in followed):
                continue
        out.append(str(d["doc_id"]))
    return out


def check_name(arg: str) -> None:
    """Refuse a name that names nothing (``rm ""``, a script's empty variable): read as a path
    it would be the working directory, and every document under it."""
    if not arg.strip():
        raise InputError(
            f"{'an empty' if not arg else 'a blank'} name ({arg!r}) names no document; give "
            "a file, folder, quoted glob or document id (nothing was removed)"
        )


def _id_forms(arg: str) -> set[str]:
    """``arg`` as a document id: as given, and a JSONL record id with its file made absolute
    (``notes.jsonl#7`` -> ``/abs/notes.jsonl#7``)."""
    forms = {arg}
    path, sep, rest = arg.partition("#")
    if sep and path.strip():
        forms |= {f"{_abs(path)}#{rest}", f"{_real(path)}#{rest}"}
    return forms


def _split(path: str) -> list[str]:
    return [p for p in path.split(os.sep) if p]


def _component(name: str, pat: str) -> bool:
    """One path component against one glob component, as the shell: a leading ``.`` is
    matched only by a pattern that starts with ``.``."""
    if name.startswith(".") and not pat.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, pat)


def _glob(parts: list[str], pats: list[str]) -> bool:
    """Whether the components ``parts`` match the glob components ``pats`` (``**`` = any
    number of non-hidden folders, none included). Iterative and quadratic at worst, whatever
    the pattern (``**/**/**/...`` or thousands of components)."""
    pats = [p for i, p in enumerate(pats) if not (p == "**" and i and pats[i - 1] == "**")]
    if pats and pats[-1] == "**":  # ``notes/**``: the files under notes, not notes itself
        pats = [*pats, "*"]
    if sum(p != "**" for p in pats) > len(parts):
        return False
    n, m = len(parts), len(pats)
    # ok[j]: pats[j:] matches parts[i:], for the row i being filled (from the end).
    ok = [False] * m + [True]
    for j in range(m - 1, -1, -1):  # row i = n: only trailing ``**`` match nothing
        ok[j] = pats[j] == "**" and ok[j + 1]
    for i in range(n - 1, -1, -1):
        below = ok  # row i + 1
        ok = [False] * m + [False]
        for j in range(m - 1, -1, -1):
            if pats[j] == "**":
                ok[j] = ok[j + 1] or (not parts[i].startswith(".") and below[j])
            else:
                ok[j] = _component(parts[i], pats[j]) and below[j + 1]
    return ok[0]


def _patterns(arg: str) -> list[list[str]]:
    """The glob ``arg`` as absolute component lists: as written, and with the folders before
    its first wildcard resolved (document files are stored resolved)."""
    pats = _split(_abs(arg))
    first = next((i for i, p in enumerate(pats) if _GLOB_CHARS & set(p)), len(pats))
    prefix = _real(os.sep + os.sep.join(pats[:first]))
    out = [pats, _split(prefix) + pats[first:]]
    return [p for i, p in enumerate(out) if p not in out[:i]]


def matching_documents(documents: Iterable[Mapping[str, Any]], arg: str) -> list[str]:
    """Ids of the documents that ``arg`` names: an id, a file (relative or absolute, present or
    not), a folder (every document under it) or a glob over files (``'notes/*.md'``; end it
    with ``/`` to match folders, and every document under them)."""
    check_name(arg)
    docs = list(documents)
    forms = _id_forms(arg)
    exact = [str(d["doc_id"]) for d in docs if str(d["doc_id"]) in forms]
    if exact:
        return exact
    full, real = _abs(arg), _real(arg)
    literal = [
        str(d["doc_id"]) for d in docs if any(_under(p, full) or _under(p, real) for p in _paths(d))
    ]
    if literal or not (_GLOB_CHARS & set(arg)) or os.path.lexists(full):
        return literal
    folders = arg.endswith(("/", os.sep))
    out: list[str] = []
    for d in docs:
        for p in _paths(d):
            parts = _split(p)
            # A folder glob matches a proper ancestor of the file; a file glob the file.
            cuts = range(1, len(parts)) if folders else [len(parts)]
            if any(_glob(parts[:n], pats) for pats in _patterns(arg) for n in cuts):
                out.append(str(d["doc_id"]))
                break
    return out
