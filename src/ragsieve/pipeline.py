"""Methods as compositions of stages: retrieve -> (rerank) -> select -> generate.

A method turns questions into a :class:`Retrieval` (the selected context, every candidate it
scored, a trace and per-stage timings); :meth:`Method.ask` adds the LLM answer. Evaluation with
``--no-llm`` uses ``retrieve`` alone, so context metrics are measured on exactly the context the
LLM would have seen.

``naive`` (top-k or fill-a-budget) and ``sage`` (rerank N candidates, gradient cut, LLM
self-feedback; see docs/sage.md) live here; CARROT, SAKI and Pareto register their own methods.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ragsieve.errors import ConfigError, InputError
from ragsieve.evaluate.cost import DEFAULT_PRICE_IN_PER_M, DEFAULT_PRICE_OUT_PER_M, llm_cost
from ragsieve.rerank import get_reranker, rerank
from ragsieve.rerank.base import DEFAULT_RERANKER
from ragsieve.retrieve import get_retriever
from ragsieve.retrieve.base import DocFilter
from ragsieve.select import BudgetSelector, GradientCutSelector, TopKSelector
from ragsieve.select.base import Selection, Selector
from ragsieve.types import Answer, Context, Scored, Usage

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


def _check_questions(questions: list[str]) -> None:
    for q in questions:
        if not q or not q.strip():
            raise InputError("the question is empty")


def _selection_trace(sel: Selection) -> dict[str, Any]:
    """The trace keys every method records about its selected context."""
    return {
        "selection": sel.trace,
        "selected": [s.chunk.id for s in sel.context.chunks],
        "context_tokens": sel.context.n_tokens,
    }


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
        return self.answer(
            r,
            llm,
            options=options,
            max_tokens=max_tokens,
            price_in_per_m=price_in_per_m,
            price_out_per_m=price_out_per_m,
        )

    def answer(
        self,
        r: Retrieval,
        llm: LLM,
        *,
        label: str | None = None,
        options: list[str] | None = None,
        max_tokens: int = 256,
        price_in_per_m: float = PRICE_IN_PER_M,
        price_out_per_m: float = PRICE_OUT_PER_M,
    ) -> Answer:
        """Answer from an already retrieved context.

        Split from :meth:`ask` so that the evaluation runner (which retrieves in batches) goes
        through the same generation as ``ask``, including a method's own loop such as SAGE's
        self-feedback. ``label`` names the method in the answer (an evaluation spec label).
        """
        return generate_answer(
            label or self.name,
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
        _check_questions(questions)
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
                **_selection_trace(sel),
            }
            out.append(Retrieval(q, sel.context, cands, trace, t))
        return out


SAGE_SELECTIONS = ("gradient", "top-k")
SAGE_FEEDBACK_STEPS = ("context", "min_k")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class SageConfig:
    """SAGE (Sections V-VI): retrieve ``N`` chunks, rerank, cut at the first sharp score drop
    (``min_k``, ``g``), answer, then let the LLM judge its answer and widen or narrow the
    context until the score reaches ``fs`` or ``max_rounds`` feedback rounds have run.

    Defaults are the paper's hyper-parameters. Segmentation is not configured here: it is a
    property of the index (``ragsieve index --chunker ...``), and the method works on any index.
    """

    #: Candidates fetched from the index and scored by the reranker.
    N: int = 30
    #: Minimum number of chunks the gradient cut keeps.
    min_k: int = 7
    #: Gradient threshold: the cut ends at the first relative score drop larger than ``g``.
    g: float = 0.3
    #: Feedback score (1-10) at or above which an answer is accepted.
    fs: int = 9
    #: At most this many feedback rounds (LLM judgements) per question.
    max_rounds: int = 3
    #: False: one answer, no self-feedback (the paper's "without feedback" ablation).
    feedback: bool = True
    #: Optional token ceiling on the context (stops the cut; wins over ``min_k``).
    budget: int | None = None
    retriever: str = "dense"
    reranker: str = DEFAULT_RERANKER
    #: "gradient" (SAGE) or "top-k": a fixed top ``min_k``, the "without selection" ablation.
    selection: str = "gradient"
    #: How "less"/"more context" moves the selection: "context" (default) sets ``min_k`` to
    #: the current number of chunks -/+ 1 and, for less, caps the cut there; "min_k" is the
    #: paper's literal ``min_k -/+ 1`` (often a no-op: the cut usually runs past ``min_k``).
    feedback_step: str = "context"
    #: Completion cap of a feedback call (the reply is two short lines).
    feedback_max_tokens: int = 48

    def __post_init__(self) -> None:
        for name in ("N", "min_k", "fs", "max_rounds", "feedback_max_tokens"):
            if not _is_int(getattr(self, name)):
                raise ConfigError(f"{name} must be an integer, got {getattr(self, name)!r}")
        if self.N < 1 or self.min_k < 1 or self.feedback_max_tokens < 1:
            raise ConfigError("N, min_k and feedback_max_tokens must be at least 1")
        if not isinstance(self.g, int | float) or not 0.0 <= self.g <= 1.0:
            raise ConfigError(f"g is a relative drop and must be in [0, 1], got {self.g!r}")
        if not 1 <= self.fs <= 10:
            raise ConfigError(f"fs is a feedback score and must be in 1..10, got {self.fs}")
        if self.max_rounds < 0:
            raise ConfigError(f"max_rounds must be >= 0, got {self.max_rounds}")
        if not isinstance(self.feedback, bool):
            raise ConfigError(f"feedback must be true or false, got {self.feedback!r}")
        if self.budget is not None and (not _is_int(self.budget) or self.budget < 1):
            raise ConfigError(f"budget must be a positive number of tokens, got {self.budget!r}")
        if self.selection not in SAGE_SELECTIONS:
            raise ConfigError(f"selection must be one of {', '.join(SAGE_SELECTIONS)}")
        if self.feedback_step not in SAGE_FEEDBACK_STEPS:
            raise ConfigError(f"feedback_step must be one of {', '.join(SAGE_FEEDBACK_STEPS)}")


def _chunk_ids(ctx: Context) -> tuple[str, ...]:
    return tuple(s.chunk.id for s in ctx.chunks)


class SageMethod(Method):
    """SAGE: dense (or bm25/hybrid) top-``N`` -> reranker -> gradient cut -> LLM, with the
    LLM's self-feedback re-selecting the context (see docs/sage.md).

    :meth:`retrieve` is the no-LLM path (what ``ragsieve eval --no-llm`` measures);
    :meth:`answer` adds generation and the feedback loop.
    """

    name = "sage"

    def __init__(self, index: Index, config: SageConfig | None = None) -> None:
        super().__init__(index)
        self.config = config or SageConfig()
        c = self.config
        self.retriever = get_retriever(c.retriever, index)
        self.reranker = get_reranker(c.reranker, index.config.embedder)

    def selector(self, min_k: int, max_k: int | None = None) -> Selector:
        """The selection stage for a given ``min_k`` (the feedback loop moves it)."""
        c = self.config
        if c.selection == "top-k":
            return TopKSelector(min_k if max_k is None else min(min_k, max_k), c.budget)
        return GradientCutSelector(min_k, c.g, c.budget, max_k)

    def retrieve(self, questions: list[str], doc_ids: DocFilter = None) -> list[Retrieval]:
        _check_questions(questions)
        c = self.config
        timings: dict[str, float] = {}
        stop = _timed(timings, "retrieve")
        hits = self.retriever.retrieve(questions, c.N, doc_ids)
        stop()
        per_q = timings["retrieve"] / max(1, len(questions))
        selector = self.selector(c.min_k)
        out: list[Retrieval] = []
        for q, cands in zip(questions, hits, strict=True):
            t: dict[str, float] = {"retrieve": per_q}
            stop = _timed(t, "rerank")
            cands = rerank(self.reranker, q, cands)
            stop()
            stop = _timed(t, "select")
            sel = selector.select(q, cands)
            stop()
            trace = {
                "method": self.name,
                "retriever": c.retriever,
                "reranker": c.reranker,
                "N": c.N,
                "candidates": _scored_trace(cands),
                **_selection_trace(sel),
            }
            out.append(Retrieval(q, sel.context, cands, trace, t))
        return out

    def answer(
        self,
        r: Retrieval,
        llm: LLM,
        *,
        label: str | None = None,
        options: list[str] | None = None,
        max_tokens: int = 256,
        price_in_per_m: float = PRICE_IN_PER_M,
        price_out_per_m: float = PRICE_OUT_PER_M,
    ) -> Answer:
        """Answer, then run SAGE's self-feedback loop (Sec. VI, Fig. 6) unless disabled.

        Round ``i`` asks the LLM to judge answer ``i`` (score 1-10, context adjustment -1/+1):

        * score >= ``fs``: accept (stop ``accepted``);
        * otherwise move ``min_k`` by the adjustment (see ``SageConfig.feedback_step``),
          re-run the cut over the same reranked candidates and answer again; the next round
          judges that answer. At most ``max_rounds`` judgements, so the last answer generated
          is always judged (stop ``max_rounds``);
        * a reply without a readable score stops the loop and keeps the current answer (stop
          ``unparsed``); a score without an adjustment stops it too (``no_adjustment``); an
          adjustment that leaves the candidate range stops it (``bounds``), and so does one
          whose re-cut gives a context already answered (``unchanged``): at temperature 0 it
          would only repeat the same answer and judgement.

        Otherwise the best-scored answer is returned (the earliest on ties). Its usage and
        cost include every call of the loop; ``trace["feedback"]`` records each round.
        """
        name = label or self.name
        gen_kw: dict[str, Any] = {
            "options": options,
            "max_tokens": max_tokens,
            "price_in_per_m": price_in_per_m,
            "price_out_per_m": price_out_per_m,
            "config": self.config_dict(),
        }
        first = generate_answer(name, r, llm, **gen_kw)
        if not self.config.feedback or self.config.max_rounds < 1:
            return first
        return self._feedback_loop(name, r, first, llm, gen_kw)

    def _next_bounds(
        self, min_k: int, n_chunks: int, adjustment: int, n_candidates: int
    ) -> tuple[int, int | None] | None:
        """``(min_k, max_k)`` for the next selection, or None when it leaves 1..N."""
        if self.config.feedback_step == "min_k":
            new = min_k + adjustment
            return (new, None) if 1 <= new <= n_candidates else None
        if adjustment > 0:
            return (n_chunks + 1, None) if n_chunks + 1 <= n_candidates else None
        return (n_chunks - 1, n_chunks - 1) if n_chunks - 1 >= 1 else None

    def _feedback_loop(
        self, name: str, r: Retrieval, first: Answer, llm: LLM, gen_kw: dict[str, Any]
    ) -> Answer:
        from ragsieve.llm.prompts import build_feedback_messages, parse_feedback

        c = self.config
        timings = dict(first.timings)
        answer_usage = first.usage
        feedback_usage = Usage()
        rounds: list[dict[str, Any]] = []
        judged: list[Answer] = []
        scores: list[int | None] = []
        current = first
        min_k, max_k = c.min_k, None
        seen = {_chunk_ids(first.context)}
        reason = "max_rounds"
        for rnd in range(1, c.max_rounds + 1):
            messages = build_feedback_messages(
                r.question,
                [s.chunk.text for s in current.context.chunks],
                current.text,
                gen_kw["options"],
            )
            stop = _timed(timings, "feedback")
            gen = llm.generate(messages, max_tokens=c.feedback_max_tokens, temperature=0.0)
            stop()
            feedback_usage = feedback_usage + gen.usage
            fb = parse_feedback(gen.text)
            rounds.append(
                {
                    "round": rnd,
                    "min_k": min_k,
                    "max_k": max_k,
                    "selected": list(_chunk_ids(current.context)),
                    "n_chunks": len(current.context.chunks),
                    "context_tokens": current.context.n_tokens,
                    "cut_reason": current.trace.get("selection", {}).get("reason"),
                    "answer": current.text,
                    "answer_tokens": {
                        "prompt": current.usage.prompt_tokens,
                        "completion": current.usage.completion_tokens,
                    },
                    "feedback": {
                        "reply": gen.text.strip(),
                        "score": fb.score,
                        "adjustment": fb.adjustment,
                    },
                    "feedback_tokens": {
                        "prompt": gen.usage.prompt_tokens,
                        "completion": gen.usage.completion_tokens,
                    },
                }
            )
            judged.append(current)
            scores.append(fb.score)
            if fb.score is None:
                reason = "unparsed"
                break
            if fb.score >= c.fs:
                reason = "accepted"
                break
            if fb.adjustment is None:
                reason = "no_adjustment"
                break
            if rnd == c.max_rounds:
                break
            bounds = self._next_bounds(
                min_k, len(current.context.chunks), fb.adjustment, len(r.candidates)
            )
            if bounds is None:
                reason = "bounds"
                break
            min_k, max_k = bounds
            stop = _timed(timings, "select")
            sel = self.selector(min_k, max_k).select(r.question, r.candidates)
            stop()
            key = _chunk_ids(sel.context)
            if key in seen:
                reason = "unchanged"
                break
            seen.add(key)
            again = Retrieval(
                r.question, sel.context, r.candidates, {**r.trace, **_selection_trace(sel)}, {}
            )
            current = generate_answer(name, again, llm, **gen_kw)
            timings["generate"] = timings.get("generate", 0.0) + current.timings["generate"]
            answer_usage = answer_usage + current.usage

        if reason == "unparsed":
            best = len(judged) - 1
        else:
            best = max(range(len(judged)), key=lambda i: (scores[i] or 0, -i))
        chosen = judged[best]
        usage = answer_usage + feedback_usage
        cost = llm_cost(
            usage.prompt_tokens,
            usage.completion_tokens,
            gen_kw["price_in_per_m"],
            gen_kw["price_out_per_m"],
        )
        trace = {
            **chosen.trace,
            "llm": {
                **chosen.trace.get("llm", {}),
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "calls": len(judged) + len(rounds),
            },
            "feedback": {
                "fs": c.fs,
                "max_rounds": c.max_rounds,
                "step": c.feedback_step,
                "stop": reason,
                "chosen_round": best + 1,
                "rounds": rounds,
                "tokens": {
                    "answer": {
                        "prompt": answer_usage.prompt_tokens,
                        "completion": answer_usage.completion_tokens,
                    },
                    "feedback": {
                        "prompt": feedback_usage.prompt_tokens,
                        "completion": feedback_usage.completion_tokens,
                    },
                },
            },
        }
        return Answer(
            question=r.question,
            text=chosen.text,
            context=chosen.context,
            usage=usage,
            cost=cost,
            timings=timings,
            trace=trace,
            method=name,
        )


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

#: Spellings accepted for SAGE's ``N`` in ``sage[...]`` specs and keyword options.
_SAGE_ALIASES = {"n": "N", "candidates": "N"}


def _sage_factory(
    index: Index,
    *,
    k: int | None = None,
    budget: int | None = None,
    retriever: str = "dense",
    reranker: str | None = None,
    **options: Any,
) -> Method:
    """SAGE with ``SageConfig`` fields as options (``sage[min_k=5,feedback=false]``).

    ``k`` is accepted and ignored: the CLI, the evaluation runner and the server always pass
    their top-k, while SAGE sizes its context with the gradient cut (set ``min_k`` instead).
    ``reranker=None`` means "not chosen" there, so it selects the default reranker: SAGE
    always reranks. Unknown options are an error rather than silently ignored, so that a typo
    in an ablation does not quietly run the default.
    """
    del k
    opts = {_SAGE_ALIASES.get(key, key): value for key, value in options.items()}
    allowed = {f.name for f in fields(SageConfig)} - {"budget", "retriever", "reranker"}
    unknown = sorted(set(opts) - allowed)
    if unknown:
        raise ConfigError(
            f"unknown sage option(s) {', '.join(unknown)}: use {', '.join(sorted(allowed))}"
        )
    cfg = SageConfig(
        budget=budget, retriever=retriever, reranker=reranker or DEFAULT_RERANKER, **opts
    )
    return SageMethod(index, cfg)


register_method("sage")(_sage_factory)


def known_methods() -> list[str]:
    return sorted(_METHODS)


def method_needs_sentences(name: str) -> bool:
    """Whether a method reads the index's ``sentences`` table (pareto, saki): the evaluation
    harness then builds its index with ``--sentences``."""
    return bool(getattr(_METHODS.get(name), "needs_sentences", False))


def get_method(name: str, index: Index | None, **options: Any) -> Method:
    """Instantiate a method by name with CLI-style options (k, budget, retriever, reranker)."""
    if name not in _METHODS:
        raise ConfigError(f"unknown method {name!r}: use one of {', '.join(known_methods())}")
    return _METHODS[name](index, **options)


# CARROT (MCTS over ordered chunk combinations + configuration agent) registers itself.
import ragsieve.carrot  # noqa: E402

# The combined method (every stage at sentence level) registers itself.
import ragsieve.full  # noqa: E402, F401

# Sentence-level methods register themselves (ParetoRAG, SAKI-RAG's Dual-Axis Retriever).
from ragsieve.retrieve import dual_axis, pareto  # noqa: E402, F401
