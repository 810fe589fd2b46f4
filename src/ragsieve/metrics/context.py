"""Context and ranked-list metrics: how much of a question's gold evidence (and answer) a
context or a ranked list holds, and how much of it is evidence.

The matching rule (match normalisation, ``NGRAM``-token windows, ``THRESHOLD``) is described in
:mod:`ragsieve.metrics` and ``docs/metrics.md``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragsieve.metrics.gold import Gold

__all__ = [
    "KS",
    "NGRAM",
    "THRESHOLD",
    "answer_recall",
    "context_metrics",
    "context_tokens",
    "evidence_precision",
    "evidence_recall",
    "evidence_token_precision",
    "ie",
    "ie_at_k",
    "information_efficiency",
    "match_tokens",
    "mrr",
    "precision_at_k",
    "ranked_metrics",
    "recall_at_k",
]


NGRAM = 4
"""Window length (tokens) of the coverage rule. Four tokens are specific enough that unrelated
text shares almost none (articles and punctuation are already gone), short enough that a unit cut
by a chunk boundary still has most of its windows inside one chunk."""

THRESHOLD = 0.8
"""Share of a unit's tokens that must be covered. Below 1 so that a few ordinary words lost at a
chunk boundary, or an edited word, do not turn a retrieved unit into a miss; well above 0.5 so
that retrieving half of a gold unit does not count."""

KS: tuple[int, ...] = (1, 3, 5)
"""The cut-offs SAKI-RAG reports (its Formula 9 sums Metric@1 + Metric@3 + Metric@5)."""

# Answers that say nothing about the context: searching a context for "yes" would credit any
# context containing the word. ``answer_recall`` ignores them.
_NON_SPAN_ANSWERS = frozenset({"yes", "no", "unanswerable"})

# --------------------------------------------------------------------------- match tokens

_ARTICLE_WORDS = frozenset({"a", "an", "the"})
_WORD = re.compile(r"[^\W_]+")  # letters and digits: every other character separates tokens
_OPENING = "\"'“‘«([{"


class _Seq(tuple[str, ...]):
    """Normalised tokens plus, per token, whether it is *salient*: a number or a name, i.e. it
    holds a digit, or a capital letter that grammar does not explain (not a sentence's first
    word, or an acronym such as "VCU"). Slices are plain tuples."""

    salient: tuple[bool, ...]

    def __new__(cls, tokens: Iterable[str], salient: Iterable[bool]) -> _Seq:
        obj = super().__new__(cls, tokens)
        obj.salient = tuple(salient)
        return obj


def _sentence_initial(text: str, pos: int) -> bool:
    """Whether the word at ``pos`` opens a sentence, a line or the text (so its capital letter
    may be grammar, not a name)."""
    i = pos - 1
    while i >= 0 and (text[i].isspace() or text[i] in _OPENING):
        if text[i] == "\n":
            return True
        i -= 1
    return i < 0 or text[i] in ".!?:;"


def _seq(text: str) -> _Seq:
    """Match-normalised tokens of ``text`` with their salience (see :func:`match_tokens`)."""
    text = unicodedata.normalize("NFKC", text)
    tokens: list[str] = []
    salient: list[bool] = []
    for m in _WORD.finditer(text):
        word = m.group()
        low = word.lower()
        if low in _ARTICLE_WORDS:
            continue
        tokens.append(low)
        if any(ch.isdigit() for ch in word):
            salient.append(True)
        elif low == word:
            salient.append(False)
        else:
            acronym = len(word) > 1 and word.isupper()
            salient.append(acronym or not _sentence_initial(text, m.start()))
    return _Seq(tokens, salient)


def match_tokens(text: str) -> list[str]:
    """Tokens used to match evidence and answers against contexts.

    SQuAD normalisation generalised to Unicode, because corpora mix curly and straight quotes,
    dashes and ligatures: NFKC, lower case, replace every character that is neither a word
    character nor whitespace (and ``_``) by a space, drop the articles a/an/the, split on
    whitespace.

    SQuAD *deletes* punctuation; here it becomes a space, so that token containment still finds
    "gold" in "gold-themed", "4" in "12–4" and "Tesla" in "Tesla's" (both sides of every
    comparison are normalised alike, so nothing else changes).
    """
    return list(_seq(text))


# --------------------------------------------------------------------------- coverage machinery


class _Grams:
    """The contiguous n-grams of a set of token sequences, per n, built lazily.

    n-grams never cross from one sequence into the next: two retrieved chunks are separate texts,
    and the rule must not invent a window out of the end of one and the start of another. With
    ``edges`` (an index of retrieved chunks), what a chunk boundary leaves too short for a window
    is matched exactly instead: a unit whose first 1..3 tokens end a chunk, whose last 1..3
    tokens start a chunk, or whose middle holds a whole chunk of 1..3 tokens. A unit cut into
    pieces by chunk boundaries is then covered when all its pieces were retrieved, in any order.
    """

    __slots__ = ("_edges", "_lists", "_sets", "_use_edges")

    def __init__(self, token_lists: Iterable[Sequence[str]], *, edges: bool = False) -> None:
        self._lists = [tuple(t) for t in token_lists if t]
        self._sets: dict[int, set[tuple[str, ...]]] = {}
        self._edges: dict[int, tuple[set[tuple[str, ...]], ...]] = {}
        self._use_edges = edges

    def add(self, tokens: Sequence[str]) -> None:
        if tokens:
            t = tuple(tokens)
            self._lists.append(t)
            for n, grams in self._sets.items():
                grams.update(t[i : i + n] for i in range(len(t) - n + 1))
            for n, (heads, tails, whole) in self._edges.items():
                if len(t) >= n:
                    heads.add(t[:n])
                    tails.add(t[-n:])
                if len(t) == n:
                    whole.add(t)

    def grams(self, n: int) -> set[tuple[str, ...]]:
        got = self._sets.get(n)
        if got is None:
            got = {t[i : i + n] for t in self._lists for i in range(len(t) - n + 1)}
            self._sets[n] = got
        return got

    def edges(self, n: int) -> tuple[set[tuple[str, ...]], ...]:
        """(first ``n`` tokens, last ``n`` tokens, whole sequences of ``n`` tokens)."""
        got = self._edges.get(n)
        if got is None:
            long_enough = [t for t in self._lists if len(t) >= n]
            got = (
                {t[:n] for t in long_enough},
                {t[-n:] for t in long_enough},
                {t for t in long_enough if len(t) == n},
            )
            self._edges[n] = got
        return got

    def mask(self, tokens: Sequence[str]) -> list[bool]:
        """For each position of ``tokens``: is it inside some window (``NGRAM`` long, or the
        whole sequence when shorter) that occurs contiguously in one indexed sequence, or (with
        ``edges``) inside a piece cut off by a chunk boundary (see the class docstring)?"""
        length = len(tokens)
        covered = [False] * length
        if length == 0 or not self._lists:
            return covered
        n = min(NGRAM, length)
        grams = self.grams(n)
        t = tuple(tokens)
        for i in range(length - n + 1):
            if t[i : i + n] in grams:
                covered[i : i + n] = [True] * n
        if self._use_edges:
            for size in range(1, min(NGRAM, length)):
                heads, tails, whole = self.edges(size)
                if t[:size] in tails:  # the unit starts at the end of a chunk
                    covered[:size] = [True] * size
                if t[-size:] in heads:  # the unit ends at the start of a chunk
                    covered[length - size :] = [True] * size
                for i in range(1, length - size):  # a whole short chunk inside the unit
                    if t[i : i + size] in whole:
                        covered[i : i + size] = [True] * size
        return covered

    def coverage(self, tokens: Sequence[str]) -> float:
        """Share of ``tokens`` covered (see :meth:`mask`); 0.0 for an empty sequence."""
        if not tokens:
            return 0.0
        return sum(self.mask(tokens)) / len(tokens)

    def covers(self, tokens: Sequence[str]) -> bool:
        """The matching rule: at least ``THRESHOLD`` of ``tokens`` covered, and every uncovered
        token a lower-case word (no digit, no capital letter before normalisation).

        The second clause keeps templated near-duplicates apart: HotpotQA's distractors include
        "The 2012–13 VCU Rams men's basketball team ..." beside the gold 2011–12 sentence,
        "It has a Roud Folk Song Index number of 326." beside "... of 12986." and "He played
        college football at the University of Oregon." beside another university; each shares
        over 80% of its tokens with the gold and differs only in a number or a name. A partly
        retrieved unit whose missing words include a number or a name has lost a fact, too.
        Plain token lists (no salience recorded) fall back to treating digits as salient.
        """
        if not tokens:
            return False
        mask = self.mask(tokens)
        if sum(mask) < THRESHOLD * len(tokens):
            return False
        salient = getattr(tokens, "salient", None)
        if salient is None:
            salient = tuple(any(ch.isdigit() for ch in tok) for tok in tokens)
        return not any(s and not ok for ok, s in zip(mask, salient, strict=True))


def _is_evidence(tokens: Sequence[str], gold: _Grams, gold_tokens: Sequence[Sequence[str]]) -> bool:
    """A context unit is evidence if it lies inside the gold text, or contains a gold unit.

    The second clause only considers gold units of at least ``NGRAM`` tokens: a one-word gold
    unit (a section title marked as evidence) would otherwise make every sentence that mentions
    the word count as evidence.
    """
    if not tokens:
        return False
    if gold.covers(tokens):
        return True
    unit = _Grams([tokens])
    return any(len(g) >= NGRAM and unit.covers(g) for g in gold_tokens)


def _gold_tokens(evidence: Iterable[str]) -> list[_Seq]:
    return [t for t in (_seq(e) for e in evidence) if t]


def _context_sentences(context_texts: Iterable[str]) -> list[str]:
    from ragsieve.text import split_sentences

    out: list[str] = []
    for chunk in context_texts:
        out.extend(chunk[s:e] for s, e in split_sentences(chunk))
    return out


# --------------------------------------------------------------------------- context metrics


def context_tokens(context_texts: Sequence[str]) -> int:
    """LLM tokens (cl100k, the project's counter) of the context exactly as the LLM sees it:
    the chunk texts joined by blank lines, as :attr:`ragsieve.types.Context.text` does."""
    from ragsieve.text import count_tokens

    return count_tokens("\n\n".join(context_texts))


def answer_recall(context_texts: Sequence[str], answers: Iterable[str]) -> float | None:
    """1.0 if any gold answer's normalised token sequence occurs contiguously in the normalised
    context (chunks concatenated in order, as the LLM reads them), else 0.0.

    Token sequences, not substrings, so that "1" does not match "10". Answers that carry no
    span ("yes", "no", "unanswerable", or empty after normalisation) are ignored; ``None`` if no
    answer is left (the metric says nothing for such a question).
    """
    targets = []
    for a in answers:
        toks = match_tokens(a)
        if toks and " ".join(toks) not in _NON_SPAN_ANSWERS:
            targets.append(toks)
    if not targets:
        return None
    context = " " + " ".join(t for chunk in context_texts for t in match_tokens(chunk)) + " "
    return float(any(" " + " ".join(t) + " " in context for t in targets))


def evidence_recall(context_texts: Sequence[str], evidence: Iterable[str]) -> float | None:
    """Share of gold evidence units covered by the context (``None`` without evidence)."""
    gold = _gold_tokens(evidence)
    if not gold:
        return None
    ctx = _Grams((match_tokens(c) for c in context_texts), edges=True)
    return sum(ctx.covers(g) for g in gold) / len(gold)


def evidence_precision(context_texts: Sequence[str], evidence: Iterable[str]) -> float | None:
    """Share of the context's sentences that are evidence: ParetoRAG's "useful information ratio".

    The context is split with :func:`ragsieve.text.split_sentences`; sentences with no word
    character (a lone dash) are not counted. An empty context scores 0.0: it delivered no useful
    information, and scoring it 1 would reward retrieving nothing. ``None`` without evidence.
    """
    gold_tokens = _gold_tokens(evidence)
    if not gold_tokens:
        return None
    sentences = [t for t in (_seq(s) for s in _context_sentences(context_texts)) if t]
    if not sentences:
        return 0.0
    gold = _Grams(gold_tokens)
    return sum(_is_evidence(s, gold, gold_tokens) for s in sentences) / len(sentences)


def evidence_token_precision(context_texts: Sequence[str], evidence: Iterable[str]) -> float | None:
    """Share of the context's (normalised) tokens covered by gold evidence.

    A supplement to :func:`evidence_precision` that does not depend on the sentence splitter
    (a long sentence and a short one weigh by their length). ``None`` without evidence.
    """
    gold_tokens = _gold_tokens(evidence)
    if not gold_tokens:
        return None
    gold = _Grams(gold_tokens)
    total = covered = 0.0
    for chunk in context_texts:
        toks = match_tokens(chunk)
        if toks:
            total += len(toks)
            covered += gold.coverage(toks) * len(toks)
    return covered / total if total else 0.0


def information_efficiency(recall: float | None, precision: float | None) -> float | None:
    """SAKI-RAG's Information Efficiency (its Formula 8): recall x precision."""
    if recall is None or precision is None:
        return None
    return recall * precision


def ie(context_texts: Sequence[str], evidence: Iterable[str]) -> float | None:
    """Information Efficiency of one context: evidence_recall x evidence_precision."""
    ev = list(evidence)
    return information_efficiency(
        evidence_recall(context_texts, ev), evidence_precision(context_texts, ev)
    )


def _question_answer_recall(texts: Sequence[str], question: Gold) -> float | None:
    """:func:`answer_recall` of one question. A question asked in parts (two-part, list, how-to)
    carries ``meta["parts"]``, one list of acceptable strings per part; its joined answer never
    occurs verbatim, so the context holds its answer (1.0) only when it holds every part, else
    0.0. Parts that are no span ("No") are left out; ``None`` when none is left."""
    parts = question.meta.get("parts")
    if not parts:
        return answer_recall(texts, question.answer_targets)
    found = [r for r in (answer_recall(texts, p) for p in parts) if r is not None]
    return float(all(found)) if found else None


def context_metrics(context_texts: Sequence[str], question: Gold) -> dict[str, Any]:
    """All context metrics of one question, with the normalisation done once.

    Keys: ``context_tokens``, ``answer_recall``, ``evidence_recall``, ``evidence_precision``,
    ``evidence_token_precision``, ``ie``. Inapplicable metrics are ``None``.
    """
    texts = list(context_texts)
    out: dict[str, Any] = {
        "context_tokens": context_tokens(texts),
        "answer_recall": _question_answer_recall(texts, question),
    }
    gold_tokens = _gold_tokens(question.evidence)
    if not gold_tokens:
        out.update(
            evidence_recall=None, evidence_precision=None, evidence_token_precision=None, ie=None
        )
        return out
    chunk_tokens = [match_tokens(c) for c in texts]
    ctx = _Grams(chunk_tokens, edges=True)
    gold = _Grams(gold_tokens)
    recall = sum(ctx.covers(g) for g in gold_tokens) / len(gold_tokens)
    sentences = [t for t in (_seq(s) for s in _context_sentences(texts)) if t]
    precision = (
        sum(_is_evidence(s, gold, gold_tokens) for s in sentences) / len(sentences)
        if sentences
        else 0.0
    )
    total = sum(len(t) for t in chunk_tokens)
    token_precision = (
        sum(gold.coverage(t) * len(t) for t in chunk_tokens if t) / total if total else 0.0
    )
    out.update(
        evidence_recall=recall,
        evidence_precision=precision,
        evidence_token_precision=token_precision,
        ie=recall * precision,
    )
    return out


# --------------------------------------------------------------------------- ranked-list metrics


def _unit_is_evidence(text: str, gold: _Grams, gold_tokens: Sequence[Sequence[str]]) -> bool:
    """A retrieved unit "contains evidence" if it is evidence as a whole, or any of its sentences
    is: a 6-sentence chunk holding one gold sentence, or straddling the end of a gold paragraph,
    still delivers a supporting fact."""
    if _is_evidence(_seq(text), gold, gold_tokens):
        return True
    sentences = _context_sentences([text])
    if len(sentences) < 2:
        return False
    return any(_is_evidence(_seq(sent), gold, gold_tokens) for sent in sentences)


def _ranked_flags(
    ranked: Sequence[str], gold: _Grams, gold_tokens: Sequence[Sequence[str]]
) -> list[bool]:
    return [_unit_is_evidence(u, gold, gold_tokens) for u in ranked]


def recall_at_k(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float | None:
    """Share of gold evidence units covered by the top-``k`` retrieved units together.

    With one gold unit per question (SQuAD, MS MARCO) this is the hit rate of Musgrave et al.,
    the reference SAKI-RAG cites for Recall@k. ``None`` without evidence.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    gold_tokens = _gold_tokens(evidence)
    if not gold_tokens:
        return None
    top = _Grams((match_tokens(u) for u in ranked[:k]), edges=True)
    return sum(top.covers(g) for g in gold_tokens) / len(gold_tokens)


def precision_at_k(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float | None:
    """Share of the top-``k`` retrieved units that contain evidence (the unit, or one of its
    sentences, contains a gold unit or lies inside one).

    The denominator is the number of units actually returned, ``min(k, len)``, so a method that
    returns fewer than ``k`` units is not charged for slots it left empty (SAKI-RAG's Table 7
    precision for its own selective retriever only makes sense this way); an empty list scores
    0.0. ``None`` without evidence."""
    if k < 1:
        raise ValueError("k must be >= 1")
    gold_tokens = _gold_tokens(evidence)
    if not gold_tokens:
        return None
    top = list(ranked[:k])
    if not top:
        return 0.0
    flags = _ranked_flags(top, _Grams(gold_tokens), gold_tokens)
    return sum(flags) / len(top)


def ie_at_k(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float | None:
    """SAKI-RAG's IE@k = Recall@k x Precision@k (Formula 8), for one question."""
    ev = list(evidence)
    return information_efficiency(recall_at_k(ranked, ev, k), precision_at_k(ranked, ev, k))


def mrr(ranked: Sequence[str], evidence: Iterable[str]) -> float | None:
    """Reciprocal rank of the first retrieved unit that contains evidence, over the whole list;
    0.0 if none is. ``None`` without evidence."""
    gold_tokens = _gold_tokens(evidence)
    if not gold_tokens:
        return None
    gold = _Grams(gold_tokens)
    for rank, unit in enumerate(ranked, start=1):
        if _unit_is_evidence(unit, gold, gold_tokens):
            return 1.0 / rank
    return 0.0


def ranked_metrics(
    ranked: Sequence[str], evidence: Iterable[str], ks: Sequence[int] = KS
) -> dict[str, float | None]:
    """``recall@k``, ``precision@k``, ``ie@k`` for each k in ``ks`` and ``mrr``, computed in one
    pass (each unit normalised once). All ``None`` without evidence."""
    gold_tokens = _gold_tokens(evidence)
    keys = [f"{m}@{k}" for k in ks for m in ("recall", "precision", "ie")] + ["mrr"]
    if not gold_tokens:
        return dict.fromkeys(keys)
    gold = _Grams(gold_tokens)
    units = [match_tokens(u) for u in ranked]
    flags = _ranked_flags(ranked, gold, gold_tokens)
    out: dict[str, float | None] = {}
    top = _Grams([], edges=True)
    taken = 0
    for k in sorted(ks):
        if k < 1:
            raise ValueError("k must be >= 1")
        while taken < min(k, len(units)):
            top.add(units[taken])
            taken += 1
        recall = sum(top.covers(g) for g in gold_tokens) / len(gold_tokens)
        n = min(k, len(units))
        precision = sum(flags[:n]) / n if n else 0.0
        out[f"recall@{k}"] = recall
        out[f"precision@{k}"] = precision
        out[f"ie@{k}"] = recall * precision
    first = next((i for i, f in enumerate(flags) if f), None)
    out["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    return {key: out[key] for key in keys}
