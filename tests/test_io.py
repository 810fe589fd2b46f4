from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from ragsieve.errors import InputError
from ragsieve.io import load_paths, read_file


def test_folder_is_read_recursively_and_binary_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha text here.", encoding="utf-8")
    (tmp_path / "sub" / "b.txt").write_text("Beta text.", encoding="utf-8")
    (tmp_path / "sub" / "c.txt").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "empty.txt").write_text("   \n", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.txt").write_text("hidden", encoding="utf-8")
    rep = load_paths([tmp_path])
    titles = sorted(d.title for d in rep.documents)
    assert titles == ["Alpha", "b"]
    reasons = {Path(p).name: r for p, r in rep.skipped}
    assert "binary" in reasons["c.txt"]
    assert "UTF-8" in reasons["latin1.txt"]
    assert "empty" in reasons["empty.txt"]
    assert "unsupported" in reasons["image.png"]


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "empty"), (b"\x00\x00abc", "binary"), (b"\xff\xfe\xfa", "UTF-8")],
)
def test_explicit_bad_file_is_an_error(tmp_path: Path, content: bytes, message: str) -> None:
    f = tmp_path / "bad.txt"
    f.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_file(f)


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_paths([tmp_path / "nope"])


def test_jsonl_records_and_errors(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text('{"id": "d1", "title": "T", "text": "Hello."}\n\n{"id": 2, "text": "Hi."}\n')
    docs = read_file(f)
    base = str(f.resolve())
    assert [(d.id, d.title, d.text) for d in docs] == [
        (f"{base}#d1", "T", "Hello."),
        (f"{base}#2", "", "Hi."),
    ]
    for text, message in [
        ('{"id": "d1", "text": "ok"}\n{not json}\n', r"c.jsonl:2: invalid JSON"),
        ('{"id": "d1"}\n', "missing or empty 'text'"),
        ('{"id": "d1", "text": "a"}\n{"id": "d1", "text": "b"}\n', "duplicate id"),
    ]:
        f.write_text(text)
        with pytest.raises(InputError, match=message):
            read_file(f)


def test_crlf_is_normalised(tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes(b"Line one.\r\nLine two.\r\n")
    assert read_file(f)[0].text == "Line one.\nLine two.\n"


# ------------------------------------------------------------------ issue 32: bounded input
def test_non_utf8_file_names_get_an_escaped_id(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path / "d")
    os.makedirs(folder)
    with open(os.path.join(folder, b"bad\xffname.md"), "w") as f:
        f.write("# Zebras\nStripes.\n")
    (tmp_path / "d" / "ok.md").write_text("Giraffes.\n")
    loaded = load_paths([tmp_path / "d"])
    ids = sorted(d.id for d in loaded.documents)
    assert ids[0].endswith("bad\\xffname.md") and ids[1].endswith("ok.md")
    for d in loaded.documents:  # storable and printable
        (d.id + d.title + d.source).encode("utf-8")


def test_whitespace_runs_are_cut_when_read(tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_text("Start. " + " " * 1_000_000 + "End.\n\n" + "\n" * 5000 + "After.")
    text = read_file(f)[0].text
    assert len(text) < 500 and text.startswith("Start. ") and "End.\n\nAfter." in text
    j = tmp_path / "w.jsonl"
    j.write_text(json.dumps({"text": "a" + "\t" * 100_000 + "b"}) + "\n")
    assert len(read_file(j)[0].text) <= 202


def test_deep_and_unreadable_folders_are_reported_not_fatal(tmp_path: Path) -> None:
    top = tmp_path / "deep"
    top.mkdir()
    (top / "top.md").write_text("Top.\n")
    cur = os.open(top, os.O_RDONLY)
    for _ in range(1500):  # deeper than Python's recursion limit
        os.mkdir("d", dir_fd=cur)
        nxt = os.open("d", os.O_RDONLY, dir_fd=cur)
        os.close(cur)
        cur = nxt
    os.close(cur)
    try:
        loaded = load_paths([top])
    finally:
        _rmtree_deep(top)  # pytest's own clean-up of tmp_path would hit the recursion limit
    assert [Path(d.id).name for d in loaded.documents] == ["top.md"]
    assert len(loaded.skipped) == 1 and "levels deep" in loaded.skipped[0][1]


def _rmtree_deep(path: Path) -> None:
    """shutil.rmtree recurses once per level (Python 3.11): give it room for 1,500."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10_000))
    try:
        shutil.rmtree(path)
    finally:
        sys.setrecursionlimit(old)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 folder anyway")
def test_a_mode_000_subfolder_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "d" / "locked").mkdir(parents=True)
    (tmp_path / "d" / "a.md").write_text("A.\n")
    os.chmod(tmp_path / "d" / "locked", 0)
    try:
        loaded = load_paths([tmp_path / "d"])
    finally:
        os.chmod(tmp_path / "d" / "locked", 0o755)
    assert len(loaded.documents) == 1
    assert loaded.skipped and "permission denied" in loaded.skipped[0][1]


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ('{"text": "a", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        ('{"text": "a", "n": ' + "9" * 5000 + "}", "invalid JSON"),
        ('{"text": "a \\ud800 b"}', "lone surrogate"),
        ('{"text": "a", "title": "\\udfff"}', "lone surrogate"),
        ('{"text": "a", "id": "\\ud834"}', "lone surrogate"),
    ],
)
def test_jsonl_bounds(tmp_path: Path, row: str, fragment: str) -> None:
    f = tmp_path / "r.jsonl"
    f.write_text(row + "\n")
    with pytest.raises(InputError, match=fragment):
        read_file(f)


def test_a_nul_byte_anywhere_marks_a_file_binary(tmp_path: Path) -> None:
    f = tmp_path / "n.txt"
    f.write_text("a" * 9000 + "\x00b")
    with pytest.raises(InputError, match="NUL"):
        read_file(f)


def test_links_out_of_a_folder_are_reported_not_read(tmp_path: Path) -> None:
    """An /etc-like file, a sibling folder, a chain, the folder above, a loop, a dangling
    link: each link out is skipped with its target named; ``follow_symlinks`` reads them."""
    docs, etc, sibling = tmp_path / "docs", tmp_path / "etc", tmp_path / "sibling"
    for d in (docs, etc, sibling):
        d.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha text.", encoding="utf-8")
    (etc / "passwd").write_text("root:x:0:0:root:/root:/bin/bash", encoding="utf-8")
    (sibling / "s.md").write_text("Sibling text.", encoding="utf-8")
    (docs / "passwd.txt").symlink_to(etc / "passwd")
    (docs / "chain.txt").symlink_to(docs / "passwd.txt")
    (docs / "sib").symlink_to(sibling)
    (docs / "up").symlink_to(tmp_path)
    (docs / "loop.md").symlink_to(docs / "loop.md")
    (docs / "gone.md").symlink_to(docs / "nothing.md")
    (docs / "alias.md").symlink_to(docs / "a.md")
    rep = load_paths([docs])
    assert [d.id for d in rep.documents] == [str((docs / "a.md").resolve())]
    assert rep.roots == [str(docs.resolve())]
    reasons = {Path(p).name: r for p, r in rep.skipped}
    root = docs.resolve()
    assert reasons["passwd.txt"].startswith(
        f"a symlink to {(etc / 'passwd').resolve()}, outside {root}"
    )
    assert reasons["chain.txt"] == reasons["passwd.txt"]
    assert reasons["sib"].startswith(f"a symlink to {sibling.resolve()}, outside")
    assert reasons["up"].startswith(f"a symlink to {tmp_path.resolve()}, outside")
    assert reasons["loop.md"] == "a symlink loop: not read"
    assert reasons["gone.md"].startswith("a dangling symlink")
    assert set(reasons) == {"passwd.txt", "chain.txt", "sib", "up", "loop.md", "gone.md"}

    rep = load_paths([docs], follow_symlinks=True)
    ids = sorted(d.id for d in rep.documents)
    assert ids == sorted(
        str(p.resolve()) for p in (docs / "a.md", etc / "passwd", sibling / "s.md")
    )  # the folder above is walked once, the root inside it not again
    with pytest.raises(InputError, match=r"a symlink to .*passwd, outside"):
        load_paths([docs / "passwd.txt"])
    assert len(load_paths([docs / "passwd.txt"], follow_symlinks=True).documents) == 1
