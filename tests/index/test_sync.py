"""Which indexed documents a folder, a glob or a file names (``index FOLDER``'s sync, ``rm``)."""

from __future__ import annotations

from pathlib import Path

from ragsieve.index.sync import document_file, matching_documents, stale_documents


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
