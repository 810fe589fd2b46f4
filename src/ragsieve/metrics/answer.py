"""Answer metrics: an LLM's answer against the gold answers (SQuAD EM and F1, multiple-choice
accuracy, ROUGE, BLEU, METEOR), and :func:`answer_metrics` for one question.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ragsieve.errors import ConfigError

if TYPE_CHECKING:
    from ragsieve.metrics.gold import Gold

__all__ = [
    "accuracy_mc",
    "answer_metrics",
    "bleu_1",
    "bleu_4",
    "exact_match",
    "f1",
    "meteor",
    "meteor_nosyn",
    "normalize_answer",
    "parse_choice",
    "rouge_1",
    "rouge_l",
    "wordnet_available",
]


_SQUAD_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(s: str) -> str:
    """SQuAD v1.1's official ``normalize_answer``: lower case, remove ASCII punctuation, remove the
    articles a/an/the, collapse whitespace. Kept byte-for-byte in behaviour so that EM/F1 equal
    the official script's."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _SQUAD_PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def _squad_f1(prediction: str, truth: str) -> float:
    """SQuAD v1.1's token F1 of one prediction against one gold answer (the official script's
    arithmetic, so that scores equal its own)."""
    pred, gold = normalize_answer(prediction).split(), normalize_answer(truth).split()
    same = sum((Counter(pred) & Counter(gold)).values())
    if not same:
        return 0.0
    p, r = same / len(pred), same / len(gold)
    return 2 * p * r / (p + r)


def exact_match(prediction: str, answers: Iterable[str]) -> float | None:
    """SQuAD v1.1 EM: 1.0 if the normalised prediction equals some normalised gold answer.
    ``None`` without gold answers."""
    golds = list(answers)
    if not golds:
        return None
    pred = normalize_answer(prediction)
    return float(max(pred == normalize_answer(g) for g in golds))


def f1(prediction: str, answers: Iterable[str]) -> float | None:
    """SQuAD v1.1 token F1 (bag of normalised tokens), max over gold answers; the same function
    QASPER's official evaluator uses for its Answer-F1. ``None`` without gold answers."""
    golds = list(answers)
    if not golds:
        return None
    return max(_squad_f1(prediction, g) for g in golds)


_LETTER_PATTERNS = (
    # "(B)", "(B) text", "B)", "B.", "B:", "[B]" at the start
    re.compile(r"^\s*[\(\[]?([A-Z])[\)\]\.:](?:\s|$)"),
    # "answer is B", "Answer: (B)", "option C", "choice: D"
    re.compile(r"\b(?:answer|option|choice)\s*(?:is|:)?\s*[\(\[]?([A-Z])\b(?![\'\w])", re.I),
    # "(B)" anywhere
    re.compile(r"\(([A-Z])\)"),
)


def parse_choice(prediction: str, options: Sequence[str]) -> int | None:
    """The option index a free-text prediction chooses, or ``None``.

    In order: the prediction is exactly one option's text (normalised); a bare letter ("B");
    a letter in a recognised pattern ("(B) ...", "B.", "Answer: B", "option B", "(B)"); the
    option whose normalised text occurs in the prediction (the longest, if several). Letters must
    be bracketed or punctuated because "A frog." is an answer text, not the letter A.
    """
    if not options:
        return None
    n = len(options)
    norm_pred = normalize_answer(prediction)
    norm_opts = [normalize_answer(o) for o in options]
    for i, o in enumerate(norm_opts):
        if o and norm_pred == o:
            return i
    bare = prediction.strip().strip(".:)(][").strip()
    if len(bare) == 1 and bare.isalpha() and bare.isupper() and ord(bare) - 65 < n:
        return ord(bare) - 65
    for pattern in _LETTER_PATTERNS:
        m = pattern.search(prediction)
        if m:
            idx = ord(m.group(1).upper()) - 65
            if 0 <= idx < n:
                return idx
    padded = f" {norm_pred} "
    found = [(len(o), i) for i, o in enumerate(norm_opts) if o and f" {o} " in padded]
    if found:
        return max(found)[1]
    return None


def accuracy_mc(prediction: str, options: Sequence[str], label: int) -> float:
    """1.0 if :func:`parse_choice` picks ``label``, else 0.0 (an unparseable answer is wrong)."""
    return float(parse_choice(prediction, options) == label)


@lru_cache(maxsize=1)
def _rouge_scorer() -> Any:
    from rouge_score import rouge_scorer

    # Porter stemming as ROUGE-1.5.5's customary "-m" flag; rouge-score lower-cases and keeps
    # only [a-z0-9] tokens.
    return rouge_scorer.RougeScorer(["rougeL", "rouge1"], use_stemmer=True)


def _rouge(prediction: str, references: Iterable[str], key: str) -> float | None:
    refs = [r for r in references if r.strip()]
    if not refs:
        return None
    scores = _rouge_scorer().score_multi(refs, prediction)
    return float(scores[key].fmeasure)


def rouge_l(prediction: str, references: Iterable[str]) -> float | None:
    """ROUGE-L F-measure (rouge-score, stemmed), max over references. ``None`` without any."""
    return _rouge(prediction, references, "rougeL")


def rouge_1(prediction: str, references: Iterable[str]) -> float | None:
    """ROUGE-1 F-measure (rouge-score, stemmed), max over references. ``None`` without any."""
    return _rouge(prediction, references, "rouge1")


@lru_cache(maxsize=4)
def _bleu(order: int) -> Any:
    from sacrebleu.metrics import BLEU

    # effective_order: a 2-word answer has no 3- or 4-grams; without it every short answer would
    # score BLEU-4 = 0 regardless of correctness (sacrebleu recommends it for sentence BLEU).
    return BLEU(max_ngram_order=order, lowercase=True, effective_order=True, tokenize="13a")


def _bleu_score(prediction: str, references: Iterable[str], order: int) -> float | None:
    refs = [r for r in references if r.strip()]
    if not refs:
        return None
    return _bleu(order).sentence_score(prediction, refs).score / 100.0


def bleu_1(prediction: str, references: Iterable[str]) -> float | None:
    """Sentence BLEU-1 in [0, 1] (sacrebleu, 13a tokens, lower-cased, all references at once)."""
    return _bleu_score(prediction, references, 1)


def bleu_4(prediction: str, references: Iterable[str]) -> float | None:
    """Sentence BLEU-4 in [0, 1] (sacrebleu, 13a tokens, lower-cased, exponential smoothing,
    effective order)."""
    return _bleu_score(prediction, references, 4)


_METEOR_TOKENS = re.compile(r"\w+|[^\w\s]")


class _NoSynonyms:
    """Stands in for nltk's WordNet reader: no synonyms, so METEOR's third stage matches nothing."""

    def synsets(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []


def _meteor(prediction: str, references: Iterable[str], wordnet: Any) -> float | None:
    from nltk.translate.meteor_score import meteor_score

    refs = [_METEOR_TOKENS.findall(r.lower()) for r in references if r.strip()]
    if not refs:
        return None
    hyp = _METEOR_TOKENS.findall(prediction.lower())
    return float(meteor_score(refs, hyp, wordnet=wordnet))


def meteor_nosyn(prediction: str, references: Iterable[str]) -> float | None:
    """METEOR without its WordNet-synonym stage (nltk's ``meteor_score``: exact and Porter-stem
    matching, max over references).

    WordNet data is not installable offline from any maintained PyPI package, and nltk's
    downloader needs the network; disabling only that stage keeps the rest of nltk's reference
    implementation and gives the same number on every machine. Scores are slightly lower than full
    METEOR's (synonym matches are missed). ``None`` without references."""
    return _meteor(prediction, references, _NoSynonyms())


def wordnet_available() -> bool:
    """Whether nltk can load WordNet here (needed by :func:`meteor`)."""
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
    except LookupError:
        return False
    return True


def meteor(prediction: str, references: Iterable[str]) -> float | None:
    """Full METEOR (nltk, with WordNet synonyms). Raises :class:`ConfigError` when WordNet data is
    not installed; use :func:`meteor_nosyn` for a number available everywhere."""
    if not wordnet_available():
        raise ConfigError(
            "METEOR needs WordNet data (python -m nltk.downloader wordnet); "
            "use meteor_nosyn where it is not available"
        )
    from nltk.corpus import wordnet

    return _meteor(prediction, references, wordnet)


def answer_metrics(prediction: str, question: Gold) -> dict[str, float | None]:
    """The answer metrics of one question: ``accuracy`` for multiple choice; otherwise ``em``,
    ``f1``, ``rouge_l``, ``rouge_1``, ``bleu_1``, ``bleu_4``, ``meteor_nosyn`` (all ``None`` for
    a question without gold answers, e.g. MS MARCO's retrieval-only file)."""
    if question.is_multiple_choice and question.label is not None:
        return {"accuracy": accuracy_mc(prediction, question.options, question.label)}
    refs = list(question.answers)
    return {
        "em": exact_match(prediction, refs),
        "f1": f1(prediction, refs),
        "rouge_l": rouge_l(prediction, refs),
        "rouge_1": rouge_1(prediction, refs),
        "bleu_1": bleu_1(prediction, refs),
        "bleu_4": bleu_4(prediction, refs),
        "meteor_nosyn": meteor_nosyn(prediction, refs),
    }
