"""SAGE's LLM self-feedback (Sec. VI, Fig. 6) as a stage any method can wrap around its answer.

After the first answer, round ``i`` asks the LLM to judge answer ``i`` (score 1-10, context
adjustment -1/+1):

* score >= ``fs``: accept (stop ``accepted``);
* otherwise move ``min_k`` by the adjustment (``feedback_step``), re-run the method's cut over
  the same ranked candidates and answer again; the next round judges that answer. At most
  ``max_rounds`` judgements, so the last answer generated is always judged (``max_rounds``); a
  judgement whose prompt would overflow the LLM's context window is shown the context less its
  lowest-scored units (``judge_window_dropped`` in the round), and stops the loop (``window``)
  only when not even the question and the answer fit;
* a reply without a readable score stops the loop and keeps the current answer (``unparsed``);
  a score without an adjustment stops it too (``no_adjustment``); an adjustment that leaves the
  candidate range stops it (``bounds``), and so does one whose re-cut gives a context already
  answered (``unchanged``): at temperature 0 it would only repeat the same answer;
* with a whole-question budget (``total_budget``, :mod:`ragsieve.llm.budget`) the loop stops
  before a call that would not fit (``budget``): a judgement is made only when it fits with
  room for an answer as long as the current one (except the last round's, which only picks
  the best), and a new answer only when its prompt fits.

Otherwise the best-scored answer is returned (the earliest on ties); an answer generated on
the judge's advice but left unjudged by the budget is returned as it is. Its usage and cost
include every call of the loop; ``trace["feedback"]`` records each round and
``trace["llm"]["call_tokens"]`` each call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ragsieve.llm.prompts import build_answer_messages, build_feedback_messages, parse_feedback
from ragsieve.methods.base import (
    AnswerCall,
    Retrieval,
    capped,
    generate_answer,
    settled_answer,
)
from ragsieve.methods.trace import selection_trace, timed
from ragsieve.progress import reported
from ragsieve.select.base import Selector
from ragsieve.types import Answer, Context, Usage

if TYPE_CHECKING:
    from ragsieve.llm import LLM

FEEDBACK_STEPS = ("context", "min_k")

#: ``selector_for(min_k, max_k)``: the method's cut, re-run over the candidates it ranked.
SelectorFor = Callable[[int, "int | None"], Selector]


class FeedbackSettings(Protocol):
    """The config fields the loop reads (SAGE's names); SageConfig and FullConfig have them."""

    min_k: int
    fs: int
    max_rounds: int
    feedback_step: str
    feedback_max_tokens: int
    budget: int | None


def _chunk_ids(ctx: Context) -> tuple[str, ...]:
    return tuple(s.chunk.id for s in ctx.chunks)


def next_bounds(
    step: str, min_k: int, n_chunks: int, adjustment: int, n_candidates: int
) -> tuple[int, int | None] | None:
    """``(min_k, max_k)`` for the next selection, or None when it leaves 1..N.

    ``context`` sets ``min_k`` to the current number of chunks -/+ 1 and, for less, caps the
    cut there; ``min_k`` is the paper's literal ``min_k -/+ 1``.
    """
    if step == "min_k":
        new = min_k + adjustment
        return (new, None) if 1 <= new <= n_candidates else None
    if adjustment > 0:
        return (n_chunks + 1, None) if n_chunks + 1 <= n_candidates else None
    return (n_chunks - 1, n_chunks - 1) if n_chunks - 1 >= 1 else None


@dataclass
class _Run:
    """The loop's running state for one question."""

    current: Answer
    timings: dict[str, float]
    answer_usage: Usage
    feedback_usage: Usage = field(default_factory=Usage)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    judged: list[Answer] = field(default_factory=list)
    scores: list[int | None] = field(default_factory=list)
    seen: set[tuple[str, ...]] = field(default_factory=set)
    window_stop: bool = False


def _round_record(rnd: int, min_k: int, max_k: int | None, cur: Answer, gen: Any, fb: Any) -> dict:
    return {
        "round": rnd,
        "min_k": min_k,
        "max_k": max_k,
        "selected": list(_chunk_ids(cur.context)),
        "n_chunks": len(cur.context.chunks),
        "context_tokens": cur.context.n_tokens,
        "cut_reason": cur.trace.get("selection", {}).get("reason"),
        "answer": cur.text,
        "answer_tokens": {
            "prompt": cur.usage.prompt_tokens,
            "completion": cur.usage.completion_tokens,
        },
        "feedback": {"reply": gen.text.strip(), "score": fb.score, "adjustment": fb.adjustment},
        "feedback_tokens": {
            "prompt": gen.usage.prompt_tokens,
            "completion": gen.usage.completion_tokens,
        },
    }


class SelfFeedback:
    """The loop over one method's answers; ``selector_for`` is that method's cut."""

    def __init__(self, settings: FeedbackSettings, selector_for: SelectorFor) -> None:
        self.c = settings
        self.selector_for = selector_for

    def run(self, name: str, r: Retrieval, first: Answer, llm: LLM, how: AnswerCall) -> Answer:
        """Judge and re-answer until accepted or stopped; returns the best-judged answer."""
        c = self.c
        st = _Run(first, dict(first.timings), first.usage, seen={_chunk_ids(first.context)})
        min_k, max_k = c.min_k, None
        reason = "max_rounds"
        for rnd in range(1, c.max_rounds + 1):
            fb = self._judge(name, r, st, rnd, min_k, max_k, llm, how)
            if fb is None:
                reason = "window" if st.window_stop else "budget"
                break
            reason = self._verdict(fb, rnd)
            if reason:
                break
            bounds = next_bounds(
                c.feedback_step,
                min_k,
                len(st.current.context.chunks),
                fb.adjustment,
                len(r.candidates),
            )
            if bounds is None:
                reason = "bounds"
                break
            min_k, max_k = bounds
            reason = self._answer_again(name, r, st, min_k, max_k, llm, how)
            if reason:
                break
        return self._finish(name, r, st, reason or "max_rounds", how)

    def _judge(
        self,
        name: str,
        r: Retrieval,
        st: _Run,
        rnd: int,
        min_k: int,
        max_k: int | None,
        llm: LLM,
        how: AnswerCall,
    ) -> Any:
        """Judge the current answer; None when the budget cannot hold the judgement (with
        room for one more answer, unless this is the last round)."""
        cur = st.current
        budget = how.budget(llm)
        # The judgement reads the context again beside the answer: where that overflows the
        # LLM's window, the judge sees the context less its lowest-scored units.
        shown = list(cur.context.chunks)
        judge_dropped = 0
        while True:
            messages = build_feedback_messages(
                r.question, [s.chunk.text for s in shown], cur.text, how.options
            )
            if budget.fits_window(messages, self.c.feedback_max_tokens) or not shown:
                break
            shown.pop(min(range(len(shown)), key=lambda i: (shown[i].score, -i)))
            judge_dropped += 1
        if not budget.fits_window(messages, self.c.feedback_max_tokens):
            st.window_stop = True  # not even the question and the answer fit the window
            return None
        reserve = cur.usage.prompt_tokens if rnd < self.c.max_rounds else 0
        if not budget.room(messages, reserve):
            return None
        what = f"{name}: feedback call {rnd}/{self.c.max_rounds} (judge the answer)"
        with reported(how.progress, what):
            stop = timed(st.timings, "feedback")
            gen = llm.generate(messages, max_tokens=self.c.feedback_max_tokens, temperature=0.0)
            stop()
        budget.record("feedback", messages, gen.usage)
        st.feedback_usage = st.feedback_usage + gen.usage
        fb = parse_feedback(gen.text)
        st.rounds.append(_round_record(rnd, min_k, max_k, cur, gen, fb))
        if judge_dropped:
            st.rounds[-1]["judge_window_dropped"] = judge_dropped
        st.judged.append(cur)
        st.scores.append(fb.score)
        return fb

    def _verdict(self, fb: Any, rnd: int) -> str | None:
        """Why the loop stops after this judgement, or None to re-select."""
        if fb.score is None:
            return "unparsed"
        if fb.score >= self.c.fs:
            return "accepted"
        if fb.adjustment is None:
            return "no_adjustment"
        return "max_rounds" if rnd == self.c.max_rounds else None

    def _answer_again(
        self,
        name: str,
        r: Retrieval,
        st: _Run,
        min_k: int,
        max_k: int | None,
        llm: LLM,
        how: AnswerCall,
    ) -> str | None:
        """Re-cut and answer; the stop reason when it cannot: ``unchanged`` (the cut repeats a
        context already answered) or ``budget`` (its prompt does not fit)."""
        stop = timed(st.timings, "select")
        sel = self.selector_for(min_k, max_k).select(r.question, r.candidates)
        stop()
        again = capped(
            Retrieval(r.question, sel.context, r.candidates, {**r.trace, **selection_trace(sel)}),
            self.c.budget,
        )
        key = _chunk_ids(again.context)
        if key in st.seen:
            return "unchanged"
        messages = build_answer_messages(
            r.question, [s.chunk.text for s in again.context.chunks], how.options
        )
        if not how.budget(llm).room(messages):
            return "budget"
        st.seen.add(key)
        call = f"LLM answer {len(st.seen)} ({'more' if max_k is None else 'less'} context)"
        st.current = generate_answer(name, again, llm, how, call=call)
        st.timings["generate"] = st.timings.get("generate", 0.0) + st.current.timings["generate"]
        st.answer_usage = st.answer_usage + st.current.usage
        return None

    def _finish(self, name: str, r: Retrieval, st: _Run, reason: str, how: AnswerCall) -> Answer:
        c = self.c
        if not st.judged or st.current is not st.judged[-1]:
            best, chosen = len(st.judged), st.current  # unjudged: the budget stopped the judge
        elif reason == "unparsed":
            best = len(st.judged) - 1
            chosen = st.judged[best]
        else:
            best = max(range(len(st.judged)), key=lambda i: (st.scores[i] or 0, -i))
            chosen = st.judged[best]
        record = {
            "fs": c.fs,
            "max_rounds": c.max_rounds,
            "step": c.feedback_step,
            "stop": reason,
            "chosen_round": best + 1,
            "rounds": st.rounds,
            "tokens": {
                "answer": _usage_json(st.answer_usage),
                "feedback": _usage_json(st.feedback_usage),
            },
        }
        usage = st.answer_usage + st.feedback_usage
        return settled_answer(name, chosen, usage, how, st.timings, {"feedback": record})


def _usage_json(u: Usage) -> dict[str, int]:
    return {"prompt": u.prompt_tokens, "completion": u.completion_tokens}
