"""The one JSON Lines reader: what it yields, and the one-line error for each fault."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragsieve.errors import InputError
from ragsieve.jsonl import read_jsonl


def test_objects_come_with_their_line_numbers(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl"
    # A BOM, CRLF, a blank line, a lone CR and no final newline, as a text-mode read sees them.
    f.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\n  \n{"b": "\xc3\xa9"}\r{"c": [3]}')
    assert list(read_jsonl(f)) == [(1, {"a": 1}), (4, {"b": "é"}), (5, {"c": [3]})]
    f.write_bytes(b"\n\n")
    assert list(read_jsonl(f)) == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b'{"a": 1}\n{not json}\n',
            r"a.jsonl:2: invalid JSON \(Expecting property name .* at column 2\)",
        ),
        (
            b'{"a": 1}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
            r"a.jsonl:2: JSON nested too deeply",
        ),
        (b'{"n": ' + b"9" * 5000 + b"}\n", r"a.jsonl:1: invalid JSON \(Exceeds the limit"),
        (b'["a list"]\n', r"a.jsonl:1: expected a JSON object, got list"),
        (b'{"a": 1}\n{"a": "\x00"}\n', r"a.jsonl:2: holds a NUL byte"),
        # The bad byte's offset in the file, on its own line (beyond a text reader's first chunk).
        (
            b'{"a": 1}\n' * 2000 + b'{"a": "caf\xe9"}\n',
            r"a.jsonl:2001: not valid UTF-8 \(byte 18010\)",
        ),
        (b'\xef\xbb\xbf{"a": "\xff"}\n', r"a.jsonl:1: not valid UTF-8 \(byte 10\)"),
    ],
)
def test_each_fault_is_one_line_naming_file_and_line(
    tmp_path: Path, content: bytes, message: str
) -> None:
    f = tmp_path / "a.jsonl"
    f.write_bytes(content)
    with pytest.raises(InputError, match=message) as err:
        list(read_jsonl(f))
    assert "\n" not in str(err.value)


def test_expect_says_what_a_line_should_be(tmp_path: Path) -> None:
    f = tmp_path / "q.jsonl"
    f.write_text("3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"q.jsonl:1: expected an object with id, query, got int"):
        list(read_jsonl(f, expect="an object with id, query"))


def test_a_missing_folder_or_pipe_is_refused_before_reading(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope.jsonl: file not found"):
        next(read_jsonl(tmp_path / "nope.jsonl"))
    with pytest.raises(InputError, match=r"not a file \(a folder\)"):
        next(read_jsonl(tmp_path))
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):  # never blocks on open
        next(read_jsonl(fifo))
