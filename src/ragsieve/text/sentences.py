"""Sentence splitting: layout rules + abbreviation-aware punctuation rules (pure Python).

Choice (measured by ``.venv/bin/python benchmarks/bench_splitter.py``; full table in
``benchmarks/results/splitter.md``): our own rule-based splitter, no dependency. Boundary F1
against HotpotQA's sentence gold (3.2k dev / 14.5k held-out boundaries):

==========================  ========  ============  ====================  =============
splitter                    dev F1    held-out F1   SQuAD newline split   k chars/s
==========================  ========  ============  ====================  =============
ours                        0.9953    0.9901        100%                  4,698
blingfire 0.1.8             0.9903    0.9845        96.9%                 2,076
pysbd 0.3.4                 0.9872    0.9817        100%                  83
NLTK punkt (English)        0.9874    0.9812        93.8%                 1,255
sentencex 1.0               0.9899    0.9851        89.5%                 21,088
==========================  ========  ============  ====================  =============

(Speed: one pass over 1 MB of SQuAD + QASPER on the shared 2-core box; ours is ~55x pysbd.)

Most of our remaining disagreements are errors in the gold (a random sample of 60 held-out
ones: 44 gold errors, 6 wiki markup or garbage, 10 ours). Ours is also the only candidate that
keeps every QASPER ``#`` heading whole and splits at every newline between SQuAD paragraphs
while leaving hard-wrapped prose alone (1.7 splits per 1,000 mid-sentence wraps; pysbd: 1,000).

Contract: ``split_sentences(text)`` returns sorted, non-overlapping ``(start, end)`` character
spans; each span's text is non-empty and has no leading/trailing whitespace; every
non-whitespace character of ``text`` lies in exactly one span. Spans are only ever produced by
cutting ``text`` and trimming whitespace (``str.isspace``), so the contract holds for any input.

How it works:

1. Layout. The text is cut into *blocks* at blank lines, before and after Markdown headings
   (``# Title``) and horizontal rules, before list items (``- x``, ``* x``, ``1. x``, ``a) x``,
   ``(iv) x``) and at the end of a list item unless the next line continues it (indented,
   starting in lower case, or a forced wrap). Any other single line break ends a sentence
   unless the next line starts in lower case, the line ends with a function word ("the",
   "of", "and", ...) or with ``, ; - / & + (``, or the break was *forced* by wrapping: the
   document is hard-wrapped (95th percentile of its line lengths <= 120) and the next word
   would not have fitted on the line. In text that is not hard-wrapped, a newline after a
   line longer than 120 characters always ends the sentence. So short heading-like lines
   ("Introduction", "= History =") end a sentence, one-paragraph-per-line text splits at
   every newline, and prose wrapped at 70 columns is joined back. A ``#`` heading line is one
   span whatever punctuation it holds.
2. Punctuation, inside each block. Candidates are ``.``, ``!``, ``?``, ``…`` (runs of them),
   then closing quotes/brackets, then whitespace. ``!``/``?`` end a sentence unless the next
   word is lower case (or is punctuation, as in ``"Go!", he said``). An ellipsis ends one only
   before a capitalised common sentence opener ("The", "He", "In", ...). A period ends one
   unless the next word is lower case, the word before is a title or never-final
   abbreviation (Dr., Prof., e.g., i.e., cf., vs., Fig., Eq.), or it is ambiguous -- an
   initial (``J.``), a dotted acronym (``U.S.``, ``Ph.D.``), or a sometimes-final
   abbreviation (``et al.``, ``Inc.``, ``Jr.``, ``St.``, months) -- and the next word is not
   a common sentence opener. Before a digit a period ends a sentence unless it follows an
   abbreviation or a number-taking word (No., p., pp., Fig., Vol.) or the digit sits in a
   bracket (``et al. (2019)``, ``[12]``). Decimals (``3.5``) and ``U.S.A.`` never reach the
   rules because no whitespace follows their inner periods. ``1.``/``(a)`` at the start of a
   block is numbering, not a stop. Chinese/Japanese ``。！？`` end a sentence even without a
   following space.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "add_trimmed",
    "layout_blocks",
    "sentence_texts",
    "split_sentences",
    "split_sentences_batch",
]

Span = tuple[int, int]
Block = tuple[int, int, bool]


def _words(s: str) -> list[str]:
    return s.split()


# ----------------------------------------------------------------------------- layout

# Everything str.splitlines() treats as a line break. U+2029 is a paragraph separator.
_NL = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_WORD = re.compile(r"\S*")
_MD_HEADING = re.compile(r"#{1,6}(?:\s|$)")
_HRULE = re.compile(r"(?:[-=_*~+#]\s*+){3,}+")
_ITEM = re.compile(
    r"(?:[-*+•◦▪‣·–]|\d{1,3}[.)]|[A-Za-z]\)|\((?:\d{1,3}|[A-Za-z]|[ivxlcIVXLC]{1,5})\))\s+\S"
)
_NOT_A_START = ",;:.!?…)]}”’»›"  # a "next word" starting so continues the sentence
_OPENERS = "\"'“‘«‹([{¿¡„‚"
_CLOSERS = "\"'”’»›)]}"
_SOFT_END = ",;-‐‑–—/&+("  # a line ending in one of these continues on the next line
_WRAP_MAX = 120  # a document whose lines are longer than this is not hard-wrapped
_WRAP_SLACK = 8  # lines this much longer than the wrap width are not wrapped lines
_WRAP_TOL = 4  # a word this much short of fitting still counts as not fitting

_LAST_WORD = re.compile(r"(?<![^\W\d_])[^\W\d_]+\Z")
# A line ending in one of these words runs on into the next line (headings do not end so).
_FUNCTION_WORDS = frozenset(
    _words(
        """
    a an the of to and or nor in on at for with by from as that than his her its their our
    my your is was were are be been has had have will would could should
    """
    )
)

_BLANK, _PLAIN, _HEAD, _ITEM_LINE = 0, 1, 2, 3


def _line_info(text: str, s: int, e: int) -> tuple[int, int, int]:
    """(content start, content end, kind) of the line ``text[s:e]``."""
    seg = text[s:e]
    stripped = seg.strip()
    if not stripped:
        return s, s, _BLANK
    cs = s + len(seg) - len(seg.lstrip())
    ce = cs + len(stripped)
    if _MD_HEADING.match(stripped) or _HRULE.fullmatch(stripped):
        kind = _HEAD
    elif _ITEM.match(stripped):
        kind = _ITEM_LINE
    else:
        kind = _PLAIN
    return cs, ce, kind


def _first_word_len(text: str, cs: int) -> int:
    return _WORD.match(text, cs).end() - cs  # type: ignore[union-attr]


def _starts_lower(text: str, cs: int, ce: int) -> bool:
    i = cs
    while i < ce and text[i] in _OPENERS:
        i += 1
    return i < ce and text[i].islower()


def _ends_with_function_word(text: str, ls: int, ce: int) -> bool:
    m = _LAST_WORD.search(text, max(ls, ce - 8), ce)
    return m is not None and m.group().lower() in _FUNCTION_WORDS


def layout_blocks(text: str) -> list[Block]:
    """Cut ``text`` into ``(start, end, is_heading)`` blocks at hard layout breaks.

    Sentences never cross a block edge; a heading block is one sentence whatever it contains.
    """
    if _NL.search(text) is None:
        return [(0, len(text), False)]
    raw: list[tuple[int, int, bool]] = []  # (start, end, ends with a paragraph separator)
    pos = 0
    for m in _NL.finditer(text):
        raw.append((pos, m.start(), m.group() == "\u2029"))
        pos = m.end()
    raw.append((pos, len(text), False))
    lines = [(*_line_info(text, s, e), par) for s, e, par in raw]

    # Wrap width: the 95th percentile of plain lines that another plain line follows.
    lens = sorted(
        ce - r[0]
        for (_, ce, k, par), nxt, r in zip(lines, lines[1:], raw, strict=False)
        if k == _PLAIN and nxt[2] == _PLAIN and not par
    )
    width = lens[int(0.95 * (len(lens) - 1))] if len(lens) >= 3 else _WRAP_MAX + 1
    wrapped = width <= _WRAP_MAX

    blocks: list[Block] = []
    start = -1  # content start of the open block, -1 when none
    end = 0
    item_indent = -1  # indentation of the open list item, -1 when not in an item
    prev_kind = _BLANK
    prev_par = False
    prev_ls = prev_ce = 0
    for (cs, ce, kind, par), (ls, _, _) in zip(lines, raw, strict=True):
        if kind == _BLANK:
            if start >= 0:
                blocks.append((start, end, prev_kind == _HEAD))
            start, item_indent, prev_kind, prev_par = -1, -1, _BLANK, False
            continue
        prev_len = prev_ce - prev_ls
        if (
            start < 0
            or prev_par
            or kind != _PLAIN
            or prev_kind == _HEAD
            or (not wrapped and prev_len > _WRAP_MAX)
        ):
            hard = True
        elif _starts_lower(text, cs, ce) or _ends_with_function_word(text, prev_ls, prev_ce):
            hard = False  # the sentence goes on
        elif (
            wrapped
            and prev_len + 1 + _first_word_len(text, cs) > width - _WRAP_TOL
            and prev_len <= width + _WRAP_SLACK
        ):  # the next word did not fit on the line: a soft wrap
            hard = False
        elif item_indent >= 0:  # an indented line continues the list item
            hard = cs - ls <= item_indent
        else:
            hard = text[prev_ce - 1] not in _SOFT_END
        if hard:
            if start >= 0:
                blocks.append((start, end, prev_kind == _HEAD))
            start = cs
            item_indent = cs - ls if kind == _ITEM_LINE else -1
        end = ce
        prev_kind, prev_par, prev_ls, prev_ce = kind, par, ls, ce
    if start >= 0:
        blocks.append((start, end, prev_kind == _HEAD))
    return blocks


# ----------------------------------------------------------------------------- punctuation

# Possessive quantifiers and the look-behind keep this linear on runs like "!!!!...".
_CAND = re.compile(
    r"(?<![.!?…‽⁇⁈⁉。！？])(?:"
    r"(?P<term>[.!?…‽⁇⁈⁉。！？]++)[\"'”’»›)\]}]*+(?P<ws>\s+)"
    r"|(?P<cjk>[。！？]++[」』”’）)\]]*+)(?=\S))"
)
_PREV = re.compile(r"\S{0,40}\Z")  # the token before the terminal punctuation
_NEXT = re.compile(r"[\"'“‘«‹(\[{¿¡„‚]*(\S{0,40})")  # openers, then the next token
_NUMBERING = re.compile(r"(?:\d{1,3}(?:\.\d{1,3})*|[A-Za-z]|[ivxlcIVXLC]{1,5})")
_DOTTED = re.compile(r"(?:[^\W\d_]{1,3}\.)+[^\W\d_]{1,3}")  # U.S, Ph.D, a.m, U.S.A
_SPACES = re.compile(r"\s*")
_LAYOUT_PREFIX = re.compile(r"[\s#*+•◦▪‣·–(-]*")

# Abbreviations that never end a sentence (lower case, no final period).
_NEVER_FINAL = frozenset(
    _words(
        """
    mr mrs ms mssrs messrs dr drs prof profs rev revd hon gen lt col sgt capt cpt cmdr cdr
    maj adm brig gov pres supt insp sen rep fr mme mlle mmes e.g i.e eg cf viz vs fig figs
    eq eqs eqn eqns sec secs tab tbl approx resp incl esp ref refs nr asst assoc pvt cpl
    lieut
    """
    )
)
# Abbreviations that may end a sentence: split only before a common sentence opener.
_AMBIGUOUS = frozenset(["al", "pp", "vol", "vols", "eds", "ca", "cit", "ibid", "est"])
# The same, but only in title case (else they are words or acronyms: "no.", "mass.", "KY.").
_AMBIGUOUS_CAPITALISED = frozenset(
    _words(
        """
    st mt ft co corp inc ltd jr sr bros esq dept univ assn jan feb mar apr jun jul aug sep
    sept oct nov dec no nos ed ch chap ave blvd rd op calif conn fla ariz colo okla tenn
    mich minn penn wash mass cal ind ill kan ky md mo neb nev va vt wis wyo ala ark del ga
    pa tex govt intl natl mfg div dist twp hwy bldg apt
    """
    )
)
# Abbreviations that take a number: "No. 5", "p. 12", "Fig. 3", "Jan. 5".
_BEFORE_NUMBER = frozenset(
    _words(
        """
    no nos nr fig figs eq eqs eqn sec secs tab tbl vol vols pp p ch chap art ref refs approx
    ca c op v vs ver ed item jan feb mar apr jun jul aug sep sept oct nov dec pt pts para
    paras
    """
    )
)
# Words that commonly open a sentence (lower-cased): the evidence that an ambiguous
# abbreviation or an initial was in fact the end of the previous sentence.
_OPENER_WORDS = frozenset(
    _words(
        """
    the a an this that these those it its he she they we i you his her their our my your in
    on at by for from with as after before during since when while although though however
    but and or so yet if there here some many most all both each one two three other such
    also then thus hence therefore moreover furthermore additionally later today currently
    according following despite unlike like between among under over what who whom whose
    which where why how not no yes only every another several what's it's he's she's they're
    we're i'm there's that's let until unless because once because instead meanwhile
    nevertheless nonetheless indeed still again now originally initially finally eventually
    subsequently previously recently first second third last next born located based known
    considered regarded named
    """
    )
)


def _core(token: str) -> str:
    """Lower-cased token without opening/closing punctuation."""
    return token.strip(_OPENERS + _CLOSERS).lower()


def _is_boundary(text: str, block_start: int, m: re.Match[str]) -> bool:
    """Does the terminal punctuation matched by ``m`` (whitespace follows it) end a sentence?"""
    term = m.group("term")
    nxt = _NEXT.match(text, m.end())
    assert nxt is not None  # the pattern can match the empty string
    word = nxt.group(1)
    if not word and nxt.end() < len(text):  # a lone quote or bracket: look one token further
        nxt = _NEXT.match(text, _SPACES.match(text, nxt.end()).end())  # type: ignore[union-attr]
        assert nxt is not None
        word = nxt.group(1)
    if not word:
        return False
    c = word[0]
    if c.islower():
        return False
    question = term.strip(".…") != ""  # ! ? ‽ 。 and friends, alone or mixed with dots
    if not c.isalnum() and (question or c in _NOT_A_START):
        return False  # '"Go!", he said', 'Mia! ", "Cats"', '(? -1730)'
    if question:
        return True
    if term != ".":  # an ellipsis ends a sentence only if a new one visibly starts
        return c.isupper() and _core(word).rstrip(",;:") in _OPENER_WORDS
    t0 = m.start("term")
    prev_m = _PREV.search(text, max(block_start, t0 - 40), t0)
    prev = prev_m.group() if prev_m else ""
    if not prev or not prev[-1].isalnum():  # "word)." or " ." -- no abbreviation here
        return True
    p0 = prev_m.start()  # type: ignore[union-attr]
    if (
        p0 - block_start <= 12
        and _NUMBERING.fullmatch(prev.lstrip(_OPENERS))
        and _LAYOUT_PREFIX.fullmatch(text, block_start, p0)
    ):
        return False  # "1. Item", "## 3. Results", "(a) ..." at the start of a block
    core = prev.lstrip(_OPENERS)
    low = core.lower()
    if low in _NEVER_FINAL:
        return False
    initial = len(core) == 1 and core.isalpha()
    abbrev = (
        initial
        or low in _AMBIGUOUS
        or (core.istitle() and low in _AMBIGUOUS_CAPITALISED)
        or _DOTTED.fullmatch(core) is not None
    )
    if c.isdigit():
        gap = text[m.end() : nxt.start(1)]
        bracket = "(" in gap or "[" in gap or "{" in gap
        return not (bracket or abbrev or low in _BEFORE_NUMBER)
    if not c.isalpha():
        return not abbrev
    if not abbrev:
        return True
    opener = _core(word).rstrip(",;:") in _OPENER_WORDS
    if initial:  # "J. R. R. Tolkien" (no) versus "vitamin C. It" (yes)
        return opener and not (len(word) == 2 and word[1] == ".")
    return opener


def _split_block(text: str, start: int, end: int, out: list[Span]) -> None:
    pos = start
    for m in _CAND.finditer(text, start, end):
        if m.group("cjk") is not None:
            cut = cut_next = m.end()
        elif m.end() >= end or not _is_boundary(text, start, m):
            continue
        else:
            cut, cut_next = m.start("ws"), m.end()
        add_trimmed(text, pos, cut, out)
        pos = cut_next
    add_trimmed(text, pos, end, out)


def add_trimmed(text: str, start: int, end: int, spans: list[Span]) -> None:
    """Append ``(start, end)`` to ``spans`` without its surrounding whitespace, if any text
    is left: how every sentence span is cut (and how the splitter benchmark trims others')."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))


# ----------------------------------------------------------------------------- public API


def split_sentences(text: str) -> list[Span]:
    """Sentence spans of ``text`` as sorted, non-overlapping ``(start, end)`` offsets."""
    spans: list[Span] = []
    for start, end, heading in layout_blocks(text):
        if heading:
            add_trimmed(text, start, end, spans)
        else:
            _split_block(text, start, end, spans)
    return spans


def split_sentences_batch(texts: Iterable[str]) -> list[list[Span]]:
    """``split_sentences`` over many texts (pure Python: threads would not help)."""
    return [split_sentences(t) for t in texts]


def sentence_texts(text: str) -> list[str]:
    """The sentences of ``text`` as strings (``text[a:b]`` for each span)."""
    return [text[a:b] for a, b in split_sentences(text)]
