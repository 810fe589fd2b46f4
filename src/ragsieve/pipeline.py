"""Methods as compositions of stages: retrieve -> (rerank) -> select -> generate.

A method turns questions into a :class:`Retrieval` (the selected context, every candidate it
scored, a trace and per-stage timings); :meth:`Method.ask` adds the LLM answer. Evaluation with
``--no-llm`` uses ``retrieve`` alone, so context metrics are measured on exactly the context the
LLM would have seen.

Only ``naive`` lives here for now; SAGE, CARROT, SAKI and Pareto register their own methods.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ragsieve.errors import ConfigError, InputError
from ragsieve.evaluate.cost import DEFAULT_PRICE_IN_PER_M, DEFAULT_PRICE_OUT_PER_M, llm_cost
from ragsieve.rerank import get_reranker, rerank
from ragsieve.retrieve import get_retriever
from ragsieve.retrieve.base import DocFilter
from ragsieve.select import BudgetSelector, TopKSelector
from ragsieve.select.base import Selector
from ragsieve.types import Answer, Context, Scored

if TYPE_CHECKING:
    from ragsieve.index import Index
    from ragsieve.llm import LLM

#: Default prices for SAGE's cost (Eq. 1), dollars per 1M tokens: the only prices SAGE states
#: (Sec. II-B); configurable everywhere (see ragsieve.evaluate.cost.PRICES).
PRICE_IN_PER_M = DEFAULT_PRICE_IN_PER_M
PRICE_OUT_PER_M = DEFAULT_PRICE_OUT_PER_M


@dataclass
class Retrieval:
    """The context chosen for one question and how it was chosen."""

    question: str
    context: Context
    candidates: list[Scored]
    trace: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class NaiveConfig:
    """Naive RAG: fixed chunks, dense top-k (k = 10) or filled up to ``budget`` tokens."""

    k: int = 10
    budget: int | None = None
    retriever: str = "dense"
    #: None keeps the retriever's order (Naive RAG); a name reranks first.
    reranker: str | None = None
    #: How many candidates to fetch when a budget or a reranker needs more than k.
    candidates: int = 50


def _timed(timings: dict[str, float], stage: str) -> Callable[[], None]:
    t0 = time.perf_counter()

    def stop() -> None:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0

    return stop


def _scored_trace(items: list[Scored], limit: int = 50) -> list[dict[str, Any]]:
    return [
        {
            "chunk_id": s.chunk.id,
            "score": round(s.score, 6),
            "scores": {k: round(v, 6) for k, v in s.scores.items()},
            "tokens": s.chunk.n_tokens,
        }
        for s in items[:limit]
    ]


class Method:
    """Base class: subclasses implement :meth:`retrieve`; :meth:`ask` adds generation."""

    name = "method"

    def __init__(self, index: Index) -> None:
        self.index = index

    def retrieve(self, questions: list[str], doc_ids: DocFilter = None) -> list[Retrieval]:
        """Select the context for each question; ``doc_ids`` restricts each to some documents."""
        raise NotImplementedError

    def config_dict(self) -> dict[str, Any]:
        cfg = getattr(self, "config", None)
        return asdict(cfg) if cfg is not None else {}

    def ask(
        self,
        question: str,
        llm: LLM,
        *,
        options: list[str] | None = None,
        max_tokens: int = 256,
        price_in_per_m: float = PRICE_IN_PER_M,
        price_out_per_m: float = PRICE_OUT_PER_M,
    ) -> Answer:
        """Retrieve, then answer with ``llm``; the answer carries the full trace."""
        r = self.retrieve([question])[0]
        return generate_answer(
            self.name,
            r,
            llm,
            options=options,
            max_tokens=max_tokens,
            price_in_per_m=price_in_per_m,
            price_out_per_m=price_out_per_m,
            config=self.config_dict(),
        )


def generate_answer(
    method: str,
    r: Retrieval,
    llm: LLM,
    *,
    options: list[str] | None = None,
    max_tokens: int = 256,
    price_in_per_m: float = PRICE_IN_PER_M,
    price_out_per_m: float = PRICE_OUT_PER_M,
    config: dict[str, Any] | None = None,
) -> Answer:
    """One LLM call over the retrieved context; returns the :class:`Answer` with its trace."""
    from ragsieve.llm.prompts import build_answer_messages

    timings = dict(r.timings)
    stop = _timed(timings, "generate")
    messages = build_answer_messages(
        r.question, [s.chunk.text for s in r.context.chunks], options=options
    )
    gen = llm.generate(messages, max_tokens=max_tokens, temperature=0.0)
    stop()
    usage = gen.usage
    cost = llm_cost(usage.prompt_tokens, usage.completion_tokens, price_in_per_m, price_out_per_m)
    trace = {
        **r.trace,
        "config": config or {},
        "llm": {
            "model": gen.model or getattr(llm, "name", ""),
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "finish_reason": gen.finish_reason,
        },
    }
    return Answer(
        question=r.question,
        text=gen.text.strip(),
        context=r.context,
        usage=usage,
        cost=cost,
        timings=timings,
        trace=trace,
        method=method,
    )


class NaiveMethod(Method):
    """Naive RAG (SAGE's and CARROT's baseline): top-k by similarity, or fill a budget."""

    name = "naive"

    def __init__(self, index: Index, config: NaiveConfig | None = None) -> None:
        super().__init__(index)
        self.config = config or NaiveConfig()
        c = self.config
        if c.k < 1:
            raise ConfigError(f"k must be at least 1, got {c.k}")
        self.retriever = get_retriever(c.retriever, index)
        self.reranker = get_reranker(c.reranker, index.config.embedder) if c.reranker else None
        self.selector: Selector = (
            BudgetSelector(c.budget) if c.budget is not None else TopKSelector(c.k)
        )

    def retrieve(self, questions: list[str], doc_ids: DocFilter = None) -> list[Retrieval]:
        for q in questions:
            if not q or not q.strip():
                raise InputError("the question is empty")
        c = self.config
        depth = c.k if (c.budget is None and self.reranker is None) else max(c.k, c.candidates)
        timings: dict[str, float] = {}
        stop = _timed(timings, "retrieve")
        hits = self.retriever.retrieve(questions, depth, doc_ids)
        stop()
        per_q = timings["retrieve"] / max(1, len(questions))
        out: list[Retrieval] = []
        for q, cands in zip(questions, hits, strict=True):
            t: dict[str, float] = {"retrieve": per_q}
            if self.reranker is not None:
                stop = _timed(t, "rerank")
                cands = rerank(self.reranker, q, cands)
                stop()
            stop = _timed(t, "select")
            sel = self.selector.select(q, cands)
            stop()
            trace = {
                "method": self.name,
                "retriever": c.retriever,
                "reranker": c.reranker,
                "candidates": _scored_trace(cands),
                "selection": sel.trace,
                "selected": [s.chunk.id for s in sel.context.chunks],
                "context_tokens": sel.context.n_tokens,
            }
            out.append(Retrieval(q, sel.context, cands, trace, t))
        return out


_METHODS: dict[str, Callable[..., Method]] = {}


def register_method(name: str) -> Callable[[Callable[..., Method]], Callable[..., Method]]:
    def deco(factory: Callable[..., Method]) -> Callable[..., Method]:
        _METHODS[name] = factory
        return factory

    return deco


def _naive_factory(
    index: Index,
    *,
    k: int = 10,
    budget: int | None = None,
    retriever: str = "dense",
    reranker: str | None = None,
    **_: Any,
) -> Method:
    return NaiveMethod(
        index, NaiveConfig(k=k, budget=budget, retriever=retriever, reranker=reranker)
    )


register_method("naive")(_naive_factory)


def known_methods() -> list[str]:
    return sorted(_METHODS)


def get_method(name: str, index: Index | None, **options: Any) -> Method:
    """Instantiate a method by name with CLI-style options (k, budget, retriever, reranker)."""
    if name not in _METHODS:
        raise ConfigError(f"unknown method {name!r}: use one of {', '.join(known_methods())}")
    return _METHODS[name](index, **options)
