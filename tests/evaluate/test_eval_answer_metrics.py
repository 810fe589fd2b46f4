"""Answer metrics against hand-computed cases, and EM/F1 against the official SQuAD v1.1 code."""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from pathlib import Path

import pytest

from ragsieve.errors import ConfigError
from ragsieve.evaluate import (
    EvalQuestion,
    accuracy_mc,
    answer_metrics,
    bleu_1,
    bleu_4,
    exact_match,
    f1,
    meteor,
    meteor_nosyn,
    normalize_answer,
    parse_choice,
    rouge_1,
    rouge_l,
)
from ragsieve.metrics import wordnet_available

# --------------------------------------------------------------------------- official SQuAD v1.1
# Transcribed from the official evaluate-v1.1.py (Rajpurkar et al.), used as the reference.


def _official_normalize_answer(s: str) -> str:
    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text: str) -> str:
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def _official_f1(prediction: str, ground_truth: str) -> float:
    prediction_tokens = _official_normalize_answer(prediction).split()
    ground_truth_tokens = _official_normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def _official_em(prediction: str, ground_truth: str) -> bool:
    return _official_normalize_answer(prediction) == _official_normalize_answer(ground_truth)


def _max_over(fn, prediction, truths):  # type: ignore[no-untyped-def]
    return max(fn(prediction, t) for t in truths)


CASES = [
    ("Denver Broncos", ["Denver Broncos", "Broncos"]),
    ("the Denver Broncos!", ["Denver Broncos"]),
    ("Broncos of Denver", ["Denver Broncos"]),
    ("Carolina", ["Denver Broncos"]),
    ("", ["Denver Broncos"]),
    ("a an the", ["the"]),
    ("1,000 dollars", ["1000 dollars", "$1,000"]),
    ("Thé café", ["the cafe", "Thé café"]),
    ("cat cat cat", ["cat"]),
]


@pytest.mark.parametrize(("prediction", "truths"), CASES)
def test_em_f1_equal_official_squad(prediction: str, truths: list[str]) -> None:
    assert normalize_answer(prediction) == _official_normalize_answer(prediction)
    assert exact_match(prediction, truths) == float(_max_over(_official_em, prediction, truths))
    assert f1(prediction, truths) == pytest.approx(_max_over(_official_f1, prediction, truths))


def test_f1_hand_computed() -> None:
    # pred tokens [cat, sat, on, mat], gold [cat, sat]: common 2, P = 1/2, R = 1 -> F1 = 2/3
    assert f1("The cat sat on the mat", ["a cat sat"]) == pytest.approx(2 / 3)
    assert exact_match("The Cat.", ["cat"]) == 1.0
    assert f1("anything", []) is None and exact_match("x", []) is None


def test_em_f1_equal_official_on_squad_dev(shared_data: Path) -> None:
    data = json.loads((shared_data / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))
    n = 0
    for article in data["data"][:10]:
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                truths = [a["text"] for a in qa["answers"]]
                # other annotators' answers and a sloppy widening of the span as predictions
                start = qa["answers"][0]["answer_start"]
                widened = para["context"][max(0, start - 15) : start + len(truths[0]) + 10]
                for pred in (truths[-1], widened):
                    assert exact_match(pred, truths) == float(_max_over(_official_em, pred, truths))
                    assert f1(pred, truths) == pytest.approx(_max_over(_official_f1, pred, truths))
                    n += 1
    assert n > 2000


# --------------------------------------------------------------------------- multiple choice

OPTIONS = ["A frog.", "Guns that freeze people", "Mind reading", "He didn't"]


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        ("B", 1),
        ("(C)", 2),
        ("(C) Mind reading", 2),
        ("D.", 3),
        ("Answer: B", 1),
        ("The answer is (D).", 3),
        ("I think the correct option is C because ...", 2),
        ("A frog.", 0),  # the option text, not the letter A
        ("mind reading", 2),
        ("It must be mind reading, since the story says so.", 2),
        ("I don't know", None),
        ("", None),
        ("E", None),  # out of range
    ],
)
def test_parse_choice(prediction: str, expected: int | None) -> None:
    assert parse_choice(prediction, OPTIONS) == expected


def test_accuracy_mc() -> None:
    assert accuracy_mc("(B) Guns that freeze people", OPTIONS, 1) == 1.0
    assert accuracy_mc("(A)", OPTIONS, 1) == 0.0
    assert accuracy_mc("no idea", OPTIONS, 1) == 0.0


# --------------------------------------------------------------------------- ROUGE / BLEU / METEOR


def test_rouge_hand_computed() -> None:
    # tokens [the cat sat on the mat] vs [the cat sat]: 3 matches, P = 3/6, R = 1 -> F = 2/3;
    # the LCS is the same 3 tokens
    assert rouge_1("the cat sat on the mat", ["the cat sat"]) == pytest.approx(2 / 3)
    assert rouge_l("the cat sat on the mat", ["the cat sat"]) == pytest.approx(2 / 3)
    # LCS of [a b c d] and [a c b d] is 3 -> P = R = F = 3/4; ROUGE-1 is 1
    assert rouge_l("w x y z", ["w y x z"]) == pytest.approx(3 / 4)
    assert rouge_1("w x y z", ["w y x z"]) == pytest.approx(1.0)
    # max over references; stemming makes "cats" match "cat"
    assert rouge_l("cats", ["dog", "cat"]) == 1.0
    assert rouge_l("x", []) is None


def test_bleu_hand_computed() -> None:
    hyp, ref = "the cat sat on the mat", "the cat is on the mat"
    # unigram precision 5/6, no brevity penalty (6 vs 6 tokens)
    assert bleu_1(hyp, [ref]) == pytest.approx(5 / 6)
    # p1 5/6, p2 3/5, p3 1/4, p4 0/3 -> exp smoothing 1/(2*3): geometric mean
    expected = (5 / 6 * 3 / 5 * 1 / 4 * 1 / 6) ** 0.25
    assert bleu_4(hyp, [ref]) == pytest.approx(expected, abs=1e-6)
    # effective order: a correct two-word answer is not zeroed by missing 3- and 4-grams
    assert bleu_4("Denver Broncos", ["denver broncos"]) == pytest.approx(1.0)
    assert bleu_1("", ["x y"]) == 0.0
    assert bleu_4("x", []) is None


def test_meteor_nosyn_hand_computed() -> None:
    # identical: P = R = 1, 1 chunk of 6 matches -> penalty 0.5 * (1/6)^3
    assert meteor_nosyn("the cat sat on the mat", ["the cat sat on the mat"]) == pytest.approx(
        1 - 0.5 / 216
    )
    # a stem match: 1 match, 1 chunk -> penalty 0.5 * (1/1)^3 -> 0.5
    assert meteor_nosyn("cats", ["cat"]) == pytest.approx(0.5)
    # no synonym stage: "canine" never matches "dog"
    assert meteor_nosyn("dog", ["canine"]) == 0.0
    assert meteor_nosyn("x", []) is None


def test_full_meteor_needs_wordnet() -> None:
    if wordnet_available():
        assert meteor("the cat", ["the cat"]) is not None
    else:
        with pytest.raises(ConfigError, match="WordNet"):
            meteor("the cat", ["the cat"])


def test_answer_metrics_keys() -> None:
    qa = EvalQuestion(id="q", question="Who?", answers=("Denver Broncos",))
    got = answer_metrics("The Denver Broncos", qa)
    assert set(got) == {"em", "f1", "rouge_l", "rouge_1", "bleu_1", "bleu_4", "meteor_nosyn"}
    assert got["em"] == 1.0 and got["f1"] == 1.0
    mc = EvalQuestion(id="m", question="?", options=tuple(OPTIONS), label=2)
    assert answer_metrics("(C)", mc) == {"accuracy": 1.0}
    none = answer_metrics("x", EvalQuestion(id="r", question="?"))
    assert all(v is None for v in none.values())
