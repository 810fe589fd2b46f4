"""Look-alike answers (``ragsieve.tag.fit.entity``): which training windows count as hard span
examples, on the repository's own training data and on the wrong-entity case that prompted it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsieve.tag.fit.data import Example, SourceSizes, build_examples
from ragsieve.tag.fit.entity import add_look_alikes, look_alike
from ragsieve.tag.fit.recipe import TaggerTrainConfig, mix

VOYAGER = "Voyager 2 was launched first, on 20 August 1977; Voyager 1 followed on 5 September 1977."


def _ex(question: str, answer: str, sentences: list[str], labels: list[int]) -> Example:
    return Example(question, "Voyager", sentences, labels, 1, "squad_train", "train", answer)


def test_a_date_beside_another_date_is_a_look_alike() -> None:
    """The wrong-entity case: the gold sentence holds the answer's date and another date."""
    assert look_alike(_ex("When was Voyager 1 launched?", "5 September 1977", [VOYAGER], [1]))
    assert look_alike(_ex("Which probe was launched first?", "Voyager 2", [VOYAGER], [1]))
    # the answer is found in its sentence whatever its case, as the span's gold is
    assert look_alike(_ex("When was Voyager 1 launched?", "5 september 1977", [VOYAGER], [1]))


def test_a_lone_value_a_negative_or_a_non_gold_sentence_is_not() -> None:
    lone = "Voyager 1 was launched on 5 September 1977 from Cape Canaveral."
    assert not look_alike(_ex("When was Voyager 1 launched?", "5 September 1977", [lone], [1]))
    # the other value sits in a sentence that is not gold
    left = "It left on 5 September 1977."
    ex = _ex("When was it launched?", "5 September 1977", [left, VOYAGER], [1, 0])
    assert not look_alike(ex)
    # a negative passage, or no answer text, is never a span example
    neg = Example("When?", "t", [VOYAGER], [0], 0, "squad_train", "train", "")
    assert not look_alike(neg)
    # a number the question names is not a look-alike ("Voyager 1" asked, "1977" answered)
    named = "Voyager 1 flew in 1977."
    assert not look_alike(_ex("In which year did Voyager 1 fly?", "1977", [named], [1]))
    # a lower-case answer has no kind to confuse
    carried = "It carried a golden record to Jupiter."
    assert not look_alike(_ex("What did it carry?", "a golden record", [carried], [1]))


@pytest.fixture(scope="module")
def examples(shared_data: Path) -> list[Example]:
    return build_examples(shared_data, SourceSizes(squad_train=60, hotpot=4), 13)


def test_repeats_add_only_look_alikes_and_mix_applies_them(examples: list[Example]) -> None:
    """On real SQuAD and HotpotQA training examples: some are look-alikes, not most; a repeat
    of 3 adds each of them twice, and :func:`mix` leaves the data as it was at 1."""
    hard = [e for e in examples if look_alike(e)]
    with_answer = [e for e in examples if e.answer]
    assert 0 < len(hard) < len(with_answer)
    assert add_look_alikes(examples, 1) == examples
    out = add_look_alikes(examples, 3)
    assert len(out) == len(examples) + 2 * len(hard)
    assert all(look_alike(e) for e in out[len(examples) :])
    plain = mix(examples, TaggerTrainConfig(), 13)
    more = mix(examples, TaggerTrainConfig(look_alike_repeat=2), 13)
    assert more[: len(plain)] == plain
    assert len(more) - len(plain) == sum(look_alike(e) for e in plain)
