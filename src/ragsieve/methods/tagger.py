"""The ``tagger`` method: naive candidates, then the evidence tagger (``--method tagger``), and
the selection step that ``full`` shares when its scorer is the tagger.

The tagger (:mod:`ragsieve.tag`) reads each candidate passage with the question and keeps the
sentences whose keep probability reaches the threshold; passages are ordered by its passage
head, and a second hop reads the other passages with the bridge sentences added. ``--budget``
stays a hard ceiling: when the kept sentences do not fit, the most probable ones that fit are
kept. ``unit=passage`` hands the LLM every passage with at least one kept sentence, whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragsieve.errors import ConfigError
from ragsieve.methods.base import Method, MethodDef, Retrieval, first_stage
from ragsieve.methods.trace import scored_trace, selection_trace, timed
from ragsieve.methods.widen import WIDEN, Widen
from ragsieve.retrieve import get_retriever
from ragsieve.retrieve.base import DocFilter
from ragsieve.select.base import Selection, make_context
from ragsieve.tag.model import OnnxTagger
from ragsieve.tag.prune import Pruned, keeps, prune
from ragsieve.tag.settings import TaggerSettings
from ragsieve.text import count_tokens, split_sentences
from ragsieve.types import Chunk, Scored, SourceSpan

if TYPE_CHECKING:
    from ragsieve.index import Index

UNITS = ("sentence", "passage")


@dataclass(frozen=True)
class TaggerConfig(TaggerSettings):
    """Naive candidates (``k`` chunks by ``retriever``), then the tagger: the tagger's own
    settings are :class:`~ragsieve.tag.settings.TaggerSettings`' (their defaults and their
    check), which this config is and hands to the pruner whole."""

    k: int = 10
    #: Dense + BM25 by reciprocal rank fusion: chosen by reader F1 on two dev sets, technical
    #: manuals and an open Wikipedia corpus (docs/techdocs.md, "The retrieval default").
    retriever: str = "hybrid"
    unit: str = "sentence"
    budget: int | None = None
    #: A tagger folder (``ragsieve train-tagger --out DIR``); None: the shipped model.
    model: str | None = None
    #: A second reading over a wider context when the reply says "I don't know"
    #: (:mod:`ragsieve.methods.widen`): ``off``, ``passages`` or ``fill``. Off by its dev rule
    #: (docs/llm.md, "A second reading when the reader does not know"): a strong reader's "I
    #: don't know" was as often a right abstention as a missing sentence.
    widen: str = "off"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.k, int) or self.k < 1:
            raise ConfigError(f"k must be at least 1, got {self.k!r}")
        if self.unit not in UNITS:
            raise ConfigError(f"unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if self.budget is not None and self.budget < 1:
            raise ConfigError(f"budget must be a positive number of tokens, got {self.budget}")
        if self.widen not in WIDEN:
            raise ConfigError(f"widen must be one of {', '.join(WIDEN)}, got {self.widen!r}")


_TAGGERS: dict[str | None, OnnxTagger] = {}


def get_tagger(model: str | None = None) -> OnnxTagger:
    """One loaded tagger per model folder per process (a session costs ~0.3 s to open)."""
    if model not in _TAGGERS:
        _TAGGERS[model] = OnnxTagger(model)
    return _TAGGERS[model]


def chunk_sentences(chunk: Chunk) -> list[Chunk]:
    """A chunk's sentences as sentence-sized chunks (document offsets kept), for indexes
    without a sentence table."""
    out = []
    for i, (a, b) in enumerate(split_sentences(chunk.text)):
        text = chunk.text[a:b]
        if not text.strip():
            continue
        out.append(
            Chunk(
                id=f"{chunk.id}#s{i}",
                doc_id=chunk.doc_id,
                index=chunk.sent_start + i,
                text=text,
                start=chunk.start + a,
                end=chunk.start + b,
                sent_start=chunk.sent_start + i,
                sent_end=chunk.sent_start + i + 1,
                n_tokens=count_tokens(text),
                title=chunk.title,
            )
        )
    return out


@dataclass(frozen=True)
class TaggedSelection(Selection):
    """The tagger's selection, with its answer span located in the source (None: the tagger
    model has no span head, or no kept sentence holds a span)."""

    span: SourceSpan | None = field(default=None)


def tagged_selection(
    pruned: Pruned,
    units: list[list[Chunk]],
    budget: int | None,
    unit: str = "sentence",
) -> tuple[TaggedSelection, list[Scored]]:
    """The context from a :class:`Pruned` over ``units`` (each passage's sentence chunks):
    kept sentences (or, ``unit=passage``, their whole passages) in the pruner's order, the
    most probable first when the budget cannot hold them all (a passage that does not fit
    leaves its kept sentences to stand alone); and every sentence as a scored candidate
    (score = keep probability) for the trace and ``explain``. The selection carries the
    pruner's answer span, located in the sentence chunk it was read in
    (:meth:`~ragsieve.types.SourceSpan.located`)."""
    cands: list[Scored] = []
    by_key: dict[tuple[int, int], Scored] = {}
    for p, (t, sents) in enumerate(zip(pruned.tagged, units, strict=True)):
        for j, c in enumerate(sents):
            info = {"keep": float(t.probs[j]), "relevance": t.relevance, "passage": float(p)}
            s = Scored(c, float(t.probs[j]), info)
            cands.append(s)
            by_key[(p, j)] = s
    kept = [(k.passage, k.sentence) for k in pruned.kept]
    # Groups that enter whole or not at all: a kept sentence, or (``unit=passage``) the whole
    # passage of a kept sentence, whose kept sentences stand alone when it does not fit.
    if unit == "passage":
        groups = [[(p, j) for j in range(len(units[p]))] for p in dict.fromkeys(p for p, _ in kept)]
    else:
        groups = [[key] for key in kept]
    tokens = lambda group: sum(by_key[key].chunk.n_tokens for key in group)  # noqa: E731
    best = lambda group: max(by_key[key].score for key in group)  # noqa: E731
    chosen: set[tuple[int, int]] = set()
    used = whole = 0
    for group in sorted(groups, key=lambda g: -best(g)):
        if budget is None or used + tokens(group) <= budget:
            chosen.update(group)
            used += tokens(group)
            whole += 1
            continue
        for key in sorted((k for k in kept if k in group), key=lambda k: -by_key[k].score):
            if key not in chosen and used + tokens([key]) <= budget:
                chosen.add(key)
                used += tokens([key])
    order = [key for group in groups for key in group]
    context = [by_key[key] for key in order if key in chosen]
    trace = {
        "selector": "tagger",
        "unit": unit,
        **pruned.trace,
        "groups": len(groups),
        "over_budget": len(groups) - whole,
    }
    sp = pruned.span
    span = sp.located(units[sp.passage][sp.sentence]) if sp is not None else None
    found = TaggedSelection(make_context(context), trace, span)
    return found, sorted(cands, key=lambda s: -s.score)


class TaggerCut:
    """The tagger's keep rule as a :class:`~ragsieve.select.base.Selector` over the candidates
    it scored (score = keep probability), so SAGE's feedback can move it: every sentence at or
    above ``threshold`` in a passage at or above ``passage_threshold`` (the tag stage's own
    point, :func:`~ragsieve.tag.prune.operating_point`), then the most probable others until
    the context holds ``min_k`` sentences, never more than ``max_k`` sentences, within
    ``budget``, handed on in the pruner's passage order. "More context" thus adds the next
    most probable sentence and "less" drops the least probable, where SAGE's gradient cut
    over keep probabilities would answer a different question. ``unit=passage`` takes
    passages whole, by their best sentence, and still counts sentences (what the feedback
    loop counts)."""

    name = "tagger"

    def __init__(
        self,
        threshold: float,
        min_k: int,
        max_k: int | None,
        budget: int | None,
        unit: str,
        passage_threshold: float = 0.0,
    ) -> None:
        self.threshold, self.min_k, self.max_k = threshold, min_k, max_k
        self.budget, self.unit = budget, unit
        self.passage_threshold = passage_threshold

    def _keeps(self, group: list[Scored]) -> bool:
        """Whether the keep rule itself (:func:`~ragsieve.tag.prune.keeps`) keeps a sentence
        of ``group``."""
        th, pth = self.threshold, self.passage_threshold
        return any(keeps(x.score, x.scores.get("relevance", 1.0), th, pth) for x in group)

    def select(self, query: str, ranked: list[Scored]) -> Selection:
        groups: dict[float, list[Scored]] = {}
        for s in ranked:
            key = s.scores.get("passage", 0.0) if self.unit == "passage" else float(len(groups))
            groups.setdefault(key, []).append(s)
        by_score = sorted(groups.values(), key=lambda g: -max(x.score for x in g))
        # the rule's own sentences first, then the most probable others (``min_k``)
        kept = [g for g in by_score if self._keeps(g)]
        units = kept + [g for g in by_score if not self._keeps(g)]
        n_kept = len(kept)
        chosen: list[Scored] = []
        used = 0
        for i, g in enumerate(units):
            if i >= n_kept and len(chosen) >= self.min_k:
                break
            cost = sum(x.chunk.n_tokens for x in g)
            if self.max_k is not None and len(chosen) + len(g) > self.max_k:
                continue
            if self.budget is not None and used + cost > self.budget:
                continue
            chosen += g
            used += cost
        order = sorted(chosen, key=lambda s: (s.scores.get("passage", 0.0), s.chunk.index))
        capped = self.max_k is not None and len(chosen) >= self.max_k
        trace = {
            "selector": "tagger",
            "unit": self.unit,
            "threshold": self.threshold,
            "passage_threshold": self.passage_threshold,
            "min_k": self.min_k,
            "max_k": self.max_k,
            "reason": "max_k" if capped else "threshold",
        }
        return Selection(make_context(order), trace)


def tag_and_select(
    tagger: OnnxTagger,
    question: str,
    units: list[list[Chunk]],
    settings: TaggerSettings,
    budget: int | None,
    unit: str,
    timings: dict[str, float],
) -> tuple[TaggedSelection, list[Scored]]:
    """The tagger over each passage's sentence chunks (empty passages dropped) with
    ``settings``, then :func:`tagged_selection` within ``budget`` by ``unit``; the ``tag`` and
    ``select`` stages are timed into ``timings``."""
    stop = timed(timings, "tag")
    units = [u for u in units if u]
    passages = [(u[0].title, [s.text for s in u]) for u in units]
    pruned = prune(tagger, question, passages, settings)
    stop()
    stop = timed(timings, "select")
    found = tagged_selection(pruned, units, budget, unit)
    stop()
    return found


def select_with(
    tagger: OnnxTagger,
    question: str,
    units: list[list[Chunk]],
    config: TaggerConfig,
    timings: dict[str, float],
) -> tuple[TaggedSelection, list[Scored]]:
    """:func:`tag_and_select` with a :class:`TaggerConfig` (its settings, budget and unit):
    the ``tagger`` method and the pool selector's direct path read the same options through
    this one call."""
    return tag_and_select(tagger, question, units, config, config.budget, config.unit, timings)


class TaggerMethod(Method):
    """Naive top-``k`` chunks, each read whole by the evidence tagger; the kept sentences."""

    name = "tagger"

    def __init__(self, index: Index, config: TaggerConfig | None = None) -> None:
        super().__init__(index)
        self.config: TaggerConfig = config or TaggerConfig()
        self.retriever = get_retriever(self.config.retriever, index)
        self.tagger = get_tagger(self.config.model)
        #: The stage :meth:`answer` hands the first answer to (SAGE's feedback slot).
        self.feedback = (
            Widen(self.config.widen, self.config.budget) if self.config.widen != "off" else None
        )

    def gives_spans(self) -> bool:
        return self.tagger.has_span

    def _retrieve(self, questions: list[str], doc_ids: DocFilter) -> list[Retrieval]:
        c = self.config
        hits, per_q = first_stage(self.retriever, questions, c.k, doc_ids)
        out = []
        for q, chunks in zip(questions, hits, strict=True):
            t: dict[str, float] = {"retrieve": per_q}
            units = [chunk_sentences(s.chunk) for s in chunks]
            sel, cands = select_with(self.tagger, q, units, c, t)
            trace: dict[str, Any] = {
                "method": self.name,
                "retriever": c.retriever,
                "tagger": str(self.tagger.model_dir),
                "candidates": scored_trace(cands),
                **selection_trace(sel),
            }
            out.append(Retrieval(q, sel.context, cands, trace, t, sel.span))
        return out


TAGGER = MethodDef(
    "tagger",
    TaggerConfig,
    TaggerMethod,
    aliases={"th": "threshold", "pth": "passage_threshold", "open": "open_point"},
    summary="naive candidates read whole by the evidence tagger; the sentences it keeps",
)
