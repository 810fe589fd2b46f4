"""Pruning with the shipped tagger: threshold, minimum kept, second hop."""

from __future__ import annotations

import pytest

from ragsieve.errors import ConfigError
from ragsieve.tag.model import OnnxTagger
from ragsieve.tag.prune import prune

FILM = [
    "Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss Archer.",
    "It was directed by Richard Wallace.",
]
TEMPLE = [
    "Shirley Temple Black was an American actress, singer, dancer and diplomat.",
    "As an adult she served as Chief of Protocol of the United States.",
]
OTHER = ["The Eiffel Tower was completed in 1889 for the World's Fair in Paris."]
QUESTION = (
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?"
)
PASSAGES = [("Eiffel Tower", OTHER), ("Kiss and Tell", FILM), ("Shirley Temple", TEMPLE)]


@pytest.fixture(scope="module")
def tagger() -> OnnxTagger:
    return OnnxTagger()


def test_threshold_orders_and_nests(tagger: OnnxTagger) -> None:
    low = prune(tagger, QUESTION, PASSAGES, threshold=0.05)
    high = prune(tagger, QUESTION, PASSAGES, threshold=0.6)
    as_set = lambda p: {(k.passage, k.sentence) for k in p.kept}  # noqa: E731
    assert as_set(high) <= as_set(low)
    assert all(k.prob >= 0.6 for k in high.kept[1:]) or len(high.kept) == 1
    rel = [k.relevance for k in low.kept]
    assert rel == sorted(rel, reverse=True)  # most relevant passage first
    for p in {k.passage for k in low.kept}:  # source order inside a passage
        idx = [k.sentence for k in low.kept if k.passage == p]
        assert idx == sorted(idx)
    assert (0, 0) not in as_set(low)  # the Eiffel Tower says nothing about the question


def test_min_keep_never_leaves_the_context_empty(tagger: OnnxTagger) -> None:
    out = prune(tagger, "What is the boiling point of mercury?", [("Eiffel Tower", OTHER)], 0.99)
    assert len(out.kept) == 1
    none = prune(tagger, "What is the boiling point of mercury?", [("", OTHER)], 0.99, min_keep=0)
    assert none.kept == []


def test_second_hop_reads_the_others_with_the_bridge(tagger: OnnxTagger) -> None:
    one = prune(tagger, QUESTION, PASSAGES, hops=1)
    two = prune(tagger, QUESTION, PASSAGES, hops=2)
    assert "hop" not in one.trace
    hop = two.trace["hop"]
    assert hop is not None and hop["passages"] == 2 and hop["query_added"]
    for a, b in zip(one.tagged, two.tagged, strict=True):  # a hop never lowers a probability
        assert (b.probs >= a.probs - 1e-9).all()
    assert hop["query_added"] in " ".join(FILM)  # the bridge: the film's kept sentence
    assert any(k.passage == 1 for k in two.kept)


def test_bad_options() -> None:
    t = OnnxTagger()
    with pytest.raises(ConfigError, match="threshold"):
        prune(t, "q", PASSAGES, threshold=1.5)
    with pytest.raises(ConfigError, match="hops"):
        prune(t, "q", PASSAGES, hops=3)
