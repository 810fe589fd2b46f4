"""The answer span at run time (issue 44, item 6): each sentence's best span obeys the contract
(inside the sentence, start <= end, at most MAX_SPAN_PIECES pieces, the best such pair), prune
returns the span of a kept sentence that ranks first (span probability x keep probability x
passage relevance) with character offsets that give its text, and a folder without a span head
reads exactly as before, with no span."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tagger_helpers import PASSAGES, QUESTION, bare

from ragsieve.tag.graph import add_span_head, drop_span_head, has_span_output
from ragsieve.tag.model import OnnxTagger, shipped_model_dir
from ragsieve.tag.prune import prune
from ragsieve.tag.span import (
    MAX_SPAN_PIECES,
    SpanTagged,
    best_spans,
    char_span,
    clauses,
    own_clause,
    piece_offsets,
    snap_span,
)
from ragsieve.types import SourceSpan


def piece_span(tokenizer: Any, text: str, start: int, end: int) -> tuple[int, int] | None:
    """The word pieces ``(first, last)`` of ``text`` that cover characters ``[start, end)``
    (an answer's location; None when no piece lies inside). The inverse of :func:`char_span`
    up to piece boundaries."""
    offsets = piece_offsets(tokenizer, text)
    inside = [k for k, (a, b) in enumerate(offsets) if a < end and b > start]
    return (inside[0], inside[-1]) if inside else None


def find_answer(text: str, answer: str) -> tuple[int, int] | None:
    """Characters ``[start, end)`` of the first occurrence of ``answer`` in ``text`` (case
    ignored), or None."""
    key = answer.strip().lower()
    at = text.lower().find(key) if key else -1
    return (at, at + len(key)) if at >= 0 else None


def _folder(root: Path, name: str) -> Path:
    out = root / name
    shutil.copytree(shipped_model_dir(), out)
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the shipped folder with a seeded linear span head, and one with none."""
    root = tmp_path_factory.mktemp("span")
    head, plain = _folder(root, "head"), _folder(root, "plain")
    rng = np.random.default_rng(7)
    add_span_head(head / "model.onnx", head / "model.onnx", [(rng.normal(size=(384, 2)), [0, 0])])
    drop_span_head(plain / "model.onnx", plain / "model.onnx")
    assert has_span_output(head / "model.onnx") and not has_span_output(plain / "model.onnx")
    return head, plain


def _brute(logits: np.ndarray, sent: np.ndarray, s: int, cap: int) -> tuple[int, int, float]:
    body = sent >= 0
    ls = logits[body, 0] - np.log(np.exp(logits[body, 0]).sum())
    le = logits[body, 1] - np.log(np.exp(logits[body, 1]).sum())
    at = np.flatnonzero(sent[body] == s)
    best = max((ls[i] + le[j], i - at[0], j - at[0]) for i in at for j in at if i <= j < i + cap)
    return int(best[1]), int(best[2]), float(np.exp(best[0]))


def test_each_sentence_gets_its_best_valid_span() -> None:
    rng = np.random.default_rng(3)
    # [CLS] q q [SEP] title | sentence 0 (5 pieces) | sentence 1 (40) | [SEP] pad
    sent = np.array([-1] * 5 + [0] * 5 + [1] * 40 + [-1] * 3)
    for cap in (MAX_SPAN_PIECES, 3):
        logits = rng.normal(size=(len(sent), 2)) * 3
        logits[sent < 0] = 50.0  # the question, title and padding are never an answer
        got = best_spans(logits, sent, cap)
        assert set(got) == {0, 1}
        for s, sp in got.items():
            first, last, score = _brute(logits, sent, s, cap)
            assert (sp.first, sp.last) == (first, last)
            assert sp.score == pytest.approx(score)
            assert 0 <= sp.first <= sp.last < sp.first + cap and 0 < sp.score <= 1
    assert best_spans(np.zeros((4, 2)), np.array([-1, -1, -1, -1])) == {}


def test_a_null_trained_head_scores_against_no_answer() -> None:
    """``null``: [CLS] joins both softmaxes, never as a span. The best spans stay where they
    were; their scores fall as the [CLS] logits rise, to near 0 where [CLS] dominates."""
    rng = np.random.default_rng(5)
    sent = np.array([-1] * 5 + [0] * 6 + [1] * 9 + [-1] * 2)
    logits = rng.normal(size=(len(sent), 2))
    plain = best_spans(logits, sent)
    scores = []
    for cls in (-50.0, 0.0, 3.0, 50.0):
        logits[0] = cls
        got = best_spans(logits, sent, null=True)
        assert {s: (sp.first, sp.last) for s, sp in got.items()} == {
            s: (sp.first, sp.last) for s, sp in plain.items()
        }
        scores.append(got[1].score)
    assert scores[0] == pytest.approx(plain[1].score)
    assert scores == sorted(scores, reverse=True) and scores[-1] < 1e-20
    assert best_spans(logits, sent) == plain  # without ``null`` [CLS] is never read


def test_characters_and_word_pieces_map_both_ways() -> None:
    from ragsieve.tag.encode import load_tokenizer

    tok = load_tokenizer(shipped_model_dir() / "tokenizer.json")
    sentence = "  Shirley Temple Black was an American actress, singer, dancer and diplomat."
    at = find_answer(sentence, "american ACTRESS")
    assert at is not None and sentence[at[0] : at[1]] == "American actress"
    pieces = piece_span(tok, sentence, *at)
    assert pieces is not None
    assert char_span(tok, sentence, *pieces) == at
    n = len(piece_offsets(tok, sentence))
    a, b = char_span(tok, sentence, 0, n - 1)
    assert sentence[a:b] == sentence.strip()
    assert find_answer(sentence, "Paris") is None and find_answer(sentence, " ") is None


def test_the_tagger_reads_a_span_per_sentence_with_words(folders: tuple[Path, Path]) -> None:
    head, plain = folders
    passages = [*PASSAGES, ("Notes", ["## Career", "She was born in 1928.", "12", "| |"])]
    from ragsieve.tag.encode import load_tokenizer
    from ragsieve.tag.model import is_heading
    from ragsieve.text import has_words

    tok = load_tokenizer(head / "tokenizer.json")
    with_span, without = OnnxTagger(head), OnnxTagger(plain)
    assert with_span.has_span and not without.has_span
    a, b = with_span.tag(QUESTION, passages), without.tag(QUESTION, passages)
    for (_, sents), x, y in zip(passages, a, b, strict=True):
        assert isinstance(x, SpanTagged) and not isinstance(y, SpanTagged)
        assert np.array_equal(x.probs, y.probs) and x.relevance == y.relevance
        assert len(x.spans) == len(sents)
        for s, sp in zip(sents, x.spans, strict=True):
            assert (sp is not None) == (has_words(s) and not is_heading(s))
            if sp is not None:
                n = len(piece_offsets(tok, s))
                assert 0 <= sp.first <= sp.last < min(n, sp.first + MAX_SPAN_PIECES)
    assert list(a[-1].probs[[0, 2, 3]]) == [0.0, 0.0, 0.0]  # heading and layout lines


def test_prune_returns_the_best_span_of_a_kept_sentence(folders: tuple[Path, Path]) -> None:
    head, plain = folders
    for stack in (True, False):
        got = prune(OnnxTagger(head), QUESTION, PASSAGES, bare(stack=stack))
        before = prune(OnnxTagger(plain), QUESTION, PASSAGES, bare(stack=stack))
        assert before.span is None
        assert got.kept == before.kept and got.trace == before.trace  # the span changes nothing
        span = got.span
        assert isinstance(span, SourceSpan) and span.doc_id == ""  # not located in an index
        assert (span.passage, span.sentence) in {(k.passage, k.sentence) for k in got.kept}
        sentence = PASSAGES[span.passage][1][span.sentence]
        assert span.text == sentence[span.start : span.end] and span.text.strip()
        assert 0 < span.score <= 1
        first = OnnxTagger(head).tag(QUESTION, PASSAGES)  # the question alone
        rank = {
            (k.passage, k.sentence): sp.score * k.prob * k.relevance
            for k in got.kept
            if (sp := first[k.passage].spans[k.sentence]) is not None  # type: ignore[attr-defined]
        }
        assert rank[(span.passage, span.sentence)] == max(rank.values())
        assert span.score == first[span.passage].spans[span.sentence].score  # type: ignore[attr-defined]


def test_the_shipped_tagger_points_at_the_answer() -> None:
    """The shipped model's span head (trained jointly with the encoder) finds a date in a plain
    sentence: a head exported against the wrong hidden state or offsets would not."""
    assert OnnxTagger().has_span
    passages = [
        (
            "Rosetta Stone",
            [
                "The decisive work came from the French scholar Jean-François Champollion.",
                "In 1822 he announced that hieroglyphs combined phonetic signs with signs for "
                "whole words.",
            ],
        )
    ]
    got = prune(
        OnnxTagger(),
        "In which year did Champollion announce the decipherment?",
        passages,
        bare(),
    )
    assert got.span is not None and got.span.text == "1822" and got.span.sentence == 1


@pytest.mark.parametrize(
    ("text", "head", "snapped"),
    [
        ("a 48-bit pattern delimits each block", "48", "48-bit"),  # stopped inside a word
        ("include \u2018<nettle/sha2.h>\u2019.", "\u2018<nettle/sha2.h>", "<nettle/sha2.h>"),
        (
            "link with -lhogweed -lnettle -lgmp",
            "lhogweed -lnettle -lgmp",
            "-lhogweed -lnettle -lgmp",
        ),
        ("He was born in Budapest, Hungary.", "Budapest", "Budapest"),  # the comma stays out
        ("Chiang Kai-shek (born 1887),", "1887", "1887"),  # an unpaired bracket and a comma
        ("It was Curtiz's film.", "Curtiz", "Curtiz"),  # the possessive stays out
        ("The director (Michael) said", "Michael", "Michael"),  # enclosing brackets go
        ("call f(x) now", "f(x", "f(x)"),  # a paired bracket inside stays
        ('He said "yes".', '"yes', "yes"),
        ("pass value=NULL and len=0.", "NULL and len=0", "value=NULL and len=0"),
    ],
)
def test_snapping_widens_a_span_to_whole_words_and_trims_its_ends(
    text: str, head: str, snapped: str
) -> None:
    start = text.index(head)
    a, b = snap_span(text, start, start + len(head))
    assert text[a:b] == snapped


def test_snapping_keeps_a_span_it_would_trim_away() -> None:
    assert snap_span('say "" now', 4, 6) == (4, 6)  # only quotes: nothing would be left
    assert snap_span("abc", 2, 1) == (2, 1) and snap_span("abc", 0, 9) == (0, 9)  # out of range


def test_prune_snaps_the_span_it_returns(folders: tuple[Path, Path]) -> None:
    """``span_snap`` (the default): the same sentence and score as without it, its characters
    :func:`snap_span` of the unsnapped span's, and the kept sentences unchanged."""
    head, _ = folders
    plain = prune(OnnxTagger(head), QUESTION, PASSAGES, bare(span_snap=False))
    snapped = prune(OnnxTagger(head), QUESTION, PASSAGES, bare())
    assert plain.span is not None and snapped.span is not None
    assert snapped.kept == plain.kept
    sentence = PASSAGES[plain.span.passage][1][plain.span.sentence]
    a, b = snap_span(sentence, plain.span.start, plain.span.end)
    assert (snapped.span.start, snapped.span.end) == (a, b)
    assert snapped.span.text == sentence[a:b] and snapped.span.score == plain.span.score


def test_the_clause_that_names_what_is_asked() -> None:
    s = "Voyager 2 was launched first, on 20 August 1977; Voyager 1 followed on 5 September 1977."
    at = s.index("20 August")
    assert clauses(s) == [(0, s.index(";")), (s.index("Voyager 1"), len(s))]
    # The span sits beside Voyager 2; the question asks about Voyager 1: the second clause.
    assert own_clause("When was Voyager 1 launched?", s, at, at + 14) == clauses(s)[1]
    # Asked about Voyager 2, the span's clause is right.
    assert own_clause("When was Voyager 2 launched?", s, at, at + 14) is None
    # A question with no qualified name, or a sentence of one clause, changes nothing.
    assert own_clause("When was the probe launched?", s, at, at + 14) is None
    one = "Voyager 2 was launched on 20 August 1977."
    assert own_clause("When was Voyager 1 launched?", one, 26, 40) is None
    # A clause that names neither leaves the span where it is.
    two = "It was launched on 20 August 1977, and the crew cheered."
    assert own_clause("When was Apollo 11 launched?", two, 19, 33) is None
