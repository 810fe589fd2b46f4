"""Tests for ragsieve.text.sentences: the span contract on any input, and tricky cases."""

from __future__ import annotations

import textwrap
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragsieve.text.sentences import sentence_texts, split_sentences, split_sentences_batch


def assert_contract(text: str, spans: list[tuple[int, int]]) -> None:
    prev_end = 0
    for a, b in spans:
        assert isinstance(a, int) and isinstance(b, int)
        assert prev_end <= a < b <= len(text), (spans, text)
        piece = text[a:b]
        assert not piece[0].isspace() and not piece[-1].isspace(), repr(piece)
        prev_end = b
    covered = [False] * len(text)
    for a, b in spans:
        covered[a:b] = [True] * (b - a)
    lost = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not lost, (lost[:5], text)


# ----------------------------------------------------------------------------- property tests

_SPECIAL = list(
    ".!?…。！？\"'“”‘’«»()[]{}#-*+•–—:;,0123456789aAzZéßΩЖ中文😀\u200b\x00\x07"
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u3000"
)
_TOKENS = [
    " ",
    "  ",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "\t",
    "\u2029",
    "\x0c",
    " \n ",
    "# ",
    "## ",
    "- ",
    "* ",
    "1. ",
    "12) ",
    "(a) ",
    "---",
    "Dr.",
    "Mr.",
    "e.g.",
    "i.e.",
    "U.S.",
    "et al.",
    "Fig.",
    "No.",
    "Inc.",
    "Jr.",
    "J.",
    "3.5",
    "1941.",
    "...",
    "…",
    ".",
    "!",
    "?",
    "?!",
    "。",
    '"',
    "'",
    ")",
    "(",
    "[",
    "]",
    "The",
    "He",
    "she",
    "word",
    "Word",
    "abc",
    "Hello",
    "BIBREF3",
    "(2019)",
    "[12]",
    ",",
    ";",
    ":",
    "and",
    "the",
    "x" * 130,
]

text_chars = st.text(alphabet=st.one_of(st.sampled_from(_SPECIAL), st.characters()), max_size=300)
text_tokens = st.lists(st.sampled_from(_TOKENS), max_size=80).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(text_chars, text_tokens))
def test_contract_holds_on_any_text(text: str) -> None:
    spans = split_sentences(text)
    assert_contract(text, spans)
    assert split_sentences(text) == spans  # deterministic


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(text_tokens, max_size=5))
def test_batch_and_texts_agree_with_single(texts: list[str]) -> None:
    batch = split_sentences_batch(texts)
    assert batch == [split_sentences(t) for t in texts]
    for t, spans in zip(texts, batch, strict=True):
        assert sentence_texts(t) == [t[a:b] for a, b in spans]


# ----------------------------------------------------------------------------- edge inputs


@pytest.mark.parametrize("text", ["", " ", "\n\n\t\r\n", "\u3000\xa0\u2029", "\x1c\x1d\x1e\x1f"])
def test_empty_and_whitespace_only(text: str) -> None:
    assert split_sentences(text) == []
    assert sentence_texts(text) == []


def test_offsets_point_into_the_original_text() -> None:
    text = "  Hello there.  Bye. "
    assert split_sentences(text) == [(2, 14), (16, 20)]


def test_control_characters_and_unicode_are_kept() -> None:
    text = "Ça va\x00 bien. Это тест. 中文。😀 Fin.\x07"
    spans = split_sentences(text)
    assert_contract(text, spans)
    assert sentence_texts(text) == ["Ça va\x00 bien.", "Это тест.", "中文。", "😀 Fin.\x07"]


def test_long_text_without_punctuation_is_one_span() -> None:
    text = "word " * 20_000
    assert split_sentences(text) == [(0, len(text) - 1)]


@pytest.mark.parametrize(
    "text",
    [
        "." * 200_000,
        "!" * 200_000 + "a",
        ". " * 100_000,
        "x\n" * 100_000,
        "\n" * 200_000,
        "- " * 100_000,
        "A." * 100_000,
        ("-" * 50_000 + " 1. A 2. B ") * 4,
    ],
)
def test_pathological_inputs_run_in_linear_time(text: str) -> None:
    t0 = time.perf_counter()
    spans = split_sentences(text)
    # A hang guard, not a speed check: quadratic behaviour would take many minutes.
    assert time.perf_counter() - t0 < 60
    assert_contract(text, spans)


# ----------------------------------------------------------------------------- tricky cases

CASES = [
    # abbreviations
    ("Dr. Smith arrived. He sat down.", ["Dr. Smith arrived.", "He sat down."]),
    ("Use tools, e.g. Hammers. Then rest.", ["Use tools, e.g. Hammers.", "Then rest."]),
    ("The capital, i.e. Paris, is big.", ["The capital, i.e. Paris, is big."]),
    (
        "He moved to the U.S. in 1990. The U.S. Army hired him.",
        ["He moved to the U.S. in 1990.", "The U.S. Army hired him."],
    ),
    (
        "She lives in the U.S. The weather is nice.",
        ["She lives in the U.S.", "The weather is nice."],
    ),
    (
        "Smith et al. (2019) proposed it. Jones et al. BIBREF3 extended it. "
        "See Lee et al. The end.",
        [
            "Smith et al. (2019) proposed it.",
            "Jones et al. BIBREF3 extended it.",
            "See Lee et al.",
            "The end.",
        ],
    ),
    (
        "See Fig. 3 for details. Fig. 4 shows more.",
        ["See Fig. 3 for details.", "Fig. 4 shows more."],
    ),
    ("Prof. Ng and Mr. Li met. They talked.", ["Prof. Ng and Mr. Li met.", "They talked."]),
    ("See pp. 12-15 and No. 7 for proofs.", ["See pp. 12-15 and No. 7 for proofs."]),
    ("Warner Bros. Pictures released it.", ["Warner Bros. Pictures released it."]),
    ("He works at Apple Inc. The stock rose.", ["He works at Apple Inc.", "The stock rose."]),
    ("Apple Inc. CEO Tim Cook spoke.", ["Apple Inc. CEO Tim Cook spoke."]),
    ("He earned a Ph.D. in 1965. He taught.", ["He earned a Ph.D. in 1965.", "He taught."]),
    ("(A.B. 1961) was his degree.", ["(A.B. 1961) was his degree."]),
    # decimals, numbers, initials
    (
        "The value is 3.5 percent. It rose to 4.25.",
        ["The value is 3.5 percent.", "It rose to 4.25."],
    ),
    ("He was born in 1941. 12 people came.", ["He was born in 1941.", "12 people came."]),
    ("J. R. R. Tolkien wrote it. He died.", ["J. R. R. Tolkien wrote it.", "He died."]),
    ("Written by F. Hugh Herbert.", ["Written by F. Hugh Herbert."]),
    ("Take vitamin C. It helps.", ["Take vitamin C.", "It helps."]),
    (
        "It ended (World War I). Led by him, they won.",
        ["It ended (World War I).", "Led by him, they won."],
    ),
    # ellipses
    ("It was... strange. Then it stopped.", ["It was... strange.", "Then it stopped."]),
    ("Wait… The door opened.", ["Wait…", "The door opened."]),
    ("Why, certainly … uh … Miss Jones.", ["Why, certainly … uh … Miss Jones."]),
    # quotes and brackets after the period
    ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
    ('"Stop!" he said. "Why?" she asked.', ['"Stop!" he said.', '"Why?" she asked.']),
    ("(See the appendix.) The end.", ["(See the appendix.)", "The end."]),
    ("He quit [sic.] Then he ran.", ["He quit [sic.]", "Then he ran."]),
    ('The show "Teen Titans Go!" is fun.', ['The show "Teen Titans Go!" is fun.']),
    ("What? no way. Yes!", ["What? no way.", "Yes!"]),
    ('He won. "Great," said Ann.', ["He won.", '"Great," said Ann.']),
    # layout: headings, lists, paragraphs, line breaks
    (
        "# Title\nFirst sentence. Second one.",
        ["# Title", "First sentence.", "Second one."],
    ),
    ("## What is it? (R1)\n\nText here.", ["## What is it? (R1)", "Text here."]),
    ("## 3. Results\nWe won.", ["## 3. Results", "We won."]),
    ("Introduction\nWe study things.", ["Introduction", "We study things."]),
    (" = History = \n The town grew.", ["= History =", "The town grew."]),
    (
        "Steps:\n- buy milk\n- drink it\n1. first\n2. second",
        ["Steps:", "- buy milk", "- drink it", "1. first", "2. second"],
    ),
    (
        "- a long item that\n  Continues here\n- next",
        ["- a long item that\n  Continues here", "- next"],
    ),
    ("(a) one thing\n(b) another", ["(a) one thing", "(b) another"]),
    ("1. First item. It has two sentences.", ["1. First item.", "It has two sentences."]),
    ("First para without period\n\nSecond para", ["First para without period", "Second para"]),
    ("Text above\n---\nText below", ["Text above", "---", "Text below"]),
    ("Line one.\r\nLine two.\r\n\r\nPara three", ["Line one.", "Line two.", "Para three"]),
    ("A sentence broken\nacross lines.", ["A sentence broken\nacross lines."]),
    ("Dear John,\nThanks for the letter.", ["Dear John,\nThanks for the letter."]),
    ("Para one\u2029Para two", ["Para one", "Para two"]),
    ("你好。世界！好", ["你好。", "世界！", "好"]),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_tricky_cases(text: str, expected: list[str]) -> None:
    spans = split_sentences(text)
    assert_contract(text, spans)
    assert [text[a:b] for a, b in spans] == expected


def test_newline_separated_paragraphs_split_at_every_newline() -> None:
    paras = [
        "The first paragraph is long enough to be a paragraph and not a wrapped line of prose, "
        "and it ends without any punctuation at all",
        "where the second one starts in lower case, as formula-stripped text often does, and "
        "goes on for long enough to be a paragraph too.",
        "Short last one.",
    ]
    text = "\n".join(paras)
    assert sentence_texts(text) == paras


def test_hard_wrapped_prose_is_joined_back() -> None:
    sentences = [
        "Brevet Lieutenant Commander David Farragut Strykalski III of the Tellurian Wing stood "
        "ankle deep in the viscous mud of Venusport Base and surveyed his new command.",
        "The hot, slimy, greenish rain that drenched Venusport for two-thirds of the day had "
        "stopped at last, but now a fog was rising from the surrounding swampland Strike hated.",
        "Visibility was dropping fast, and soon Captain Evans and Officer Graham would need "
        "porto-sonar sets to find the way about the surface of Venus at all.",
    ]
    paragraph = " ".join(sentences)
    for width in (60, 72, 79):
        wrapped = textwrap.fill(paragraph, width=width)
        text = f"Chapter One\n\n{wrapped}\n\n{wrapped}"
        got = [" ".join(s.split()) for s in sentence_texts(text)]
        assert got == ["Chapter One", *sentences, *sentences], width


def test_heading_like_short_line_inside_wrapped_text() -> None:
    body = textwrap.fill("It was a dark and stormy night on the coast. " * 6, width=70)
    text = f"{body}\nTHE SECOND PART\n{body}"
    texts = sentence_texts(text)
    assert "THE SECOND PART" in texts
