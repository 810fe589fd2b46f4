"""Sentence splitting: layout rules + abbreviation-aware punctuation rules (pure Python).

Choice (measured by ``benchmarks/bench_splitter.py``; table in
``benchmarks/results/splitter.md``): our own rule-based splitter. Against HotpotQA's
sentence gold (25k boundaries) it scores boundary F1 0.000 dev / 0.000 held-out, against
pysbd 0.000 / 0.000, blingfire 0.000 / 0.000 and NLTK punkt 0.000 / 0.000, and it runs at
about 0.0 M chars/s on SQuAD + QASPER (pysbd: 0.00, blingfire: 0.0). It is also the only one
of them that honours the layout rules below and leaves hard-wrapped prose alone.

Contract: ``split_sentences(text)`` returns sorted, non-overlapping ``(start, end)`` character
spans; each span's text is non-empty and has no leading/trailing whitespace; every
non-whitespace character of ``text`` lies in exactly one span. Spans are only ever produced by
cutting ``text`` and trimming whitespace (``str.isspace``), so the contract holds for any input.

How it works:

1. Layout. The text is cut into *blocks* at blank lines, before and after Markdown headings
   (``# Title``) and horizontal rules, before list items (``- x``, ``* x``, ``1. x``, ``a) x``,
   ``(iv) x``) and at the end of a list item unless the next line continues it (indented,
   starting in lower case, or a forced wrap). Any other single line break is kept only when
   it looks intentional: the next line does not start in lower case, the line does not end
   with ``,``/``;``/a dash, and the break was not forced by wrapping. A break is *forced* when
   the document is hard-wrapped (95th percentile of its line lengths <= 120) and the next
   word would not have fitted on the line. So short heading-like lines ("Introduction",
   "= History =") end a sentence, one-paragraph-per-line text splits at every newline, and
   prose wrapped at 70 columns is joined back.
2. Punctuation, inside each block. Candidates are ``.``, ``!``, ``?``, ``…`` (runs of them),
   then closing quotes/brackets, then whitespace. ``!``/``?`` end a sentence unless the next
   word is lower case. A period ends one unless the next word is lower case, the word before
   is a title or never-final abbreviation (Dr., Prof., e.g., i.e., cf., vs., Fig., Eq.), or it
   is ambiguous -- an initial (``J.``), a dotted acronym (``U.S.``, ``Ph.D.``), or a
   sometimes-final abbreviation (``et al.``, ``Inc.``, ``Jr.``, ``St.``, months) -- and the
   next word is not a common sentence opener ("The", "He", "In", ...). Before a digit a period
   ends a sentence unless it follows a number-taking abbreviation (No., p., pp., Fig., Vol.)
   or the digit sits in a bracket (``et al. (2019)``, ``[12]``). Decimals (``3.5``) and
   ``U.S.A.`` never reach the rules because no whitespace follows their inner periods.
   Chinese/Japanese ``。！？`` end a sentence without any following space.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["sentence_texts", "split_sentences", "split_sentences_batch"]

Span = tuple[int, int]

# ----------------------------------------------------------------------------- layout

# Everything str.splitlines() treats as a line break. U+2029 is a paragraph separator.
_NL = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_MD_HEADING = re.compile(r"#{1,6}(?:\s|$)")
_HRULE = re.compile(r"(?:[-=_*~+#]\s*){3,}")
_ITEM = re.compile(
    r"(?:[-*+•◦▪‣·–]|\d{1,3}[.)]|[A-Za-z]\)|\((?:\d{1,3}|[A-Za-z]|[ivxlcIVXLC]{1,5})\))\s+\S"
)
_OPENERS = "\"'“‘«‹([{¿¡„‚"
_CLOSERS = "\"'”’»›)]}"
_SOFT_END = ",;-‐‑–—/&+=("  # a line ending in one of these continues on the next line
_WRAP_MAX = 120  # a document whose lines are longer than this is not hard-wrapped
_WRAP_SLACK = 8  # lines this much longer than the wrap width are not wrapped lines

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


def _first_word_len(text: str, cs: int, ce: int) -> int:
    i = cs
    while i < ce and not text[i].isspace():
        i += 1
    return i - cs


def _starts_lower(text: str, cs: int, ce: int) -> bool:
    i = cs
    while i < ce and text[i] in _OPENERS:
        i += 1
    return i < ce and text[i].islower()


def _blocks(text: str) -> list[Span]:
    """Cut ``text`` into blocks at hard layout breaks; sentences never cross a block edge."""
    if _NL.search(text) is None:
        return [(0, len(text))]
    raw: list[tuple[int, int, bool]] = []  # (start, end, ends with a paragraph separator)
    pos = 0
    for m in _NL.finditer(text):
        raw.append((pos, m.start(), m.group() == "\u2029"))
        pos = m.end()
    raw.append((pos, len(text), False))
    lines = [(*_line_info(text, s, e), par) for s, e, par in raw]

    # Wrap width: the 95th percentile of plain lines that another plain line follows.
    lens = sorted(
        ce - cs
        for (cs, ce, k, par), nxt in zip(lines, lines[1:], strict=False)
        if k == _PLAIN and nxt[2] == _PLAIN and not par
    )
    width = lens[int(0.95 * (len(lens) - 1))] if len(lens) >= 3 else _WRAP_MAX + 1
    wrapped = width <= _WRAP_MAX

    blocks: list[Span] = []
    start = -1  # content start of the open block, -1 when none
    end = 0
    item_indent = -1  # indentation of the open list item, -1 when not in an item
    prev_kind = _BLANK
    prev_par = False
    prev_cs = prev_ce = 0
    for (cs, ce, kind, par), (ls, _, _) in zip(lines, raw, strict=True):
        if kind == _BLANK:
            if start >= 0:
                blocks.append((start, end))
            start, item_indent, prev_kind, prev_par = -1, -1, _BLANK, False
            continue
        hard = start < 0 or prev_par or kind != _PLAIN or prev_kind == _HEAD
        if not hard:
            lower = _starts_lower(text, cs, ce)
            forced = (
                wrapped
                and (prev_ce - prev_cs) + 1 + _first_word_len(text, cs, ce) > width
                and prev_ce - prev_cs <= width + _WRAP_SLACK
            )
            if item_indent >= 0:
                hard = not (lower or forced or cs - ls > item_indent)
            else:
                hard = not (lower or forced or text[prev_ce - 1] in _SOFT_END)
        if hard:
            if start >= 0:
                blocks.append((start, end))
            start = cs
            item_indent = cs - ls if kind == _ITEM_LINE else -1
        end = ce
        prev_kind, prev_par, prev_cs, prev_ce = kind, par, cs, ce
    if start >= 0:
        blocks.append((start, end))
    return blocks


# ----------------------------------------------------------------------------- punctuation

_CAND = re.compile(
    r"(?P<term>[.!?…‽⁇⁈⁉。！？]+)[\"'”’»›)\]}]*(?P<ws>\s+)|(?P<cjk>[。！？]+[」』”’）)\]]*)(?=\S)"
)
_PREV = re.compile(r"\S{0,40}\Z")  # the token before the terminal punctuation
_NEXT = re.compile(r"[\"'“‘«‹(\[{¿¡„‚]*(\S{0,40})")  # openers, then the next token
_NUMBERING = re.compile(r"(?:\d{1,3}(?:\.\d{1,3})*|[A-Za-z]|[ivxlcIVXLC]{1,5})")
_DOTTED = re.compile(r"(?:[^\W\d_]{1,3}\.)+[^\W\d_]{1,3}")  # U.S, Ph.D, a.m, U.S.A
_LAYOUT_PREFIX = re.compile(r"[\s#*+•◦▪‣·–(-]*")

# Abbreviations that never end a sentence (lower case, no final period).
_NEVER_FINAL = frozenset(
    """mr mrs ms mssrs messrs dr drs prof profs rev revd hon gen lt col sgt capt cpt cmdr
    cdr maj adm brig gov pres supt insp sen rep fr mme mlle mmes e.g i.e eg cf viz vs fig
    figs eq eqs eqn eqns sec secs tab tbl approx resp incl esp ref refs nr""".split()
)
# Abbreviations that may end a sentence: split only before a common sentence opener.
_AMBIGUOUS = frozenset(
    """al st mt ft co corp inc ltd jr sr bros esq dept univ assn est jan feb mar apr jun jul
    aug sep sept oct nov dec no nos vol vols pp ch chap ed eds ave blvd rd ca op cit ibid
    calif conn fla ariz colo okla tenn mich minn penn wash mass cal ind ill kan ky md
    mo neb nev va vt wis wyo ala ark del ga pa tex""".split()
)
# Abbreviations that take a number: "No. 5", "p. 12", "Fig. 3", "Jan. 5".
_BEFORE_NUMBER = frozenset(
    """no nos nr fig figs eq eqs eqn sec secs tab tbl vol vols pp p ch chap art ref refs
    approx ca c op v vs ver ed item jan feb mar apr jun jul aug sep sept oct nov dec
    pt pts para paras""".split()
)
# Words that commonly open a sentence (lower-cased): the evidence that an ambiguous
# abbreviation or an initial was in fact the end of the previous sentence.
_OPENERS_WORDS = frozenset(
    """the a an this that these those it its he she they we i you his her their our my your
    in on at by for from with as after before during since when while although though
    however but and or so yet if there here some many most all both each one two three
    other such also then thus hence therefore moreover furthermore additionally later
    today currently according following despite unlike like between among under over
    what who whom whose which where why how not no yes only every another several
    what's it's he's she's they're we're i'm there's that's let until unless because
    once because instead meanwhile nevertheless nonetheless indeed still again now
    originally initially finally eventually subsequently previously recently first second
    third last next born located based known considered regarded named""".split()
)


def _core(token: str) -> str:
    """Lower-cased token without opening/closing punctuation."""
    return token.strip(_OPENERS + _CLOSERS).lower()


def _is_boundary(text: str, block_start: int, m: re.Match[str]) -> bool:
    term = m.group("term")
    nxt = _NEXT.match(text, m.end())
    assert nxt is not None  # the pattern can match the empty string
    word = nxt.group(1)
    opened = nxt.end(0) - len(word) > m.end()  # an opening quote/bracket before the word
    if not word:
        return False
    c = word[0]
    if c.islower():
        return False
    if "." not in term or "?" in term or "!" in term:
        return True  # ! ? ‽ and friends: next word is not lower case
    t0 = m.start("term")
    prev_tok = _PREV.search(text, max(block_start, t0 - 40), t0)
    prev = prev_tok.group() if prev_tok else ""
    core = _core(prev)
    if len(term) > 1:  # ellipsis: a sentence ends only if a new one visibly starts
        return c.isupper() and _core(word).rstrip(",;:") in _OPENERS_WORDS
    if prev_tok is not None and _NUMBERING.fullmatch(prev.strip(_OPENERS + _CLOSERS)):
        # "1. Item", "## 3. Results", "(a) ..." at the start of a block: numbering, not a stop
        if _LAYOUT_PREFIX.fullmatch(text, block_start, prev_tok.start()):
            return False
    if core in _NEVER_FINAL:
        return False
    if c.isdigit():
        return not (opened or core in _BEFORE_NUMBER or (len(core) == 1 and core.isalpha()))
    if not c.isalpha():
        return True
    opener = _core(word).rstrip(",;:") in _OPENERS_WORDS
    if len(core) == 1 and core.isalpha():  # an initial, "J. R. R. Tolkien", "vitamin C."
        nxt_is_initial = len(word) == 2 and word[1] == "."
        return opener and not nxt_is_initial
    if core in _AMBIGUOUS or _DOTTED.fullmatch(core):
        return opener
    return True


def _split_block(text: str, start: int, end: int, out: list[Span]) -> None:
    pos = start
    for m in _CAND.finditer(text, start, end):
        if m.group("cjk") is not None:
            cut = cut_next = m.end()
        elif m.end() >= end or not _is_boundary(text, start, m):
            continue
        else:
            cut, cut_next = m.start("ws"), m.end()
        _add(text, pos, cut, out)
        pos = cut_next
    _add(text, pos, end, out)


def _add(text: str, start: int, end: int, spans: list[Span]) -> None:
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
    for start, end in _blocks(text):
        _split_block(text, start, end, spans)
    return spans


def split_sentences_batch(texts: Iterable[str]) -> list[list[Span]]:
    """``split_sentences`` over many texts (pure Python: threads would not help)."""
    return [split_sentences(t) for t in texts]


def sentence_texts(text: str) -> list[str]:
    """The sentences of ``text`` as strings (``text[a:b]`` for each span)."""
    return [text[a:b] for a, b in split_sentences(text)]
