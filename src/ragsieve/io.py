"""Reading user files into :class:`~ragsieve.types.Document` objects.

Supported: ``.txt``, ``.md`` (and ``.markdown``, ``.rst``), ``.jsonl`` with one
``{"id", "title", "text"}`` object per line, and ``.pdf``, ``.html``/``.htm`` and ``.docx``
(read by :mod:`ragsieve.formats`, pages and headings kept in the text). Folders are walked
recursively (hidden entries skipped). A symlink whose target lies outside the folder it was found
in (the folder given, or for a file named explicitly the folder that holds it) is not followed
unless ``follow_symlinks`` is set: a document is data from inside the folder, never a file that
someone linked into it. A file named explicitly that is empty, binary or not UTF-8
(or a PDF without a text layer) is an error; inside a folder such files are skipped with a
warning, because one stray file must not stop a corpus from indexing.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragsieve.errors import InputError
from ragsieve.formats import (
    RICH_SUFFIXES,
    collapse_space,
    markdown_title,
    printable,
    read_rich,
    rst_title,
    short_title,
)
from ragsieve.jsonl import read_jsonl
from ragsieve.types import Document

log = logging.getLogger(__name__)

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".rst", ".text"}
JSONL_SUFFIXES = {".jsonl"}
SUPPORTED = TEXT_SUFFIXES | JSONL_SUFFIXES | RICH_SUFFIXES


#: The progress stage of :func:`load_paths`.
READ_STAGE = "read files"


@dataclass
class LoadReport:
    """What ``load_paths`` read and what it skipped (with the reason), for the CLI to print."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: What the paths resolve to (a folder's or a named file's real path): the index records
    #: them, so that a reader can refuse a document from outside them.
    roots: list[str] = field(default_factory=list)


@dataclass
class Listing:
    """What :func:`walk_paths` found: the files to read (with whether each was named), the
    links it did not follow (with the reason), and the roots the paths resolve to."""

    files: list[tuple[Path, bool]] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)


def _doc_id(path: Path) -> str:
    # Absolute paths keep ids stable whatever the working directory of a later re-index.
    # ``realpath``, not ``Path.resolve``: a symlink loop must not raise RuntimeError.
    return printable(os.path.realpath(path))


def _collapse_space(text: str) -> str:
    """Whitespace runs over 200 characters cut, as
    every reader does (:func:`ragsieve.formats.collapse_space`)."""
    return collapse_space(text)


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
    """A text file's title: a Markdown file's front matter title or first heading, an RST
    file's first section title, as plain text (no link, image or emphasis syntax); else the
    file's name without its suffix."""
    suffix = path.suffix.lower()
    title = ""
    if suffix in {".md", ".markdown"}:
        title = markdown_title(text)
    elif suffix == ".rst":
        title = rst_title(text)
    return title or short_title(path.stem)


def _read_jsonl(path: Path) -> list[Document]:
    docs: list[Document] = []
    seen: set[str] = set()
    for n, obj in read_jsonl(path, expect="an object with id, title, text"):
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
        title = short_title(title)
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
        title = rich.title or short_title(path.stem)  # formats chose it (never a PDF's line)
        title, source = printable(title), printable(str(path))
        return [Document(id=_doc_id(path), text=rich.text, title=title, source=source)]
    if suffix not in TEXT_SUFFIXES:
        raise InputError(
            f"{path}: unsupported file type {suffix or '(none)'}; "
            f"use one of {', '.join(sorted(SUPPORTED))}"
        )
    text = _read_text(path)
    title, source = printable(short_title(_title_of(path, text))), printable(str(path))
    return [Document(id=_doc_id(path), text=text, title=title, source=source)]


#: Folders nested deeper than this under a given folder are not entered (reported skipped).
MAX_FOLDER_DEPTH = 64


def inside(path: str, root: str) -> bool:
    """Whether the real path ``path`` is ``root`` or lies under it (both resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def link_refusal(link: Path | str, target: str, root: str) -> str:
    """The one-line reason a link out of ``root`` is not followed (``index`` warns with it)."""
    return printable(
        f"a symlink to {target}, outside {root}: not followed (--follow-symlinks follows it)"
    )


def _walk(
    folder: Path, follow_symlinks: bool = False, refused: list[tuple[str, str]] | None = None
) -> Iterator[Path]:
    """Every non-hidden entry under ``folder`` that is not a folder, sorted; iterative (no
    recursion limit). A folder that cannot be listed or lies deeper than
    :data:`MAX_FOLDER_DEPTH` is yielded itself, for :func:`read_source` to report.

    A symlink whose target resolves outside ``folder`` is not followed: it goes to ``refused``
    with its reason (:func:`link_refusal`), unless ``follow_symlinks``. A symlink to a file is
    yielded unless the walk holds that file already (itself, or an earlier link to it): one
    file, one document, no duplicate id. A symlinked folder inside ``folder`` is not entered
    (its files are walked where they are); with ``follow_symlinks`` one outside is, once (a
    loop, or a link to a folder above, is entered at most once). A symlink loop is yielded,
    for :func:`read_source` to report as unreadable."""
    root = os.path.realpath(folder)
    found: list[Path] = []
    links: list[Path] = []
    real_files: set[str] = set()
    seen_dirs: set[str] = {root}
    # (folder, depth, reached through a followed link)
    stack: list[tuple[Path, int, bool]] = [(folder, 0, False)]
    while stack:
        here, depth, linked = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            found.append(here)
            continue
        if entries and not os.access(here, os.X_OK):  # names listed, files out of reach
            found.append(here)
            continue
        real_here = os.path.realpath(here)
        for e in entries:
            if e.name.startswith("."):
                continue
            p = Path(e.path)
            if e.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_FOLDER_DEPTH:
                    found.append(p)
                elif not linked:
                    stack.append((p, depth + 1, False))
                elif (real := os.path.realpath(p)) not in seen_dirs:
                    seen_dirs.add(real)
                    stack.append((p, depth + 1, True))
            elif e.is_symlink():
                target = os.path.realpath(p)
                out = not inside(target, root)
                if out and not follow_symlinks:
                    if refused is not None:
                        refused.append((printable(str(p)), link_refusal(p, target, root)))
                    continue
                if p.is_dir():  # a loop or a dangling link is not a folder either
                    if out and target not in seen_dirs and depth + 1 <= MAX_FOLDER_DEPTH:
                        seen_dirs.add(target)
                        stack.append((p, depth + 1, True))
                    continue
                links.append(p)
            elif linked:  # a file reached through a followed folder link
                links.append(p)
            else:
                found.append(p)  # pipes and devices too: read_source reports them as skipped
                real_files.add(os.path.join(real_here, e.name))
    for link in sorted(links):
        target = os.path.realpath(link)
        if target not in real_files:
            real_files.add(target)
            found.append(link)
    yield from sorted(found)


def _named_link_refusal(path: Path) -> str | None:
    """Why a file named explicitly is not read: it is a symlink out of the folder that holds
    it (a shell's ``folder/*`` names every link planted there). None when it may be read."""
    if not path.is_symlink():
        return None
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    target = os.path.realpath(path)
    return None if inside(target, folder) else link_refusal(path, target, folder)


def walk_paths(paths: Iterable[str | Path], follow_symlinks: bool = False) -> Listing:
    """Every file that ``paths`` names, in reading order, with whether it was named
    explicitly; the links not followed (``follow_symlinks`` follows them), and the roots.

    Folders are walked here (hidden entries skipped) from their absolute path, so that every
    document's source says where the walk found it (a symlink's own path: the folder sync
    removes its document when the link leaves); reading is left to :func:`read_source`, so
    that a distributed engine can list on the driver and read on its workers. A file named
    explicitly that is a symlink out of its folder is an error unless ``follow_symlinks``.
    """
    given = [Path(p) for p in paths]
    if not given:
        raise InputError("no input paths given")
    out = Listing()
    for path in given:
        try:
            mode = path.stat().st_mode
        except (FileNotFoundError, NotADirectoryError) as e:
            raise InputError(f"no such file or directory: {path}") from e
        except OSError as e:  # permission denied on a parent folder, a symlink loop
            raise InputError(f"cannot read {path}: {e.strerror or e}") from e
        if stat.S_ISDIR(mode):
            folder = Path(os.path.abspath(path))
            out.files.extend((f, False) for f in _walk(folder, follow_symlinks, out.refused))
        else:
            why = None if follow_symlinks else _named_link_refusal(path)
            if why is not None:
                raise InputError(f"{printable(str(path))}: {why}")
            out.files.append((path, True))
        root = os.path.realpath(path)
        if root not in out.roots:
            out.roots.append(root)
    return out


def list_files(
    paths: Iterable[str | Path], follow_symlinks: bool = False
) -> list[tuple[Path, bool]]:
    """The files of :func:`walk_paths` (the links it refused are left out)."""
    return walk_paths(paths, follow_symlinks).files


def read_source(path: Path, explicit: bool) -> tuple[list[Document], str | None]:
    """The documents of one listed file, or ``([], reason)`` for a file a folder scan skips.

    An explicitly named file that cannot be read raises :class:`InputError` instead. Any
    failure of a reader (a library's own exception, a panic in native code, a memory error on
    a hostile file) is such a one-line reason: one bad file never fails a folder.
    """
    if not explicit and path.is_dir():  # what _walk could not enter
        if not os.access(path, os.R_OK | os.X_OK):
            return [], "cannot read this folder (permission denied)"
        return [], f"folder nested more than {MAX_FOLDER_DEPTH} levels deep: not read"
    if not explicit and path.is_symlink() and not path.exists():
        try:
            os.stat(path)
        except OSError as e:
            if e.errno == errno.ELOOP:
                return [], "a symlink loop: not read"
        return [], printable(f"a dangling symlink (to {os.path.realpath(path)}): not read")
    if not explicit and path.suffix.lower() not in SUPPORTED:
        return [], "unsupported file type"
    try:
        return read_file(path), None
    except InputError as e:
        if explicit:
            raise
        log.info("skipping %s", e)  # returned in ``skipped``: the caller reports it
        return [], _reason(str(e), path)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as e:  # pyo3's PanicException (a native panic) is a BaseException
        why = " ".join(str(e)[:1000].split())[:200] or "no message"
        reason = printable(f"{path}: cannot read this file ({type(e).__name__}: {why})")
        if explicit:
            raise InputError(reason) from e
        log.info("skipping %s", reason)
        return [], _reason(reason, path)


def _reason(message: str, path: Path) -> str:
    """A reader's one-line error as a skip reason: without the file's path, which the warning
    names already (``skipped PATH: looks binary``, not ``skipped PATH: PATH looks binary``)."""
    message, name = printable(message), printable(str(path))
    if message.startswith(name + ":"):
        rest = message[len(name) + 1 :].strip()
        line, sep, after = rest.partition(": ")
        return f"line {line}: {after}" if sep and line.isdigit() else rest
    if message.startswith(name + " "):
        return message[len(name) + 1 :]
    return message.replace(f" {name}:", ":").replace(f" {name}", "") or message


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


def load_paths(
    paths: Iterable[str | Path],
    progress: Callable[[str, int, int], None] | None = None,
    *,
    follow_symlinks: bool = False,
) -> LoadReport:
    """Load every path (files or folders).

    Explicit files must be readable; within folders, unsupported, binary, empty or non-UTF-8
    files are skipped and reported, and so are symlinks out of the folder (unless
    ``follow_symlinks``). Raises :class:`InputError` if nothing usable remains.
    ``progress(stage, done, total)`` hears ``read files`` before each file and at the end.
    """
    given = [Path(p) for p in paths]
    listing = walk_paths(given, follow_symlinks)
    report = LoadReport(skipped=list(listing.refused), roots=listing.roots)
    files = listing.files
    for i, (path, explicit) in enumerate(files):
        if progress:
            progress(READ_STAGE, i, len(files))
        docs, skipped = read_source(path, explicit)
        report.documents.extend(docs)
        if skipped is not None:
            report.skipped.append((printable(str(path)), skipped))
    if progress:
        progress(READ_STAGE, len(files), len(files))
    check_documents([(d.id, d.source) for d in report.documents], given)
    return report
