"""What every method shares: the :class:`Retrieval` it returns, the :class:`Method` base with
answer generation and tracing, the one hard token ceiling, and :class:`MethodDef`, the entry a
method registers under its name.

A method turns questions into a :class:`Retrieval` (the selected context, every candidate it
scored, a trace and per-stage timings); :meth:`Method.ask` adds the LLM answer. Evaluation with
``--no-llm`` uses ``retrieve`` alone, so context metrics are measured on exactly the context the
LLM would have seen.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ragsieve.checks import invisible, invisible_note
from ragsieve.defaults import DEFAULT_MAX_TOKENS
from ragsieve.errors import ConfigError, InputError
from ragsieve.llm.budget import PromptBudget, llm_window
from ragsieve.llm.cost import answer_prices, llm_cost
from ragsieve.methods.answer_line import (
    abstain,
    answer_line,
    span_only,
    unanswerable,
    with_floor,
)
from ragsieve.methods.trace import scored_trace, selection_trace, timed
from ragsieve.progress import Progress, reported
from ragsieve.rerank.base import Reranker, rerank
from ragsieve.retrieve.base import DocFilter, Retriever
from ragsieve.select.base import Selector, make_context
from ragsieve.text import count_tokens
from ragsieve.types import Answer, Context, Scored, SourceSpan, Usage

if TYPE_CHECKING:
    from ragsieve.index import Index
    from ragsieve.llm import LLM


@dataclass
class Retrieval:
    """The context chosen for one question and how it was chosen."""

    question: str
    context: Context
    candidates: list[Scored]
    trace: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    #: The tagger's answer span in the source (None: the method gives none).
    span: SourceSpan | None = None


@dataclass(frozen=True)
class AnswerCall:
    """How every LLM answer call for one question runs (:func:`generate_answer`, and SAGE's
    feedback rounds): the ``options`` of a multiple-choice question, the answer's
    ``max_tokens``, the prices (dollars per 1M tokens) of its ``cost``, the method's
    ``config`` for the trace, the ``prompt_budget`` every call spends from (None: only the
    LLM's window bounds a call), and where ``progress`` is reported."""

    options: list[str] | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    price_in_per_m: float | None = None
    price_out_per_m: float | None = None
    config: dict[str, Any] = field(default_factory=dict)
    prompt_budget: PromptBudget | None = None
    progress: Progress | None = None

    def budget(self, llm: LLM) -> PromptBudget:
        """The prompt budget of this question's calls to ``llm``."""
        if self.prompt_budget is not None:
            return self.prompt_budget
        return PromptBudget(window=llm_window(llm))


@dataclass(frozen=True)
class MethodDef:
    """A method as the registry knows it: its typed config, how to build it, and the spellings
    its spec accepts (``sage[n=20]`` for ``N``). ``needs_sentences``: it reads the index's
    sentence table, so the evaluation harness builds its index with ``--sentences``."""

    name: str
    config: type
    build: Callable[[Index, Any], Method]
    aliases: Mapping[str, str] = field(default_factory=dict)
    needs_sentences: bool = False
    summary: str = ""


def check_questions(questions: list[str]) -> None:
    for q in questions:
        if invisible(q):
            raise InputError(f"the question is empty{invisible_note(q)}")


def cap_context(context: Context, budget: int | None) -> tuple[Context, int]:
    """``context`` within ``budget`` tokens as the LLM reads it (the chunks joined by blank
    lines, counted whole), dropping the lowest-scored chunk until it fits; returns it and the
    number dropped.

    Selectors add up per-chunk counts, and joining can add a token or two at the seams: this is
    the one place where ``--budget`` becomes a hard ceiling for every method.
    """
    if budget is None:
        return context, 0
    chunks = list(context.chunks)
    dropped = 0
    while chunks and count_tokens("\n\n".join(s.chunk.text for s in chunks)) > budget:
        worst = min(range(len(chunks)), key=lambda i: (chunks[i].score, -i))
        chunks.pop(worst)
        dropped += 1
    return (make_context(chunks), dropped) if dropped else (context, 0)


def capped(r: Retrieval, budget: int | None) -> Retrieval:
    """``r`` with its context under the ceiling; the trace says what the cap dropped."""
    ctx, dropped = cap_context(r.context, budget)
    if not dropped:
        return r
    trace = {
        **r.trace,
        "selected": [s.chunk.id for s in ctx.chunks],
        "context_tokens": ctx.n_tokens,
        "budget_cap": {"budget": budget, "dropped": dropped},
    }
    return Retrieval(r.question, ctx, r.candidates, trace, r.timings, r.span)


class Method:
    """Base class: subclasses implement :meth:`_retrieve`; :meth:`retrieve` checks the
    questions and applies the token ceiling; :meth:`ask` adds generation."""

    name = "method"
    config: Any = None
    #: Where the method reports its stages while it works (None: silent); the CLI sets it.
    progress: Progress | None = None

    def __init__(self, index: Index) -> None:
        self.index = index

    def stage(self, what: str) -> contextlib.AbstractContextManager[None]:
        """``with self.stage("rerank 30 chunks"):`` reports ``"<method>: rerank 30 chunks"``."""
        return reported(self.progress, f"{self.name}: {what}")

    @property
    def budget(self) -> int | None:
        """The hard token ceiling of every context this method returns (None: none)."""
        return getattr(self.config, "budget", None)

    def retrieve(self, questions: list[str], doc_ids: DocFilter = None) -> list[Retrieval]:
        """Select the context for each question; ``doc_ids`` restricts each to some documents."""
        check_questions(questions)
        return [capped(r, self.budget) for r in self._retrieve(questions, doc_ids)]

    def _retrieve(self, questions: list[str], doc_ids: DocFilter) -> list[Retrieval]:
        raise NotImplementedError

    def gives_spans(self) -> bool:
        """Whether :meth:`retrieve` locates an answer span (the tagger with a span head): the
        evaluation then scores the span of every question, a missing one as a wrong answer."""
        return False

    def config_dict(self) -> dict[str, Any]:
        cfg = getattr(self, "config", None)
        return asdict(cfg) if cfg is not None else {}

    def ask(self, question: str, llm: LLM | None, **options: Any) -> Answer:
        """Retrieve, then answer with ``llm`` (None: with the answer span alone); ``options``
        are :meth:`answer`'s keywords, declared there once. The answer carries the full trace."""
        return self.answer(self.retrieve([question])[0], llm, **options)

    def answer(
        self,
        r: Retrieval,
        llm: LLM | None,
        *,
        label: str | None = None,
        options: list[str] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        price_in_per_m: float | None = None,
        price_out_per_m: float | None = None,
        total_budget: int | None = None,
    ) -> Answer:
        """Answer from an already retrieved context.

        Split from :meth:`ask` so that the evaluation runner (which retrieves in batches) goes
        through the same generation as ``ask``. A method with a ``feedback`` stage (SAGE's
        self-feedback, :mod:`ragsieve.methods.feedback`) hands the first answer to it.
        ``label`` names the method in the answer (an evaluation spec label).
        ``price_in_per_m`` and ``price_out_per_m`` (dollars per 1M tokens) price the answer's
        ``cost``; one not given is 0 for a local model and SAGE's example price for a remote one
        (:func:`~ragsieve.llm.cost.answer_prices`).
        ``total_budget`` bounds the prompt tokens of every LLM call for this question
        (:mod:`ragsieve.llm.budget`): the first context is trimmed to fit, and feedback stops
        before a call that would not fit. The LLM's own context window (``n_ctx``, when the
        backend knows it) bounds every call the same way: the context is trimmed, lowest score
        first, until prompt and answer fit (``trace["window_cap"]``), whatever ``--budget``.
        The answer carries the retrieval's answer span (``Answer.span``); with ``llm`` None
        (``--llm none``) no LLM is called and the span's text is the answer (``""`` and no span
        when the method gives none): :func:`span_answer`.
        """
        if total_budget is not None and (
            not isinstance(total_budget, int) or isinstance(total_budget, bool) or total_budget < 1
        ):
            raise ConfigError(f"total budget must be a positive number of tokens: {total_budget!r}")
        name = label or self.name
        why = unanswerable(r.question, r.context, [c.chunk.text for c in r.candidates])
        if why is not None:  # nothing to read: no LLM is asked
            return abstain(span_answer(name, r, self.config_dict()), why)
        if llm is None:
            return with_floor(span_answer(name, r, self.config_dict()))
        # Prices not given: 0 for a local model, SAGE's example prices for a remote one.
        price_in_per_m, price_out_per_m = answer_prices(llm, price_in_per_m, price_out_per_m)
        how = AnswerCall(
            options=options,
            max_tokens=max_tokens,
            price_in_per_m=price_in_per_m,
            price_out_per_m=price_out_per_m,
            config=self.config_dict(),
            prompt_budget=PromptBudget(total_budget, window=llm_window(llm)),
            progress=self.progress,
        )
        first = generate_answer(name, r, llm, how)
        loop = self.feedback_for(llm)
        final = loop.run(name, r, first, llm, how) if loop is not None else first
        return answer_line(final, r.span, llm, multiple_choice=bool(options))

    def feedback_for(self, llm: LLM) -> Any:
        """The feedback stage that judges answers of ``llm`` (None: answer once)."""
        return getattr(self, "feedback", None)


def generate_answer(
    method: str,
    r: Retrieval,
    llm: LLM,
    how: AnswerCall | None = None,
    *,
    call: str = "LLM answer",
) -> Answer:
    """One LLM call over the retrieved context, run as ``how`` says (None: the defaults of
    :class:`AnswerCall`); returns the :class:`Answer` with its trace. ``how.progress`` hears
    the call as the stage ``"<method>: <call>"``.

    With a bounded ``how.prompt_budget`` the lowest-scored chunks are dropped until the prompt
    fits what is left of it (``trace["total_budget_cap"]``); the call is recorded there.
    """
    how = how if how is not None else AnswerCall()
    budget = how.budget(llm)
    max_tokens = how.max_tokens
    timings = dict(r.timings)
    messages, context, dropped = fit_prompt(r, how.options, budget, max_tokens)
    n_units = len(context.chunks)
    with reported(how.progress, f"{method}: {call} ({n_units} units, {context.n_tokens} tokens)"):
        stop = timed(timings, "generate")
        gen = llm.generate(messages, max_tokens=max_tokens, temperature=0.0)
        stop()
    usage = gen.usage
    budget.record("answer", messages, usage)
    cost = llm_cost(
        usage.prompt_tokens,
        usage.completion_tokens,
        *answer_prices(llm, how.price_in_per_m, how.price_out_per_m),
    )
    trace = {
        **r.trace,
        "config": how.config,
        "llm": {
            "model": gen.model or getattr(llm, "name", ""),
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "finish_reason": gen.finish_reason,
            **budget.trace(),
        },
    }
    if dropped["total"] or dropped["window"]:
        trace["selected"] = [s.chunk.id for s in context.chunks]
        trace["context_tokens"] = context.n_tokens
    if dropped["total"]:
        trace["total_budget_cap"] = {"total_budget": budget.total, "dropped": dropped["total"]}
    if dropped["window"]:
        trace["window_cap"] = {
            "n_ctx": budget.window,
            "max_tokens": max_tokens,
            "dropped": dropped["window"],
        }
    return Answer(
        question=r.question,
        text=gen.text.strip(),
        context=context,
        usage=usage,
        cost=cost,
        timings=timings,
        trace=trace,
        method=method,
    )


def span_answer(method: str, r: Retrieval, config: dict[str, Any] | None = None) -> Answer:
    """The answer without an LLM: the retrieval's answer span (its text; ``""`` when the
    method gives none), the context it was found in, no tokens and no cost. Its line says
    which (:func:`~ragsieve.methods.answer_line.span_only`: ``line.kind`` is ``"span"`` or
    ``"none"``), and the trace's ``llm`` is null."""
    bare = Answer(
        question=r.question,
        text="",
        context=r.context,
        usage=Usage(),
        cost=0.0,
        timings=dict(r.timings),
        trace={**r.trace, "config": config or {}, "llm": None},
        method=method,
    )
    return span_only(bare, r.span)


def fit_prompt(
    r: Retrieval, options: list[str] | None, budget: PromptBudget, max_tokens: int = 0
) -> tuple[list[dict[str, str]], Context, dict[str, int]]:
    """The answer prompt for ``r``, its context trimmed (lowest score first) until the prompt
    fits ``budget`` and, with a ``max_tokens`` answer, the LLM's window; returns the messages,
    the context and the chunks dropped for each (``total``, ``window``). ConfigError when not
    even the question fits."""
    from ragsieve.llm.prompts import build_answer_messages

    chunks = list(r.context.chunks)
    dropped = {"total": 0, "window": 0}
    while True:
        messages = build_answer_messages(r.question, [s.chunk.text for s in chunks], options)
        cause = (
            "total"
            if not budget.room(messages)
            else "window"
            if not budget.fits_window(messages, max_tokens)
            else None
        )
        if cause is None:
            break
        if not chunks and cause == "total":
            raise ConfigError(
                f"total budget {budget.total} leaves {budget.total - budget.spent} tokens, "
                f"fewer than the question's prompt alone ({budget.estimate(messages)}): "
                "raise --total-budget"
            )
        if not chunks:
            raise ConfigError(
                f"the LLM's context window ({budget.window} tokens) cannot hold the question's "
                f"prompt ({budget.estimate(messages)}) and a {max_tokens}-token answer: raise "
                "--llm-ctx or lower --max-tokens"
            )
        worst = min(range(len(chunks)), key=lambda i: (chunks[i].score, -i))
        chunks.pop(worst)
        dropped[cause] += 1
    trimmed = dropped["total"] or dropped["window"]
    return messages, (make_context(chunks) if trimmed else r.context), dropped


def settled_answer(
    method: str,
    chosen: Answer,
    usage: Usage,
    how: AnswerCall,
    timings: dict[str, float],
    record: dict[str, Any],
) -> Answer:
    """The answer a stage settles on after several LLM calls (SAGE's feedback, the wider
    second reading): ``chosen``'s text and context, with every call's tokens (``usage``) in
    its usage, cost and ``trace["llm"]`` (the question's prompt budget too, where it has one),
    the stage's ``timings``, and its ``record`` (one key: ``feedback`` or ``widen``) in the
    trace."""
    llm_trace = {
        **chosen.trace.get("llm", {}),
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        **(how.prompt_budget.trace() if how.prompt_budget is not None else {}),
    }
    return Answer(
        question=chosen.question,
        text=chosen.text,
        context=chosen.context,
        usage=usage,
        cost=llm_cost(
            usage.prompt_tokens, usage.completion_tokens, how.price_in_per_m, how.price_out_per_m
        ),
        timings=timings,
        trace={**chosen.trace, "llm": llm_trace, **record},
        method=method,
    )


def first_stage(
    retriever: Retriever, questions: list[str], depth: int, doc_ids: DocFilter
) -> tuple[list[list[Scored]], float]:
    """Each question's top ``depth`` candidates, and the retrieval seconds per question (the
    batch is retrieved at once, so its time is shared out evenly)."""
    t0 = time.perf_counter()
    hits = retriever.retrieve(questions, depth, doc_ids)
    return hits, (time.perf_counter() - t0) / max(1, len(questions))


class StagedMethod(Method):
    """The chunk-level composition of SAGE's Fig. 1: retrieve ``depth`` candidates, rerank
    them when a reranker is set, select. Naive RAG and SAGE differ only in their stages."""

    retriever: Retriever
    reranker: Reranker | None = None

    def depth(self) -> int:
        raise NotImplementedError

    def selector(self) -> Selector:
        raise NotImplementedError

    def trace_info(self) -> dict[str, Any]:
        """Method-specific trace keys (written before the candidates and the selection)."""
        return {}

    def _retrieve(self, questions: list[str], doc_ids: DocFilter) -> list[Retrieval]:
        with self.stage(f"retrieve {self.depth()} candidates"):
            hits, per_q = first_stage(self.retriever, questions, self.depth(), doc_ids)
        selector = self.selector()
        out: list[Retrieval] = []
        for q, cands in zip(questions, hits, strict=True):
            t: dict[str, float] = {"retrieve": per_q}
            if self.reranker is not None:
                stop = timed(t, "rerank")
                with self.stage(f"rerank {len(cands)} chunks"):
                    cands = rerank(self.reranker, q, cands)
                stop()
            stop = timed(t, "select")
            sel = selector.select(q, cands)
            stop()
            trace = {
                "method": self.name,
                **self.trace_info(),
                "candidates": scored_trace(cands),
                **selection_trace(sel),
            }
            out.append(Retrieval(q, sel.context, cands, trace, t))
        return out
