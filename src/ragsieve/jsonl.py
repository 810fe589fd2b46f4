"""JSON Lines read one line at a time, every fault a one-line error naming the file and line.

The one reader of the JSONL files users hand us (documents to index, questions and corpora to
evaluate, queries to rerank): each caller checks its own fields on the objects it yields. Bytes
are decoded line by line, so that a bad byte is reported on its own line, at its offset in the
file, and a large file streams.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragsieve.errors import InputError


def _check_file(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError as e:
        raise InputError(f"{path}: file not found") from e
    except OSError as e:  # permission denied on a parent folder, a symlink loop
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from e
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: not a file (a folder)")
    if not stat.S_ISREG(mode):  # a FIFO would block forever, a device would never end
        raise InputError(f"{path}: not a regular file (a pipe, device or socket)")


def _parse(where: str, line: str, expect: str) -> dict[str, Any]:
    if "\x00" in line:
        raise InputError(f"{where}: holds a NUL byte (the file looks binary, not JSON Lines)")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: invalid JSON ({e.msg} at column {e.colno})") from e
    except RecursionError as e:
        raise InputError(f"{where}: JSON nested too deeply") from e
    except ValueError as e:  # a number past Python's digit limit
        raise InputError(f"{where}: invalid JSON ({str(e).splitlines()[0]})") from e
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected {expect}, got {type(obj).__name__}")
    return obj


def read_jsonl(path: Path, expect: str = "a JSON object") -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for the non-blank lines of the JSONL file ``path``.

    Raises :class:`InputError` with one line for a file that is missing or not a regular file,
    a line that is not UTF-8 (its byte offset), holds a NUL byte, is not JSON (the parser's
    message and column), is nested too deeply, or is not an object (``expect`` says what each
    line should be). A BOM is skipped; lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, as
    in a text-mode read.
    """
    _check_file(path)
    try:
        fh = path.open("rb")
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from e
    with fh:
        n = offset = 0
        for raw in fh:
            try:
                text = raw.decode("utf-8-sig" if offset == 0 else "utf-8")
            except UnicodeDecodeError as e:
                bom = 3 if offset == 0 and raw.startswith(b"\xef\xbb\xbf") else 0
                where = f"{path}:{n + 1}"
                raise InputError(f"{where}: not valid UTF-8 (byte {offset + bom + e.start})") from e
            offset += len(raw)
            text = text.removesuffix("\n").removesuffix("\r")
            for line in text.split("\r"):  # a lone CR ends a line too
                n += 1
                if line.strip():
                    yield n, _parse(f"{path}:{n}", line, expect)
