from __future__ import annotations

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
    f.write_text('{"id": "d1", "text": "ok"}\n{not json}\n')
    with pytest.raises(InputError, match=r"c.jsonl:2: invalid JSON"):
        read_file(f)
    f.write_text('{"id": "d1"}\n')
    with pytest.raises(InputError, match="missing or empty 'text'"):
        read_file(f)
    f.write_text('{"id": "d1", "text": "a"}\n{"id": "d1", "text": "b"}\n')
    with pytest.raises(InputError, match="duplicate id"):
        read_file(f)


def test_crlf_is_normalised(tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes(b"Line one.\r\nLine two.\r\n")
    assert read_file(f)[0].text == "Line one.\nLine two.\n"
