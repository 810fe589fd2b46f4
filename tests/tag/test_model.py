"""The shipped evidence tagger (int8 ONNX), run as users run it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragsieve.errors import ConfigError
from ragsieve.tag.model import OnnxTagger, shipped_model_dir, shipped_model_present

ROSETTA = [
    "The Greek text could be read at once, which gave scholars a translation of the other two "
    "scripts.",
    "Thomas Young, an English polymath, showed in 1814 that some hieroglyphs wrote the sounds of "
    "a royal name, Ptolemy, enclosed in an oval ring called a cartouche.",
    "The decisive work came from the French scholar Jean-François Champollion.",
    "In 1822 he announced that hieroglyphs combined phonetic signs with signs for whole words, "
    "and he used his knowledge of Coptic, the late form of the Egyptian language, to read them.",
]
BEES = [
    "A honey bee colony has one queen, a few hundred drones and tens of thousands of workers.",
    "Workers build the comb from wax that they secrete from glands on their abdomens.",
]
QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


@pytest.fixture(scope="module")
def tagger() -> OnnxTagger:
    return OnnxTagger()


def test_shipped_model_is_small_and_documented() -> None:
    d = shipped_model_dir()
    assert shipped_model_present()
    assert (d / "model.onnx").stat().st_size < 30e6
    card = (d / "MODEL_CARD.md").read_text("utf-8")
    assert "sha256" in card and "Never read" in card
    conf = json.loads((d / "tagger_config.json").read_text("utf-8"))
    assert 0 < conf["threshold"] < 1 and conf["max_length"] >= 128


def test_pronoun_sentence_is_kept_in_context(tagger: OnnxTagger) -> None:
    """The sentence with the year says "he": read in its passage, it is kept."""
    rosetta, bees = tagger.tag(QUESTION, [("Rosetta Stone", ROSETTA), ("Honey bees", BEES)])
    assert rosetta.probs.shape == (4,) and bees.probs.shape == (2,)
    assert ((rosetta.probs >= 0) & (rosetta.probs <= 1)).all()
    assert int(np.argmax(rosetta.probs)) == 3
    assert rosetta.probs[3] >= tagger.threshold
    assert bees.probs.max() < tagger.threshold
    assert rosetta.relevance > bees.relevance


def test_a_passage_scores_the_same_alone_or_in_a_pool(tagger: OnnxTagger) -> None:
    """One window per model run (the default): a passage's tags do not depend on its pool.
    In batches, dynamic int8 quantisation scales activations per batch: close, not equal."""
    alone = tagger.tag(QUESTION, [("Rosetta Stone", ROSETTA)])[0]
    pooled = tagger.tag(QUESTION, [("Honey bees", BEES), ("Rosetta Stone", ROSETTA)])[1]
    assert tagger.batch_size == 1
    assert alone.probs.tolist() == pooled.probs.tolist()
    assert alone.relevance == pooled.relevance
    batched = OnnxTagger(batch_size=16)
    in_batch = batched.tag(QUESTION, [("Honey bees", BEES), ("Rosetta Stone", ROSETTA)])[1]
    assert np.abs(alone.probs - in_batch.probs).max() < 0.1
    assert alone.kept(tagger.threshold) == in_batch.kept(tagger.threshold)


def test_tags_are_the_same_with_one_run_at_a_time(tagger: OnnxTagger, monkeypatch) -> None:
    """Windows run two at a time (``embed.onnx.run_each``), each still alone: the tags equal
    those of one run after another."""
    import ragsieve.embed.onnx as onnx

    pool = [("Honey bees", BEES), ("Rosetta Stone", ROSETTA), ("Bees again", BEES[::-1])]
    two = tagger.tag(QUESTION, pool)
    monkeypatch.setattr(onnx, "RUN_WORKERS", 1)
    one = tagger.tag(QUESTION, pool)
    assert [t.probs.tolist() for t in two] == [t.probs.tolist() for t in one]
    assert [t.relevance for t in two] == [t.relevance for t in one]


def test_empty_input_and_missing_model(tmp_path) -> None:
    assert OnnxTagger().tag("q", []) == []
    with pytest.raises(ConfigError, match="train-tagger"):
        OnnxTagger(tmp_path).tag("q", [("", ["a sentence."])])
    with pytest.raises(ConfigError, match="variant"):
        OnnxTagger(variant="fp16")


def test_pooled_states_come_with_the_same_tags(tagger: OnnxTagger) -> None:
    pooled = OnnxTagger(pooled=True)
    passages = [("Rosetta Stone", ROSETTA), ("", ["## Bees", *BEES])]
    a, b = tagger.tag(QUESTION, passages), pooled.tag(QUESTION, passages)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x.probs, y.probs) and x.relevance == y.relevance
        assert x.pooled is None and y.pooled is not None and y.pooled.shape == (384,)
    assert not np.allclose(b[0].pooled, b[1].pooled)


def test_a_sentence_without_words_reads_zero_and_leaves_its_neighbours(
    tagger: OnnxTagger,
) -> None:
    """Layout lines (a page number, a rule, a fence: issue 44 item 3) get probability 0 from
    the tagger itself, so every reading (prune's hops, the stacker's fit) sees 0; they are
    still read with their neighbours, whose tags are the model's."""
    from ragsieve.text import has_words

    sents = [ROSETTA[2], "12", "| |", ROSETTA[3], "```"]
    (got,) = tagger.tag(QUESTION, [("Rosetta Stone", sents)])
    assert [not has_words(s) for s in sents] == [False, True, True, False, True]
    assert list(got.probs[[1, 2, 4]]) == [0.0, 0.0, 0.0]
    assert got.probs[3] > 0.5 and got.probs[0] > 0
