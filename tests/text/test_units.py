"""Units without words are layout, never evidence: the predicate, and the pruner that applies
it with the shipped tagger (issue 44, item 3)."""

from __future__ import annotations

import pytest
from tagger_helpers import bare

from ragsieve.tag.model import OnnxTagger
from ragsieve.tag.prune import prune
from ragsieve.text import has_words, sentence_texts
from ragsieve.text.units import is_navigation

JUNK = [
    "9",
    "14",
    "|",
    "| |",
    "|---|---|",
    "---",
    "```",
    "```python",
    "~~~",
    "3 / 12",
    "- 7 -",
    "4\nH",
    "(a)",
    # table-of-contents lines: their words name a section found elsewhere (a techdocs-test
    # question kept "84 / 7.7.3.2 ECDSA . . . ." from a PDF's contents pages)
    "84\n7.7.3.2 ECDSA . . . . . . . . . . . . . . . .",
    "Contents .......... 3",
]
WORDS = [
    "Miscellanea",
    "Page 3",
    "-k",
    "- `%r`",
    "- `M`",
    "是",
    "BZ_OK",
    "x86 only",
    "He paused... then left.",  # an ellipsis is not a leader
    "Wait.... what?",
    "Version 1.2.3.4.5 is out.",
]


@pytest.mark.parametrize("unit", JUNK)
def test_a_unit_without_words_is_junk(unit: str) -> None:
    assert not has_words(unit)


@pytest.mark.parametrize("unit", WORDS)
def test_a_unit_with_a_word_is_text(unit: str) -> None:
    assert has_words(unit)


def test_markdown_layout_splits_into_units_the_predicate_drops() -> None:
    text = (
        "The pilot boards at the outer buoy.\n\n|\n\n```\n\n9\n\n"
        "| tide | height |\n|---|---|\n| high | 4.2 m |\n\n14"
    )
    units = sentence_texts(text)
    assert "9" in units and "14" in units and "|" in units  # the splitter keeps them apart
    kept = [u for u in units if has_words(u)]
    assert kept[0] == "The pilot boards at the outer buoy."
    assert any("tide" in u for u in kept)  # a table with words is text
    assert not {"9", "14", "|", "```"} & set(kept)


@pytest.fixture(scope="module")
def tagger() -> OnnxTagger:
    return OnnxTagger()


def test_the_pruner_never_keeps_a_unit_without_words(tagger: OnnxTagger) -> None:
    question = "How much memory does bunzip2 need for the default block size?"
    sents = [
        "15",
        "For files compressed with the default 900k block size, bunzip2 will require about "
        "3700 kbytes to decompress.",
        "|",
        "16",
        "Decompression speed is also halved.",
    ]
    for stack in (True, False):
        out = prune(tagger, question, [("bzip2 manual", sents)], bare(threshold=0.01, stack=stack))
        kept = [k.text for k in out.kept]
        assert any("3700 kbytes" in t for t in kept)
        assert not {"15", "16", "|"} & set(kept), kept
        assert [float(p) for i, p in enumerate(out.tagged[0].probs) if i in (0, 2, 3)] == [0] * 3
    # min_keep takes a unit with words even when nothing reaches the threshold
    only = prune(
        tagger, question, [("bzip2 manual", ["9", "Speed is halved.", "|"])], bare(threshold=0.99)
    )
    assert [k.text for k in only.kept] == ["Speed is halved."]


def test_navigation_lines_and_lone_headings_are_not_evidence() -> None:
    for t in (
        "Next: The Format String, Up: Invoking time   [Contents][Index]",
        "Previous: Setting Format, Up: Resource Accounting",
        "[ Contents ]",
        "Next: Measuring Program Resource Use \\[Contents\\]\\[Index\\]",
        "OPTIONS",
        "SEE ALSO",
        "EXIT STATUS:",
    ):
        assert is_navigation(t) and not has_words(t), t
    for t in (
        "-k --keep",
        "Keep (don't delete) input files during compression.",
        "The NEXT: field holds the next record.",
        "Up: one label alone is a word, not navigation.",
        "BSD licence applies.",
    ):
        assert not is_navigation(t) and has_words(t), t
