"""Argument checks at the boundary of the Python API, the pool selector and the framework
adapters: one place, so that the same mistake gets the same one-line message everywhere.

Every check raises a :class:`~ragsieve.errors.RagsieveError` that names the argument, says
what was given and what is expected. The data a call works on (a question, passages, a path,
documents) raises :class:`InputError`; a knob (``k``, ``budget``, ``rate``, a method or model
name) raises :class:`ConfigError`, as the method options do. A ``bool`` is not a number here
(``k=True`` is a mistake, not 1), and a string is never taken for a list (it would be read
character by character). Each check is O(1) or one pass over the items, so the hot path does
not notice it.
"""

from __future__ import annotations

import math
import os
import unicodedata
from collections.abc import Iterable, Mapping, Set
from pathlib import Path
from typing import Any

from ragsieve.errors import ConfigError, InputError, RagsieveError
from ragsieve.types import Document

#: The largest count (``k``, a depth) a call takes: far above any real use, and below what
#: the storage layer's 64-bit arguments overflow on.
MAX_COUNT = 1_000_000

#: What a prune passage is, for the messages.
PASSAGE_KINDS = "strings or (title, text) pairs"


def describe(value: Any, limit: int = 40) -> str:
    """``value`` for an error message: its type and a short one-line repr."""
    if value is None or isinstance(value, bool):
        return repr(value) + (" (a bool)" if isinstance(value, bool) else "")
    r = repr(value)
    r = " ".join(r.split())  # a custom repr may span lines; the message is one line
    if len(r) > limit:
        r = r[: limit - 3] + "..."
    if isinstance(value, str):
        return r
    return f"{type(value).__name__} {r}"


def _kind(value: Any) -> str:
    """``a str``, ``a dict``, ``None``: what a list argument was given instead."""
    return "None" if value is None else f"a {type(value).__name__}"


def check_valid_text(name: str, value: str, error: type[RagsieveError] = InputError) -> None:
    """``value`` encodes as UTF-8: no lone surrogate (what a bad decode or a JSON ``\\ud800``
    leaves), which the tokenizers and hashing cannot read."""
    if value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        ch = value[e.start]
        raise error(
            f"{name} holds a lone surrogate (U+{ord(ch):04X} at character {e.start}), which is "
            f"not text: decode the input with errors='replace'"
        ) from None


def check_text(
    name: str, value: Any, *, empty_ok: bool = False, error: type[RagsieveError] = InputError
) -> str:
    """``value`` as text: a ``str`` (not bytes, not None) with no lone surrogate, and unless
    ``empty_ok`` with something besides whitespace."""
    if not isinstance(value, str):
        hint = ": decode it first" if isinstance(value, bytes | bytearray) else ""
        raise error(f"{name} must be a string, got {describe(value)}{hint}")
    if not empty_ok and not value.strip():
        raise error(f"{name} is empty (got {describe(value)}): pass some text")
    if not empty_ok and invisible(value):
        raise error(f"{name} is empty{invisible_note(value)}: pass some text")
    check_valid_text(name, value, error)
    return value


#: Unicode categories a reader cannot see: controls, format characters (zero-width space and
#: joiners, the byte-order mark, bidi marks) and separators.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


def invisible_note(text: str) -> str:
    """How an invisible ``text`` is shown in its refusal: the code points it holds."""
    shown = " ".join(f"U+{ord(c):04X}" for c in dict.fromkeys(text))
    return f" (only invisible characters: {shown[:60]})" if text.strip() else ""


def invisible(text: str) -> bool:
    """Whether ``text`` holds nothing a reader can see (only whitespace, zero-width and other
    format characters): a query of two zero-width spaces is as blank as one of two spaces."""
    if text.isascii():
        return not text.strip()
    return all(unicodedata.category(c) in INVISIBLE_CATEGORIES for c in text)


def _int_range(lo: int, hi: int | None) -> str:
    if hi is not None:
        return f"an integer in [{lo}, {hi}]"
    return "a positive integer" if lo == 1 else f"an integer >= {lo}"


def check_int(
    name: str,
    value: Any,
    *,
    lo: int = 1,
    hi: int | None = None,
    none_ok: bool = False,
    error: type[RagsieveError] = ConfigError,
) -> int | None:
    """``value`` as an ``int`` in ``[lo, hi]`` (a bool or a float is refused; None only when
    ``none_ok``)."""
    if value is None and none_ok:
        return None
    ok = isinstance(value, int) and not isinstance(value, bool)
    if not ok or value < lo or (hi is not None and value > hi):
        expected = _int_range(lo, hi) + (" or None" if none_ok else "")
        raise error(f"{name} must be {expected}, got {describe(value)}")
    return int(value)


def check_real(
    name: str,
    value: Any,
    *,
    lo: float,
    hi: float,
    lo_open: bool = False,
    hi_open: bool = False,
    none_ok: bool = False,
    error: type[RagsieveError] = ConfigError,
) -> float | None:
    """``value`` as a real number in the interval (a bool, NaN or a string is refused)."""
    if value is None and none_ok:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = (value > lo if lo_open else value >= lo) and (value < hi if hi_open else value <= hi)
    if not ok:
        interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
        extra = " or None" if none_ok else ""
        raise error(f"{name} must be a real number in {interval}{extra}, got {describe(value)}")
    return float(value)


def check_flag(name: str, value: Any, *, none_ok: bool = False) -> bool | None:
    """``value`` is ``True`` or ``False`` (not ``"yes"``, not 1)."""
    if (value is None and none_ok) or isinstance(value, bool):
        return value
    extra = ", or None" if none_ok else ""
    raise ConfigError(f"{name} must be true or false{extra}, got {describe(value)}")


def check_name(
    name: str, value: Any, *, none_ok: bool = False, expected: str = "a name"
) -> str | None:
    """``value`` is a non-empty string naming something (a method, a model, a retriever)."""
    if value is None and none_ok:
        return None
    if not isinstance(value, str) or not value.strip():
        extra = " or None" if none_ok else ""
        raise ConfigError(f"{name} must be {expected}{extra}, got {describe(value)}")
    return value


def check_list(name: str, value: Any, *, of: str) -> list[Any]:
    """``value`` as a list: any list, tuple or other iterable in order, but never a string
    (read character by character), bytes, a mapping (its keys) or a set (no order)."""
    bad = (
        value is None
        or isinstance(value, str | bytes | bytearray | Mapping | Set)
        or not isinstance(value, Iterable)
    )
    if bad:
        raise InputError(f"{name} must be a list of {of}, not {_kind(value)}")
    return value if isinstance(value, list) else list(value)


def check_texts(name: str, value: Any, *, of: str = "strings") -> list[str]:
    """``value`` as a list of strings (each may be empty, none may hold a lone surrogate)."""
    items = check_list(name, value, of=of)
    for i, v in enumerate(items):
        if not isinstance(v, str):
            raise InputError(f"{name}[{i}] must be a string, got {describe(v)}")
        check_valid_text(f"{name}[{i}]", v)
    return items


def check_passages(name: str, value: Any) -> list[tuple[str, str]]:
    """``value`` (prune's passages) as ``(title, text)`` pairs: each item a string (no title)
    or a 2-tuple of strings."""
    items = check_list(name, value, of=PASSAGE_KINDS)
    out: list[tuple[str, str]] = []
    for i, p in enumerate(items):
        if isinstance(p, str):
            title, text = "", p
        elif isinstance(p, tuple) and len(p) == 2 and all(isinstance(s, str) for s in p):
            title, text = p
        else:
            got = f"a tuple of {len(p)}" if isinstance(p, tuple) and len(p) != 2 else describe(p)
            raise InputError(f"{name}[{i}] must be a string or a (title, text) pair, got {got}")
        check_valid_text(f"{name}[{i}]", title)
        check_valid_text(f"{name}[{i}]", text)
        out.append((title, text))
    return out


def check_path(name: str, value: Any) -> str | os.PathLike[str]:
    """``value`` is a path: a non-empty ``str`` or ``os.PathLike`` without a NUL character."""
    if not isinstance(value, str | os.PathLike) or isinstance(value, bytes):
        raise InputError(f"{name} must be a str or a pathlib.Path, got {describe(value)}")
    text = os.fspath(value)
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{name} must be a non-empty path, got {describe(value)}")
    if "\0" in text:
        raise InputError(f"{name} holds a NUL character, which no path can: {describe(text)}")
    return value


def check_paths(name: str, value: Any) -> list[str | Path]:
    """``value`` as a list of paths (a single path is refused: wrap it in a list)."""
    if isinstance(value, str | os.PathLike):
        raise InputError(
            f"{name} must be a list of paths, not {_kind(value)}: wrap one path as [path]"
        )
    items = check_list(name, value, of="paths")
    return [check_path(f"{name}[{i}]", p) for i, p in enumerate(items)]  # type: ignore[misc]


def check_documents(name: str, value: Any) -> list[Document]:
    """``value`` as a list of :class:`~ragsieve.types.Document` with a string id and text."""
    items = check_list(name, value, of="Documents")
    for i, d in enumerate(items):
        if not isinstance(d, Document):
            raise InputError(
                f"{name}[{i}] must be a ragsieve Document(id, text), got {describe(d)}"
            )
        check_text(f"{name}[{i}].id", d.id)
        check_text(f"{name}[{i}].text", d.text, empty_ok=True)
        for field in ("title", "source"):
            v = getattr(d, field)
            if not isinstance(v, str):
                raise InputError(f"{name}[{i}].{field} must be a string, got {describe(v)}")
    return items


def check_run(run: Mapping[str, Any]) -> None:
    """A method's run options (``k``, ``budget``, ``retriever``, ``reranker``; each may be
    None), by type; the method checks the rest (unknown options, names it does not know)."""
    for key in ("k", "budget"):
        if key in run:
            check_int(key, run[key], hi=MAX_COUNT if key == "k" else None, none_ok=True)
    for key in ("retriever", "reranker"):
        if key in run:
            check_name(key, run[key], none_ok=True, expected=f"a {key} name")
