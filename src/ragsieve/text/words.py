"""Words a question names that the retrieved text never mentions: the question is not about
these documents ("Which Nettle function computes Argon2 password hashes?" over a manual that
never says "Argon2").

A question's word counts only when it is rare in English (wordfreq's Zipf frequency under
:data:`RARE_ZIPF`: "argon2", "xpath", "mingw"), so a paraphrase ("timezone" for "Samoa Time",
"impermanent" for "changeable") never decides. It is held by the text as the word, its stem
(:func:`stem`), a one-letter slip of a word there ("brittish" for "british", "paly" for
"play"), a longer form ("insensitive" in "insensitively") or two words written as one. The
threshold and the forms were chosen on dev (docs/llm.md, "Words the documents never mention").
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

__all__ = ["RARE_ZIPF", "absent_words", "is_rare", "stem"]

#: A word under this Zipf frequency in English (wordfreq: 3 is once per million words, 1 once
#: per billion) is rare enough that the question is about it. Chosen on dev.
RARE_ZIPF = 2.0
#: The shortest word that is judged at all ("19", "of" never are).
MIN_LETTERS = 3
#: The shortest word a one-letter slip is forgiven in (a swap of two letters from 4).
SLIP_LETTERS = 5
#: The letters a longer form must share with the question's word ("insensit...").
PREFIX_LETTERS = 7


def stem(word: str) -> str:
    """``word`` without one common English ending ("announced", "announce" -> "announc";
    "bees" -> "bee"), leaving at least three letters: so a question's word matches its
    inflection in the text."""
    for end in ("ing", "ed", "es", "s", "e"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            return word[: -len(end)]
    return word


@lru_cache(maxsize=65536)
def is_rare(word: str) -> bool:
    """Whether ``word`` (lower case) is rare in English: Zipf frequency under
    :data:`RARE_ZIPF` (a word in another script, a number of five digits, a made-up name)."""
    from wordfreq import zipf_frequency  # its word lists load on first use

    return zipf_frequency(word, "en") < RARE_ZIPF


def _one_slip(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one letter changed, added or dropped, or by two
    neighbouring letters swapped."""
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        i = diff[0] if len(diff) == 2 else -1
        return i >= 0 and diff[1] == i + 1 and a[i] == b[i + 1] and a[i + 1] == b[i]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    if len(long_) - len(short) != 1:
        return False
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _held(word: str, words: set[str], stems: set[str]) -> bool:
    if word in words or stem(word) in stems:
        return True
    if len(word) >= PREFIX_LETTERS and any(w.startswith(word[:PREFIX_LETTERS]) for w in words):
        return True  # a longer form: "insensitive" in "insensitively"
    if any(
        len(w) > MIN_LETTERS
        and _one_slip(word, w)
        and (len(word) >= SLIP_LETTERS or sorted(word) == sorted(w))
        for w in words | stems
    ):
        return True  # a slip: "brittish" for "british", "paly" for "play"
    # two words written as one: "timezone" for "time zone"
    return any(
        word.startswith(w) and word[len(w) :] in words
        for w in words
        if len(w) >= MIN_LETTERS and len(word) - len(w) >= MIN_LETTERS
    )


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
