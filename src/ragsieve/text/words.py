"""Words a question names that the retrieved text never mentions: the question is not about
these documents ("Which Nettle function computes Argon2 password hashes?" over a manual that
never says "Argon2"). A name in code form (a flag, an identifier, a version number) counts
whatever its words (:func:`absent_names`: "--freelist-vol", "Valgrind 3.19").

A question's word counts only when it is rare in English (wordfreq's Zipf frequency under
:data:`RARE_ZIPF`: "argon2", "xpath", "mingw"), so a paraphrase ("timezone" for "Samoa Time",
"impermanent" for "changeable") never decides, nor does a misspelt common word ("accomlish",
:func:`misspelt`). It is held by the text as the word, its stem (:func:`stem`), a one-letter
slip of a word there ("brittish" for "british", "paly" for "play"), a longer form
("insensitive" in "insensitively") or two words written as one, one of them maybe a function
word ("massof", "in2014"). The threshold and the forms:
docs/llm.md, "Words the documents never mention".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ragsieve.text.markup import plain

__all__ = ["RARE_ZIPF", "absent_names", "absent_words", "is_rare", "misspelt", "stem"]

#: A word under this Zipf frequency in English (wordfreq: 3 is once per million words, 1 once
#: per billion) is rare enough that the question is about it. Chosen on dev.
RARE_ZIPF = 2.0
#: The shortest word that is judged at all ("19", "of" never are).
MIN_LETTERS = 3
#: The shortest word a one-letter slip is forgiven in (a swap of two letters from 4).
SLIP_LETTERS = 5
#: The letters a longer form must share with the question's word ("insensit...").
PREFIX_LETTERS = 7
#: The shortest word a misspelling of a common English word is forgiven in ("accomlish").
TYPO_LETTERS = 6
#: How common the word a misspelling stands for must be (Zipf 3.5: three in a million words).
COMMON_ZIPF = 3.5
#: How common a word of two or three letters must be to count as a function word run into
#: its neighbour (Zipf 6: "of", "in", "the", "and"; once in a thousand words).
FUNCTION_ZIPF = 6.0
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
#: A name in code form: a long flag (``--ultra``), an identifier with ``_``, ``::`` or ``()``
#: (``ffi_prep_cif``), a dotted name (``mime.cache``; each part two characters or more, so
#: "U.S." and "e.g." are none), a file extension after a space (``.docx``), or a version
#: number (``1.0.2``; ``3.19`` after a product's name, :func:`_is_name`).
_NAME = re.compile(
    r"(?<![\w-])(?:--[A-Za-z][\w-]*|\w*_\w+|\w+(?:::\w+)+|\w+\(\)"
    r"|(?<!\S)\.[a-z][a-z0-9]{1,5}\b|[A-Za-z]\w+(?:\.[A-Za-z]\w+)+"
    r"|(?<![.\d])\d+(?:\.\d+)+(?![.\d]*\d))"
)
#: A number with one dot: a release after a product's name, else a quantity.
_DECIMAL = re.compile(r"\d+\.\d+")
#: Two words run together at a full stop, not a name: "Apple Inc.suggest", "the city.It".
_PROSE_JOIN = re.compile(r"[A-Z][a-z]+\.[a-z]+|[a-z]+\.[A-Z][a-z]+")


def stem(word: str) -> str:
    """``word`` without one common English ending ("announced", "announce" -> "announc";
    "bees" -> "bee"), leaving at least three letters: so a question's word matches its
    inflection in the text."""
    for end in ("ing", "ed", "es", "s", "e"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            return word[: -len(end)]
    return word


def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency  # its word lists load on first use

    return float(zipf_frequency(word, "en"))


@lru_cache(maxsize=65536)
def is_rare(word: str) -> bool:
    """Whether ``word`` (lower case) is rare in English: Zipf frequency under
    :data:`RARE_ZIPF` (a word in another script, a number of five digits, a made-up name),
    and not a misspelling of a common word (:func:`misspelt`)."""
    return _zipf(word) < RARE_ZIPF and not misspelt(word)


def misspelt(word: str) -> bool:
    """Whether ``word`` (:data:`TYPO_LETTERS` letters or more) is a common English word
    (:data:`COMMON_ZIPF`) with one letter dropped, one added or two neighbours swapped after
    the first ("accomlish", "dissloved"). A changed letter does not count: "scrypt" is not
    "script"; nor does the first letter: "scrypt" is not "crypt"."""
    if len(word) < TYPO_LETTERS or not word.isalpha():
        return False
    # the first letter stays: "scrypt" is not "crypt", "pthreads" not "threads"
    near = _edits(word, _LETTERS, change=False, start=1)
    return any(_zipf(w) >= COMMON_ZIPF for w in near)


def _edits(word: str, letters: Iterable[str], *, change: bool = True, start: int = 0) -> set[str]:
    """The words one edit from ``word`` at position ``start`` or later: a letter dropped, one of
    ``letters`` added or (with ``change``) put in a letter's place, or two neighbours swapped;
    never ``word`` itself."""
    n, letters = len(word), list(letters)
    near = {word[:i] + word[i + 1 :] for i in range(start, n)}
    near |= {word[:i] + c + word[i:] for i in range(start, n + 1) for c in letters}
    near |= {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(start, n - 1)}
    if change:
        near |= {word[:i] + c + word[i + 1 :] for i in range(start, n) for c in letters}
    near.discard(word)
    return near


def _held(word: str, words: set[str], stems: set[str]) -> bool:
    if word in words or stem(word) in stems:
        return True
    if len(word) >= PREFIX_LETTERS and any(w.startswith(word[:PREFIX_LETTERS]) for w in words):
        return True  # a longer form: "insensitive" in "insensitively"
    pool = words | stems
    if any(
        len(w) > MIN_LETTERS and (len(word) >= SLIP_LETTERS or sorted(word) == sorted(w))
        for w in _edits(word, set("".join(pool))) & pool
    ):
        return True  # a slip: "brittish" for "british", "paly" for "play"
    return _two_words(word, words, stems)


def _two_words(word: str, words: set[str], stems: set[str]) -> bool:
    """Whether ``word`` is two words written as one: both the text's ("timezone" for "time
    zone"), or a word of the text run into a function word, which the search words never hold
    ("massof" for "mass of", "in2014" for "in 2014")."""
    for i in range(2, len(word) - 1):
        head, tail = word[:i], word[i:]
        if min(len(head), len(tail)) >= MIN_LETTERS and head in words and tail in words:
            return True
        for short, rest in ((head, tail), (tail, head)):
            if len(short) > 3 or len(rest) < MIN_LETTERS:
                continue
            if (rest in words or stem(rest) in stems) and _zipf(short) >= FUNCTION_ZIPF:
                return True
    return False


def absent_words(question: Iterable[str], text: Iterable[str]) -> list[str]:
    """The rare words of ``question`` (its search words, lower case) that ``text`` (the search
    words of the retrieved text) does not hold in any form, in question order, once each."""
    words = set(text)
    stems = {stem(w) for w in words}
    out: list[str] = []
    for w in dict.fromkeys(question):
        if len(w) >= MIN_LETTERS and is_rare(w) and not _held(w, words, stems):
            out.append(w)
    return out


def absent_names(question: str, text: str) -> list[str]:
    """The names in code form (:data:`_NAME`) of ``question`` that ``text`` never holds, case
    aside and Markdown's escapes read as their marks (``ffi\\_prep\\_cif``), in question
    order, once each: a flag or a function the documents never mention ("--freelist-vol"),
    however common its words."""
    held = plain(text).lower()
    names = (m.group() for m in _NAME.finditer(question) if _is_name(question, m))
    return [n for n in dict.fromkeys(names) if n.lower() not in held]


def _is_name(question: str, m: re.Match[str]) -> bool:
    """Whether the match ``m`` of :data:`_NAME` names something: not two words run together at
    a full stop (:data:`_PROSE_JOIN`), and a number with one dot only after a product's name
    ("Valgrind 3.19"), since elsewhere it is a quantity ("a 0.300 batting average")."""
    name = m.group()
    if _PROSE_JOIN.fullmatch(name):
        return False
    if _DECIMAL.fullmatch(name):
        before = question[: m.start()].split()
        return bool(before) and before[-1][:1].isupper()
    return True
