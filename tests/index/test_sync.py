"""Which indexed documents a folder, a glob or a file names (``index FOLDER``'s sync, ``rm``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsieve.errors import InputError
from ragsieve.index.sync import (
    document_file,
    matching_documents,
    outside_documents,
    outside_roots,
    stale_documents,
)


def _doc(doc_id: str, source: str = "") -> dict[str, str]:
    return {"doc_id": doc_id, "source": source or doc_id}


def test_only_files_that_left_the_folder_are_stale(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    kept, hidden, records = folder / "a.md", folder / ".h.md", folder / "r.jsonl"
    for f in (kept, hidden, records):
        f.write_text("x")
    gone, elsewhere = folder / "gone.md", tmp_path / "other" / "gone.md"
    docs = [
        _doc(str(kept)),
        _doc(str(gone)),  # deleted: stale
        _doc(str(hidden)),  # indexed by name once; the walk skips it, but it is still there
        _doc(str(elsewhere)),  # not under the folder
        _doc("q1", f"{records}:1"),  # a JSONL record read again
        _doc("q2", f"{records}:2"),  # a record no longer in its file: stale
    ]
    read = {str(kept), "q1"}
    assert stale_documents(docs, [folder], read) == [str(gone), "q2"]
    assert stale_documents(docs, [folder], read, skipped=[str(records)]) == [str(gone)]
    assert document_file(_doc("q3", "relative.jsonl:3")) is None


def test_rm_names_files_folders_globs_and_ids(tmp_path: Path) -> None:
    a, b, c = (str(tmp_path / "n" / x) for x in ("a.md", "sub/b.md", "sub/c.txt"))
    docs = [_doc(a), _doc(b), _doc(c), _doc("rec-7", "/data/x.jsonl:7")]
    assert matching_documents(docs, a) == [a]
    assert matching_documents(docs, str(tmp_path / "n" / "sub")) == [b, c]
    assert matching_documents(docs, str(tmp_path / "n" / "sub" / "*.md")) == [b]
    assert matching_documents(docs, "rec-7") == ["rec-7"]
    assert matching_documents(docs, "/data/x.jsonl") == ["rec-7"]
    assert matching_documents(docs, str(tmp_path / "n" / "su")) == []  # not a prefix match


def _files(root: Path, *rels: str) -> list[str]:
    out = []
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
        out.append(str(p))
    return out


def test_an_empty_or_blank_name_is_refused_not_read_as_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    docs = [_doc(f) for f in _files(tmp_path, "a.md", "sub/b.md")]
    for name in ("", "  ", "\t\n"):
        with pytest.raises(InputError, match="names no document"):
            matching_documents(docs, name)
    assert matching_documents(docs, ".") == [d["doc_id"] for d in docs]  # named: the folder


def test_globs_follow_the_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    a, b, c, h, deep = _files(tmp_path, "d/a.md", "d/sub/b.md", "d/c.txt", "d/.h.md", "d/s/t/e.md")
    docs = [_doc(f) for f in (a, b, c, h, deep)]
    assert matching_documents(docs, "d/*.md") == [a]  # ``*`` stays in d/, skips the hidden
    assert matching_documents(docs, "d/.*.md") == [h]
    assert matching_documents(docs, "d/?.txt") == [c]
    assert matching_documents(docs, "d/**/*.md") == [a, b, deep]  # ``**``: zero or more folders
    assert matching_documents(docs, "d/**") == [a, b, c, deep]
    assert matching_documents(docs, "d/*/") == [b, deep]  # ends with /: folders, all under them
    assert matching_documents(docs, "d/*/*.md") == [b]
    assert matching_documents(docs, str(tmp_path / "d" / "[ab].md")) == [a]
    assert matching_documents(docs, "d/**/**/**/**/**/*.md") == [a, b, deep]
    assert matching_documents(docs, "d/" + "*/" * 3000 + "*.md") == []  # no hang, no recursion
    assert matching_documents(docs, "e/*.md") == []


def test_a_name_that_is_an_indexed_file_is_taken_literally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    bracket, one, star, q = _files(tmp_path, "d/a[1].md", "d/a1.md", "d/*.md", "d/f?.md")
    docs = [_doc(f) for f in (bracket, one, star, q)]
    assert matching_documents(docs, "d/a[1].md") == [bracket]
    assert matching_documents(docs, "d/*.md") == [star]
    assert matching_documents(docs, "d/f?.md") == [q]
    Path(bracket).unlink()  # no longer on disk, still indexed: still literal
    assert matching_documents(docs, "d/a[1].md") == [bracket]
    # Gone from disk and from the index: a glob again (as the shell would read it).
    assert matching_documents([_doc(one)], "d/a[1].md") == [one]
    # A real file (not indexed) with that name is literal: it names no document.
    Path(bracket).write_text("x")
    assert matching_documents([_doc(one)], "d/a[1].md") == []
    # A folder named like a glob is a folder.
    inner = _files(tmp_path, "g/[x]/in.md")[0]
    assert matching_documents([_doc(inner), _doc(one)], "g/[x]") == [inner]


def test_paths_are_normalised_and_record_ids_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, rec = _files(tmp_path, "d/a.md", "d/r.jsonl")
    monkeypatch.chdir(tmp_path / "d")
    docs = [_doc(a), _doc(f"{rec}#7", f"{rec}:3"), _doc(f"{rec}#8", f"{rec}:4")]
    assert matching_documents(docs, "../d/a.md") == [a]
    assert matching_documents(docs, f"{tmp_path}/d/../d/a.md/") == [a]
    assert matching_documents(docs, "r.jsonl#7") == [f"{rec}#7"]
    assert matching_documents(docs, "r.jsonl") == [f"{rec}#7", f"{rec}#8"]
    assert matching_documents(docs, "r.jsonl#9") == []
    assert document_file(docs[1]) == rec


def test_a_document_found_through_a_symlink_belongs_to_the_link(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (target,) = _files(tmp_path, "elsewhere/t.md")
    link = folder / "link.md"
    link.symlink_to(target)
    doc = _doc(target, str(link))  # what a walk of the folder records
    assert stale_documents([doc], [folder], set()) == []  # the link is there
    assert matching_documents([doc], str(folder)) == [target]  # rm of the folder covers it
    link.unlink()
    assert stale_documents([doc], [folder], set()) == [target]  # the folder no longer holds it
    # Indexed by its own name (no link): never the folder's to remove.
    assert stale_documents([_doc(target)], [folder], set()) == []


def test_what_cannot_be_told_gone_is_kept(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    sub = folder / "sub"
    b, c = _files(tmp_path, "notes/sub/b.md", "notes/sub/c.md")
    loop = folder / "loop.md"
    loop.symlink_to(loop)
    docs = [_doc(b), _doc(c), _doc(str(loop))]
    # The read skipped the folder (unreadable) and the loop: their documents stay.
    assert stale_documents(docs, [folder], set(), skipped=[str(sub), str(loop)]) == []
    assert stale_documents(docs, [folder], set(), skipped=[str(sub)]) == []  # a loop is not gone
    Path(c).unlink()
    assert stale_documents(docs, [folder], set()) == [c]
    assert stale_documents(docs, [loop], set()) == []  # a loop as the folder: no RuntimeError


def test_documents_read_through_a_link_out_of_the_folder(tmp_path: Path) -> None:
    folder, other = tmp_path / "notes", tmp_path / "etc"
    (a,) = _files(tmp_path, "notes/a.md")
    (secret,) = _files(tmp_path, "etc/passwd.txt")
    link = folder / "passwd.txt"
    link.symlink_to(secret)
    through = _doc(secret, str(link))  # what a walk that followed the link recorded
    rec = _doc(f"{secret}#1", f"{link}:1")  # never read by a folder walk: no found_at
    docs = [_doc(a), through, _doc(str(other / "x.md"))]
    root = str(folder.resolve())
    assert outside_documents(docs, [folder], set()) == [(secret, str(link), secret, root)]
    assert outside_documents(docs, [folder], {secret}) == []  # read this time from elsewhere
    # A JSONL record keeps its file's real path only: the fence (below) hides it.
    assert outside_roots([rec], {str(folder.resolve()): False}) == [rec["doc_id"]]
    # The fence: outside every root unless a root followed its links; no file, no fence.
    assert outside_roots([*docs, _doc("plain-id", "")], {root: False}) == [
        secret,
        str(other / "x.md"),
    ]
    assert outside_roots(docs, {root: True}) == [str(other / "x.md")]
    assert outside_roots(docs, {root: False, str(other.resolve()): False}) == []
    assert outside_roots(docs, {root: False}, linked_only=True) == [secret]  # an older index
