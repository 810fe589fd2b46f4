"""Reading user files into :class:`~ragsieve.types.Document` objects.

Supported: ``.txt``, ``.md`` (and ``.markdown``, ``.rst``), ``.jsonl`` with one
``{"id", "title", "text"}`` object per line, and ``.pdf``, ``.html``/``.htm`` and ``.docx``
(read by :mod:`ragsieve.formats`, pages and headings kept in the text). Folders are walked
recursively (hidden entries skipped). A file named explicitly that is empty, binary or not UTF-8
(or a PDF without a text layer) is an error; inside a folder such files are skipped with a
warning, because one stray file must not stop a corpus from indexing.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragsieve.errors import InputError
from ragsieve.formats import RICH_SUFFIXES, read_rich
from ragsieve.types import Document

log = logging.getLogger(__name__)

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".rst", ".text"}
JSONL_SUFFIXES = {".jsonl"}
SUPPORTED = TEXT_SUFFIXES | JSONL_SUFFIXES | RICH_SUFFIXES


@dataclass
class LoadReport:
    """What ``load_paths`` read and what it skipped (with the reason), for the CLI to print."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def printable(text: str) -> str:
    """``text`` with the bytes of a non-UTF-8 file name (Python's surrogate escapes) written
    as ``\\xff``: an id, title or message that can be stored and printed."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _doc_id(path: Path) -> str:
    # Absolute paths keep ids stable whatever the working directory of a later re-index.
    return printable(str(path.resolve()))


#: Whitespace runs longer than this are cut to it when a file is read: a million spaces
#: overflow the BPE tokenizer's stack (tiktoken panics), and no text needs them.
MAX_WHITESPACE_RUN = 200
_LONG_SPACE = re.compile(rf"\s{{{MAX_WHITESPACE_RUN + 1},}}")


def _collapse_space(text: str) -> str:
    """Shorten whitespace runs over :data:`MAX_WHITESPACE_RUN` characters (paragraph breaks
    kept as two newlines, other runs as their first characters)."""
    if len(text) <= MAX_WHITESPACE_RUN:
        return text

    def cut(m: re.Match[str]) -> str:
        run = m.group(0)
        return "\n\n" if run.count("\n") >= 2 else run[:MAX_WHITESPACE_RUN]

    return _LONG_SPACE.sub(cut, text)


def jsonl_doc_id(path: Path, record_id: str) -> str:
    """The document id of a JSONL record: ``<absolute path>#<id>`` (``#<line>`` without one).

    Indexes written before ids were namespaced hold the bare record id; the store renames
    those on the next write of the same file (:meth:`ragsieve.index.Index.add`).
    """
    return f"{_doc_id(path)}#{record_id}"


def _check_regular(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e
    if not stat.S_ISREG(mode):
        # A FIFO would block forever, a device would never end: only regular files are read.
        raise InputError(f"{path} is not a regular file (a pipe, device or socket)")


def _read_text(path: Path) -> str:
    _check_regular(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e
    if b"\x00" in raw:  # anywhere, not only in the first 8 KB: Lance and Arrow keep text
        raise InputError(f"{path} looks binary (NUL bytes); only UTF-8 text is indexed")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"{path} is not valid UTF-8 (byte {e.start}); convert it first") from e
    if not text.strip():
        raise InputError(f"{path} is empty")
    return _collapse_space(text.replace("\r\n", "\n").replace("\r", "\n"))


def _title_of(path: Path, text: str) -> str:
    if path.suffix.lower() in {".md", ".markdown"}:
        for line in text.splitlines():
            s = line.strip()
            if s.startswith("#"):
                return s.lstrip("#").strip()
            if s:
                break
    return path.stem


def _read_jsonl(path: Path) -> list[Document]:
    text = _read_text(path)
    docs: list[Document] = []
    seen: set[str] = set()
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{n}: invalid JSON ({e.msg})") from e
        except RecursionError as e:
            raise InputError(f"{path}:{n}: JSON nested too deeply") from e
        except ValueError as e:  # a number past Python's digit limit
            raise InputError(f"{path}:{n}: invalid JSON ({str(e).splitlines()[0]})") from e
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{n}: expected an object with id, title, text")
        body = obj.get("text")
        if not isinstance(body, str) or not body.strip():
            raise InputError(f"{path}:{n}: missing or empty 'text'")
        rid = obj.get("id", f"{n}")
        if not isinstance(rid, str | int):
            raise InputError(f"{path}:{n}: 'id' must be a string or integer")
        # Namespaced by the file, so that two files (or a file and a record) never share an
        # id and overwrite each other: ``/abs/a.jsonl#7`` (the record's id, else its line).
        doc_id = jsonl_doc_id(path, str(rid))
        if doc_id in seen:
            raise InputError(f"{path}:{n}: duplicate id {str(rid)!r}")
        seen.add(doc_id)
        title = obj.get("title") or ""
        if not isinstance(title, str):
            raise InputError(f"{path}:{n}: 'title' must be a string")
        for key, value in (("id", doc_id), ("title", title), ("text", body)):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as e:
                raise InputError(f"{path}:{n}: '{key}' holds a lone surrogate (\\u escape)") from e
        body = _collapse_space(body)
        docs.append(
            Document(
                id=doc_id,
                text=body.replace("\r\n", "\n"),
                title=title,
                source=f"{_doc_id(path)}:{n}",
            )
        )
    if not docs:
        raise InputError(f"{path} has no records")
    return docs


def read_file(path: Path) -> list[Document]:
    """Documents from one file (a .jsonl file yields one per line)."""
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return _read_jsonl(path)
    if suffix in RICH_SUFFIXES:
        _check_regular(path)
        rich = read_rich(path)
        title = rich.title or _title_of(path.with_suffix(".md"), rich.text)
        return [Document(id=_doc_id(path), text=rich.text, title=title, source=str(path))]
    if suffix not in TEXT_SUFFIXES:
        raise InputError(
            f"{path}: unsupported file type {suffix or '(none)'}; "
            f"use one of {', '.join(sorted(SUPPORTED))}"
        )
    text = _read_text(path)
    title, source = printable(_title_of(path, text)), printable(str(path))
    return [Document(id=_doc_id(path), text=text, title=title, source=source)]


#: Folders nested deeper than this under a given folder are not entered (reported skipped).
MAX_FOLDER_DEPTH = 64


def _walk(folder: Path) -> Iterator[Path]:
    """Every non-hidden entry under ``folder`` that is not a folder, sorted; iterative (no
    recursion limit), symlinked folders not followed. A folder that cannot be listed or lies
    deeper than :data:`MAX_FOLDER_DEPTH` is yielded itself, for :func:`read_source` to report."""
    found: list[Path] = []
    stack: list[tuple[Path, int]] = [(folder, 0)]
    while stack:
        here, depth = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            found.append(here)
            continue
        for e in entries:
            if e.name.startswith("."):
                continue
            p = Path(e.path)
            if e.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_FOLDER_DEPTH:
                    found.append(p)
                else:
                    stack.append((p, depth + 1))
            elif not (e.is_symlink() and p.is_dir()):
                found.append(p)  # pipes and devices too: read_source reports them as skipped
    yield from sorted(found)


def list_files(paths: Iterable[str | Path]) -> list[tuple[Path, bool]]:
    """Every file that ``paths`` names, in reading order, with whether it was named explicitly.

    Folders are walked here (hidden entries skipped); reading is left to :func:`read_source`, so
    that a distributed engine can list on the driver and read on its workers.
    """
    given = [Path(p) for p in paths]
    if not given:
        raise InputError("no input paths given")
    files: list[tuple[Path, bool]] = []
    for path in given:
        if not path.exists():
            raise InputError(f"no such file or directory: {path}")
        if path.is_dir():
            files.extend((f, False) for f in _walk(path))
        else:
            files.append((path, True))
    return files


def read_source(path: Path, explicit: bool) -> tuple[list[Document], str | None]:
    """The documents of one listed file, or ``([], reason)`` for a file a folder scan skips.

    An explicitly named file that cannot be read raises :class:`InputError` instead.
    """
    if not explicit and path.is_dir():  # what _walk could not enter
        if not os.access(path, os.R_OK | os.X_OK):
            return [], "cannot read this folder (permission denied)"
        return [], f"folder nested more than {MAX_FOLDER_DEPTH} levels deep: not read"
    if not explicit and path.suffix.lower() not in SUPPORTED:
        return [], "unsupported file type"
    try:
        return read_file(path), None
    except InputError as e:
        if explicit:
            raise
        log.info("skipping %s", e)  # returned in ``skipped``: the caller reports it
        return [], str(e)


def check_documents(ids_sources: Sequence[tuple[str, str]], paths: Iterable[str | Path]) -> None:
    """Refuse an empty result and duplicate document ids (they would overwrite each other).

    Takes ``(id, source)`` pairs rather than documents so that a distributed reader can check
    without shipping the texts back.
    """
    if not ids_sources:
        raise InputError("no readable documents found in " + ", ".join(str(p) for p in paths))
    ids: dict[str, str] = {}
    for doc_id, source in ids_sources:
        if doc_id in ids:
            raise InputError(f"duplicate document id {doc_id!r} in {source} and {ids[doc_id]}")
        ids[doc_id] = source


def load_paths(paths: Iterable[str | Path]) -> LoadReport:
    """Load every path (files or folders).

    Explicit files must be readable; within folders, unsupported, binary, empty or non-UTF-8
    files are skipped and reported. Raises :class:`InputError` if nothing usable remains.
    """
    report = LoadReport()
    given = [Path(p) for p in paths]
    for path, explicit in list_files(given):
        docs, skipped = read_source(path, explicit)
        report.documents.extend(docs)
        if skipped is not None:
            report.skipped.append((printable(str(path)), skipped))
    check_documents([(d.id, d.source) for d in report.documents], given)
    return report
