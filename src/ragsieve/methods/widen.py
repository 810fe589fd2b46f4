"""A second, wider reading when the reader says the context does not answer.

The answer prompt asks for "I don't know" when the context holds no answer. Over the tagger's
few sentences that reply often means a sentence the reader wanted beside the kept ones is
missing (the bridge of a two-hop question, the line above a definition). This is SAGE's
self-feedback (Sec. VI) with the reply as its own judgement, "more context" (+1), and no judge
call: one more answer over a wider context built from the candidates the method already
scored (no retrieval, no tagger run). The second reply is the answer; both calls count in its
usage and cost, and ``trace["widen"]`` keeps the first. The rule and its dev measurement are in
docs/llm.md ("A second reading when the reader does not know").

``widen`` (:data:`WIDEN`): ``off``; ``passages``, the passages of the context's sentences
whole; ``fill``, those, then the other candidate passages by their best keep probability. Both
stay within the method's budget: the first context is kept, and a passage enters whole only
where the rest of it fits.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ragsieve.llm.prompts import build_answer_messages
from ragsieve.methods.answer_line import said_unknown
from ragsieve.methods.base import AnswerCall, Retrieval, generate_answer, settled_answer
from ragsieve.select.base import make_context
from ragsieve.types import Answer, Context, Scored

if TYPE_CHECKING:
    from ragsieve.llm import LLM

WIDEN = ("off", "passages", "fill")


def _passages(candidates: list[Scored]) -> dict[float, list[Scored]]:
    """The candidates by their passage (``scores["passage"]``), each in document order."""
    out: dict[float, list[Scored]] = {}
    for s in candidates:
        if "passage" in s.scores:
            out.setdefault(s.scores["passage"], []).append(s)
    return {p: sorted(group, key=lambda s: s.chunk.index) for p, group in out.items()}


def wider_context(
    context: Context, candidates: list[Scored], budget: int | None, fill: bool
) -> Context | None:
    """``context`` widened from ``candidates`` (sentences scored by keep probability, each
    naming its passage): the passages of its sentences whole, in the context's order; with
    ``fill``, then the other passages by their best sentence. The first context always stays,
    and a passage enters whole only where its other sentences fit ``budget`` (None: no
    ceiling). None when nothing would be added."""
    passages = _passages(candidates)
    chosen = {s.chunk.id for s in context.chunks}
    used = context.n_tokens
    own = list(dict.fromkeys(s.scores["passage"] for s in context.chunks if "passage" in s.scores))
    order = own + (
        sorted(
            (p for p in passages if p not in own),
            key=lambda p: -max(s.score for s in passages[p]),
        )
        if fill
        else []
    )
    added: list[Scored] = []
    for p in order:
        rest = [s for s in passages.get(p, []) if s.chunk.id not in chosen]
        cost = sum(s.chunk.n_tokens for s in rest)
        if not rest or (budget is not None and used + cost > budget):
            continue
        added += rest
        used += cost
    if not added:
        return None
    rank = {p: i for i, p in enumerate(order)}
    every = list(context.chunks) + added
    every.sort(key=lambda s: (rank.get(s.scores.get("passage", -1.0), len(rank)), s.chunk.index))
    return make_context(every)


class Widen:
    """The stage :meth:`~ragsieve.methods.base.Method.answer` hands the first answer to (the
    protocol of SAGE's :class:`~ragsieve.methods.feedback.SelfFeedback`): an answer whose reply
    is "I don't know" is answered again over :func:`wider_context`."""

    def __init__(self, mode: str, budget: int | None) -> None:
        self.mode = mode  # one of WIDEN but "off"
        self.budget = budget

    def run(self, name: str, r: Retrieval, first: Answer, llm: LLM, how: AnswerCall) -> Answer:
        """``first`` unless its reply says it does not know and a wider context exists whose
        prompt fits what is left of the question's total budget; else the second answer."""
        if not said_unknown(first.text):
            return first
        wide = wider_context(first.context, r.candidates, self.budget, self.mode == "fill")
        if wide is None:
            return _noted(first, {"how": self.mode, "stop": "unchanged"})
        messages = build_answer_messages(
            r.question, [s.chunk.text for s in wide.chunks], how.options
        )
        if not how.budget(llm).room(messages):
            return _noted(first, {"how": self.mode, "stop": "budget"})
        again = Retrieval(r.question, wide, r.candidates, r.trace, r.timings, r.span)
        second = generate_answer(name, again, llm, how, call="LLM answer 2 (wider context)")
        timings = dict(first.timings)
        timings["generate"] = timings.get("generate", 0.0) + second.timings.get("generate", 0.0)
        record = {
            "how": self.mode,
            "stop": "answered",
            "first_reply": first.text,
            "first_context_tokens": first.context.n_tokens,
            "first_selected": [s.chunk.id for s in first.context.chunks],
            "context_tokens": wide.n_tokens,
        }
        usage = first.usage + second.usage
        return settled_answer(name, second, usage, how, timings, {"widen": record})


def _noted(answer: Answer, note: dict[str, str]) -> Answer:
    """``answer`` with ``trace["widen"]`` saying why no second reading ran."""
    return replace(answer, trace={**answer.trace, "widen": note})
