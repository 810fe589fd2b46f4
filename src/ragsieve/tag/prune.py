"""Pruning with the tagger: keep the sentences whose keep probability reaches a threshold,
passages ordered by the passage head, and a second hop for the bridge of a multi-hop question.

The threshold decides how many sentences a question gets (no global top-k, no guess from the
shape of a score curve). The passage head decides first: a passage whose relevance is below the
passage threshold contributes no sentence (Provence's passage rejection: 8 of 10 pool passages
are distractors). The second hop reads every other passage again with the question joined by
the sentences kept from the most relevant passage, so that "the director of that film" can be
found once the film is known; a second reading counts only where its own passage relevance
reaches the passage threshold (the bridge cannot turn an unrelated passage on), and then a
sentence keeps the better of its two probabilities. At least ``min_keep`` sentences are kept
(the most probable ones, whatever their passage), so that a question never gets an empty
context.

Where the model folder has a stacker (:mod:`ragsieve.tag.stack`, the shipped model has
one), the keep decision is the stacker's probability instead of the raw one: it
weighs the two readings (the raw rule's hop) with the passage head and the pool, and
``threshold`` applies to its probability (the passage threshold then defaults to the stacker's
floor, below the raw rule's: the stacker has already weighed the passage). ``open_point`` takes
the stacker's open point (chosen on dev with no budget, for recall) instead of its default one.
``stack=False`` restores the raw rule.

A sentence without words (a bare page number, a table rule, a pipe, a code fence alone:
:func:`ragsieve.text.has_words`) is layout, never evidence: the tagger's every reading gives it
probability 0 (:meth:`ragsieve.tag.model.OnnxTagger.tag`, so that the stacker's fit sees it
too), and ``min_keep`` never picks it.

Where the tagger has a span head (:mod:`ragsieve.tag.span`), :attr:`Pruned.span` is the answer
span of a kept sentence (:func:`best_span`); with ``span_overlap`` (off by default) its ranking
also weighs the share of the question's words that sentence holds (:func:`word_share`).

``lead`` (lead carrying): a kept sentence that opens with a pronoun or "The
<noun>" says "he" or "the film" of an entity its passage's first sentence names; where neither
that first sentence nor the one before the kept sentence is kept, the first is kept too, at its
own probability (so a budget drops it first). On dev it raised evidence recall from 0.963x to
0.982x naive's (docs/tagger.md, "Lead carrying").

``link`` (link carrying): a passage that kept nothing, whose title a kept sentence of a passage
with another title names, is the bridge entity's own passage; its most probable sentence is
kept, at its own probability (docs/tagger.md, "Link carrying"; on in the ``tagger`` method).

What :func:`prune` does is set by one :class:`~ragsieve.tag.settings.TaggerSettings`, passed
whole; the keep rule itself is :func:`keeps`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

import numpy as np

from ragsieve.rerank.bm25 import tokenize
from ragsieve.tag.model import Passage, Tagged
from ragsieve.tag.settings import SPAN_POWER, TaggerSettings
from ragsieve.tag.span import SpanTagged, own_clause, snap_span
from ragsieve.tag.stack import Stacker
from ragsieve.text import has_words
from ragsieve.types import SourceSpan

#: A sentence that needs its subject from earlier in its passage ("He ...", "The film ...").
NEEDS_SUBJECT = re.compile(
    r"^(?:He|She|It|They|His|Her|Its|Their|Him|Them)\b|^(?:The|This|That|These|Those)\s+[a-z]"
)


class Tagger(Protocol):
    """Reads a question with passages; one :class:`Tagged` per passage."""

    name: str

    @property
    def threshold(self) -> float: ...

    @property
    def passage_threshold(self) -> float: ...

    @property
    def stacker(self) -> Stacker | None: ...

    def tag(self, question: str, passages: Sequence[Passage]) -> list[Tagged]: ...


@dataclass(frozen=True)
class Kept:
    """A kept sentence: passage and sentence numbers, its text and probabilities."""

    passage: int
    sentence: int
    text: str
    prob: float
    relevance: float


@dataclass
class Pruned:
    """Every passage's verdict (after the second hop) and the kept sentences, most relevant
    passage first, source order inside a passage."""

    tagged: list[Tagged]
    kept: list[Kept]
    threshold: float
    trace: dict[str, Any] = field(default_factory=dict)
    passage_threshold: float = 0.0
    #: The best answer span among the kept sentences (None: the tagger has no span head).
    span: SourceSpan | None = None


def keeps(prob: Any, relevance: float, threshold: float, passage_threshold: float) -> bool:
    """The keep rule: a sentence at or above ``threshold`` in a passage at or above
    ``passage_threshold``. :func:`prune` and the feedback loop's cut
    (:class:`~ragsieve.methods.tagger.TaggerCut`) both keep by it."""
    return bool(relevance >= passage_threshold and prob >= threshold)


def _bridge_hop(
    tagger: Tagger,
    question: str,
    passages: Sequence[Passage],
    tagged: list[Tagged],
    th: float,
    pth: float,
) -> tuple[list[Tagged], dict[str, Any], tuple[Tagged | None, ...]]:
    """Second pass over the other passages with the question + the best passage's kept
    sentences. A second reading counts only if its passage relevance reaches ``pth``; then
    each sentence and the passage keep the better of their two readings. Also returns every
    raw second reading (None: the bridge, or no hop)."""
    with_kept = [i for i, t in enumerate(tagged) if t.relevance >= pth and t.kept(th)]
    if not with_kept or len(passages) < 2:
        return tagged, {"hop": None}, (None,) * len(passages)
    bridge = max(with_kept, key=lambda i: (tagged[i].relevance, float(tagged[i].probs.max())))
    sents = passages[bridge][1]
    joined = " ".join(str(sents[j]).strip() for j in tagged[bridge].kept(th))
    others = [i for i in range(len(passages)) if i != bridge]
    second = tagger.tag(f"{question} {joined}", [passages[i] for i in others])
    out = list(tagged)
    gated = 0
    for i, t in zip(others, second, strict=True):
        if t.relevance < pth:
            gated += 1
            continue
        out[i] = Tagged(np.maximum(tagged[i].probs, t.probs), max(tagged[i].relevance, t.relevance))
    hop = {"bridge_passage": bridge, "query_added": joined, "passages": len(others)}
    raw: list[Tagged | None] = [None] * len(passages)
    for i, t in zip(others, second, strict=True):
        raw[i] = t
    return out, {"hop": {**hop, "gated": gated}}, tuple(raw)


class Readings(NamedTuple):
    """What the stacker reads: the first reading, the better of both readings, the bridge
    passage (None: no hop) and the hop's trace; and the raw second readings (None: not read
    again), which the passage head's refit learns from."""

    first: list[Tagged]
    merged: list[Tagged]
    bridge: int | None
    trace: dict[str, Any]
    second: tuple[Tagged | None, ...] = ()


def readings(tagger: Tagger, question: str, passages: Sequence[Passage], hops: int = 2) -> Readings:
    """The tagger's readings for the stacker. The hop is the raw rule's, at the model's raw
    ``threshold`` and ``passage_threshold`` (bridge and gate): ungated, it was slower for the
    same dev quality (docs/tagger.md)."""
    first = tagger.tag(question, passages)
    if hops != 2:
        return Readings(first, first, None, {}, (None,) * len(first))
    merged, hop, second = _bridge_hop(
        tagger, question, passages, first, tagger.threshold, tagger.passage_threshold
    )
    bridge = hop["hop"]["bridge_passage"] if hop["hop"] else None
    return Readings(first, merged, bridge, hop, second)


def operating_point(
    tagger: Tagger, settings: TaggerSettings | None = None
) -> tuple[float, float, Stacker | None]:
    """The (threshold, passage threshold, stacker) :func:`prune` decides with: the
    ``settings``' thresholds, else the defaults of whichever decides (the stacker where
    ``stack`` and the model has one, at its default or, ``open_point``, its open point; else
    the model's raw rule). Feedback rounds that move the keep rule start from the same point."""
    s = settings or TaggerSettings()
    stacker = tagger.stacker if s.stack else None
    decides: Stacker | Tagger = stacker if stacker is not None else tagger
    default = stacker.threshold_for(s.open_point) if stacker is not None else tagger.threshold
    th = default if s.threshold is None else float(s.threshold)
    pth = decides.passage_threshold if s.passage_threshold is None else float(s.passage_threshold)
    return th, pth, stacker


def _read(
    tagger: Tagger,
    question: str,
    passages: Sequence[Passage],
    hops: int,
    point: tuple[float, float, Stacker | None],
) -> tuple[list[Tagged], list[Tagged], dict[str, Any]]:
    """The readings :func:`prune` keeps from: the first reading (the question alone, which
    the span reads), the probabilities it decides on (the stacker's over both readings, or
    the raw rule's after its own hop at ``point``) and the hop's trace."""
    th, pth, stacker = point
    if stacker is not None:
        r = readings(tagger, question, passages, hops)
        probs = stacker.keep_probs(r.first, r.merged, r.bridge)
        tagged = [
            Tagged(np.where(t.probs > 0, p, 0.0), t.relevance)  # headings (0) stay out
            for p, t in zip(probs, r.merged, strict=True)
        ]
        return r.first, tagged, r.trace
    first = tagger.tag(question, passages)
    if hops != 2:
        return first, first, {}
    tagged, hop, _ = _bridge_hop(tagger, question, passages, first, th, pth)
    return first, tagged, hop


def _kept_keys(
    passages: Sequence[Passage],
    tagged: Sequence[Tagged],
    th: float,
    pth: float,
    settings: TaggerSettings,
    trace: dict[str, Any],
) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """The (passage, sentence) keys :func:`prune` keeps: the keep rule's (:func:`keeps`),
    then ``min_keep``'s most probable sentences with words, then link and lead carrying; and
    the keys link carrying added. Notes its counts in ``trace``."""
    keep = {
        (p, s)
        for p, t in enumerate(tagged)
        for s, prob in enumerate(t.probs)
        if keeps(prob, t.relevance, th, pth)
    }
    trace["rejected_passages"] = sum(1 for t in tagged if t.relevance < pth)
    # No sentence reached the keep point, so the context is only min_keep's fallback: the
    # trace says so (3 of the dev file's first 150 questions).
    trace["fallback"] = not keep
    flat = [
        (float(t.probs[s]), p, s)
        for p, t in enumerate(tagged)
        for s in range(len(t.probs))
        if has_words(str(passages[p][1][s]))
    ]
    for _, p, s in sorted(flat, reverse=True)[: settings.min_keep]:
        keep.add((p, s))
    links: set[tuple[int, int]] = set()
    if settings.link:
        links = linked_sentences(keep, passages, tagged)
        keep |= links
        trace["link_added"] = len(links)
    if settings.lead:
        leads = lead_sentences(keep, passages, tagged)
        keep |= leads
        trace["lead_added"] = len(leads)
    trace["kept"] = len(keep)
    return keep, links


def prune(
    tagger: Tagger,
    question: str,
    passages: Sequence[Passage],
    settings: TaggerSettings | None = None,
) -> Pruned:
    """Tag ``passages`` for ``question`` and keep the sentences the keep rule (:func:`keeps`)
    keeps at the operating point (:func:`operating_point`), at least ``min_keep`` of them, with
    link and lead carrying (the module's docstring); the answer span among them
    (:func:`best_span`, its characters checked against the neighbour clause). ``settings``
    (checked when made): :class:`~ragsieve.tag.settings.TaggerSettings`, its defaults when
    None."""
    s = settings or TaggerSettings()
    th, pth, stacker = point = operating_point(tagger, s)
    first, tagged, hop = _read(tagger, question, passages, s.hops, point)
    trace: dict[str, Any] = {
        "threshold": th,
        "passage_threshold": pth,
        "passages": len(passages),
        "decision": "stack" if stacker is not None else "threshold",
        **hop,
    }
    keep, links = _kept_keys(passages, tagged, th, pth, s, trace)
    order = sorted({p for p, _ in keep}, key=lambda p: -tagged[p].relevance)
    kept = [
        Kept(p, i, str(passages[p][1][i]), float(tagged[p].probs[i]), tagged[p].relevance)
        for p in order
        for i in sorted(i for q, i in keep if q == p)
    ]
    linked = {p for p, _ in links}
    span = best_span(
        tagger,
        passages,
        first,
        kept,
        s.span_power,
        s.span_snap,
        s.span_link,
        linked,
        question,
        s.span_overlap,
    )
    if span is not None:
        span = neighbour_checked(tagger, question, passages, span, s.span_snap)
    return Pruned(tagged, kept, th, trace, pth, span)


def lead_sentences(
    keep: set[tuple[int, int]], passages: Sequence[Passage], tagged: Sequence[Tagged]
) -> set[tuple[int, int]]:
    """The first sentences lead carrying adds: ``(p, 0)`` for each passage with a kept sentence
    that needs its subject (:data:`NEEDS_SUBJECT`) and neither ``(p, 0)`` nor the sentence
    before it kept; a first sentence without words or scored 0 (a heading) is not added."""
    out = set()
    for p, s in keep:
        first = str(passages[p][1][0])
        if (
            s > 0
            and (p, 0) not in keep
            and (p, s - 1) not in keep
            and NEEDS_SUBJECT.match(str(passages[p][1][s]).strip())
            and has_words(first)
            and float(tagged[p].probs[0]) > 0
        ):
            out.add((p, 0))
    return out


def title_name(title: str) -> str:
    """A passage title as a sentence would name it: without a trailing parenthesis
    ("Casablanca (film)" -> "casablanca"), lower-cased."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", title).strip().lower()


def naming(name: str) -> re.Pattern[str]:
    """A pattern that finds ``name`` (a :func:`title_name`) as whole words in lower-cased text."""
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


def links_to(name: str, title: str, sentence: str) -> bool:
    """Whether ``sentence``, of a passage titled ``title``, links the passage whose
    :func:`title_name` is ``name``: it names it as whole words, from another title (passages of
    one article share its title, as SQuAD's paragraphs do, and naming one's own links nothing)."""
    return title_name(title) != name and naming(name).search(sentence.lower()) is not None


def linked_sentences(
    keep: set[tuple[int, int]], passages: Sequence[Passage], tagged: Sequence[Tagged]
) -> set[tuple[int, int]]:
    """The sentences link carrying adds: for each passage with nothing in ``keep`` whose title
    (:func:`title_name`, three letters or more) a kept sentence of a passage with another title
    names as whole words, its most probable sentence with words (none if all score 0)."""
    kept_p = {p for p, _ in keep}
    out = set()
    for p, (title, sents) in enumerate(passages):
        name = title_name(str(title or ""))
        if p in kept_p or len(name) < 3 or not sents:
            continue
        if not any(
            links_to(name, str(passages[q][0] or ""), str(passages[q][1][s])) for q, s in keep
        ):
            continue
        probs = [
            (float(tagged[p].probs[s]), s) for s in range(len(sents)) if has_words(str(sents[s]))
        ]
        best = max(probs, default=(0.0, -1))
        if best[0] > 0:
            out.add((p, best[1]))
    return out


def _linker_weights(
    passages: Sequence[Passage], kept: Sequence[Kept], linked: set[int] | frozenset[int]
) -> dict[int, float]:
    """For each linked passage, the keep probability x relevance of the best kept sentence of
    another passage that names its title (the sentence that linked it)."""
    out: dict[int, float] = {}
    for p in linked:
        name = title_name(str(passages[p][0] or ""))
        ws = [
            k.prob * k.relevance
            for k in kept
            if k.passage not in linked and links_to(name, str(passages[k.passage][0] or ""), k.text)
        ]
        if ws:
            out[p] = max(ws)
    return out


def span_in(chars: Any, text: str, sp: Any, snap: bool) -> tuple[int, int]:
    """The characters of span ``sp`` in ``text`` (``chars``: the tagger's ``span_chars``),
    widened to whole words and trimmed when ``snap`` (:func:`~ragsieve.tag.span.snap_span`)."""
    start, end = chars(text, sp)
    return snap_span(text, start, end) if snap else (start, end)


def neighbour_checked(
    tagger: Tagger, question: str, passages: Sequence[Passage], span: SourceSpan, snap: bool
) -> SourceSpan:
    """``span``, or where it sits in a clause about the neighbour of what the question asks
    (:func:`~ragsieve.tag.span.own_clause`), the span the tagger finds reading the right clause
    alone with the question (its characters in the same sentence)."""
    title, sents = passages[span.passage]
    sentence = str(sents[span.sentence])
    clause = own_clause(question, sentence, span.start, span.end)
    chars = getattr(tagger, "span_chars", None)
    if clause is None or chars is None:
        return span
    a, b = clause
    part = sentence[a:b]
    read = tagger.tag(question, [(title, [part])])
    sp = read[0].spans[0] if read and isinstance(read[0], SpanTagged) and read[0].spans else None
    if sp is None:
        return span
    start, end = span_in(chars, part, sp, snap)
    if end <= start:
        return span
    return replace(span, text=part[start:end], score=sp.score, start=a + start, end=a + end)


#: The word-share weight of a sentence that holds none of the question's words: (this +
#: share) ** ``span_overlap`` never zeroes a span (a bridge sentence names the bridge entity,
#: not the question's words).
SPAN_SHARE_FLOOR = 0.1


def word_share(question_words: set[str], sentence: str) -> float:
    """The share of ``question_words`` (:func:`~ragsieve.rerank.bm25.tokenize`'s: lower case,
    no stop words) that ``sentence`` holds; 1 when the question has none (nothing to weigh)."""
    if not question_words:
        return 1.0
    return len(question_words & set(tokenize(sentence))) / len(question_words)


def best_span(
    tagger: Tagger,
    passages: Sequence[Passage],
    first: Sequence[Tagged],
    kept: Sequence[Kept],
    power: float = SPAN_POWER,
    snap: bool = True,
    link_mode: str = "inherit",
    linked: set[int] | frozenset[int] = frozenset(),
    question: str = "",
    overlap: float = 0.0,
) -> SourceSpan | None:
    """The answer span: among the kept sentences' spans in the ``first`` reading (the question
    alone), the one whose span probability times the sentence's keep probability times its
    passage's relevance is highest; its characters found by re-tokenising that one sentence.
    None when the reading has no spans (a tagger without a span head). ``snap``: its characters
    widened to whole words and trimmed (:func:`~ragsieve.tag.span.snap_span`). ``link_mode``
    (:data:`SPAN_LINKS`) and ``linked``, the passages link carrying added: how their sentences
    take part. ``overlap`` > 0: each rank is also multiplied by (:data:`SPAN_SHARE_FLOOR` +
    the :func:`word_share` of ``question`` its sentence holds) ** ``overlap``.

    Dev (95 HotpotQA and 100 SQuAD dev pools, prune's defaults): span F1 0.194 and 0.364 with
    this rule, against 0.162 and 0.313 for the highest span probability over both readings."""
    chars = getattr(tagger, "span_chars", None)
    inherited = _linker_weights(passages, kept, linked) if link_mode == "inherit" else {}
    asked = set(tokenize(question)) if overlap > 0 else set()

    def share(k: Kept) -> float:
        if not asked:
            return 1.0
        return float((SPAN_SHARE_FLOOR + word_share(asked, k.text)) ** overlap)

    def best_of(among: Sequence[Kept]) -> tuple[float, Kept, Any] | None:
        best: tuple[float, Kept, Any] | None = None
        for k in among:
            t = first[k.passage]
            sp = t.spans[k.sentence] if isinstance(t, SpanTagged) and t.spans else None
            w = inherited.get(k.passage, k.prob * k.relevance)
            rank = sp.score * w**power * share(k) if sp is not None else -1.0
            if sp is not None and (best is None or rank > best[0]):
                best = (rank, k, sp)
        return best

    def located(k: Kept, sp: Any) -> tuple[str, int, int]:
        sentence = str(passages[k.passage][1][k.sentence])
        return sentence, *span_in(chars, sentence, sp, snap)

    best = best_of(kept)
    if best is None or chars is None:
        return None
    _, k, sp = best
    sentence, start, end = located(k, sp)
    if link_mode == "bridge" and k.passage not in linked:
        text = sentence[start:end].lower()
        for p in sorted(linked):
            name = title_name(str(passages[p][0] or ""))
            if len(name) >= 3 and naming(name).search(text):
                there = best_of([q for q in kept if q.passage == p])
                if there is not None:
                    _, k, sp = there
                    sentence, start, end = located(k, sp)
                break
    return SourceSpan(
        sentence[start:end], sp.score, start=start, end=end, passage=k.passage, sentence=k.sentence
    )
