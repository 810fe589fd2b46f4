"""SAGE (Sections V-VI): rerank ``N`` candidates, cut at the first sharp score drop, answer, and
let the LLM's self-feedback widen or narrow the context (see docs/sage.md)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ragsieve.errors import ConfigError
from ragsieve.llm.cost import is_local_llm
from ragsieve.methods.base import MethodDef, StagedMethod
from ragsieve.methods.feedback import FEEDBACK_STEPS, SelfFeedback
from ragsieve.rerank import get_reranker
from ragsieve.rerank.base import DEFAULT_RERANKER
from ragsieve.retrieve import get_retriever
from ragsieve.select import GradientCutSelector, TopKSelector
from ragsieve.select.base import Selection, Selector
from ragsieve.types import Scored

if TYPE_CHECKING:
    from ragsieve.index import Index

SAGE_SELECTIONS = ("gradient", "top-k")

#: SAGE's ``min_k`` (7) counts the paper's segments. Our implementation of its segmentation
#: (``--chunker sage``) cuts QASPER papers into segments of 92-119 tokens on average (median
#: 76-87; three validation papers, ``ragsieve segment``), so a paper chunk is taken as 100
#: tokens and the default ``min_k`` keeps about 700 tokens' worth of the index's own chunks.
PAPER_MIN_K = 7
PAPER_CHUNK_TOKENS = 100


def scaled_min_k(mean_chunk_tokens: float, n: int) -> int:
    """SAGE's ``min_k`` for an index whose chunks average ``mean_chunk_tokens``: 7 paper
    chunks' worth of them (4 on fixed 200-token chunks, 7 on SAGE segments), within 1..``n``."""
    if mean_chunk_tokens <= 0:
        return min(PAPER_MIN_K, n)
    k = int(PAPER_MIN_K * PAPER_CHUNK_TOKENS / mean_chunk_tokens + 0.5)
    return max(1, min(n, k))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class SageOptions:
    """SAGE (Sections V-VI): retrieve ``N`` chunks, rerank, cut at the first sharp score drop
    (``min_k``, ``g``), answer, then let the LLM judge its answer and widen or narrow the
    context until the score reaches ``fs`` or ``max_rounds`` feedback rounds have run.

    Defaults are the paper's hyper-parameters. Segmentation is not configured here: it is a
    property of the index (``ragsieve index --chunker ...``), and the method works on any index.
    ``full``'s config extends these; ``sage``'s (:class:`SageConfig`) adds naive's ceiling.
    """

    #: Candidates fetched from the index and scored by the reranker.
    N: int = 30
    #: Minimum number of chunks the gradient cut keeps. None (default): the paper's 7, scaled
    #: to the index's mean chunk size (:func:`scaled_min_k`); a number is taken as it is.
    min_k: int | None = None
    #: Gradient threshold: the cut ends at the first relative score drop larger than ``g``.
    g: float = 0.3
    #: Feedback score (1-10) at or above which an answer is accepted.
    fs: int = 9
    #: At most this many feedback rounds (LLM judgements) per question.
    max_rounds: int = 3
    #: SAGE's self-feedback: true (the paper's loop), false (one answer, the paper's "without
    #: feedback" ablation) or none (``sage``'s default, "auto"): the loop with a remote LLM, one
    #: answer with a local one, whose judgements were measured to change nothing while
    #: tripling the calls (docs/sage.md, "Feedback with a local reader").
    feedback: bool | None = True
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
            value = getattr(self, name)
            if not _is_int(value) and not (name == "min_k" and value is None):
                raise ConfigError(f"{name} must be an integer, got {value!r}")
        if (
            self.N < 1
            or (self.min_k is not None and self.min_k < 1)
            or self.feedback_max_tokens < 1
        ):
            raise ConfigError("N, min_k and feedback_max_tokens must be at least 1")
        if not isinstance(self.g, int | float) or not 0.0 <= self.g <= 1.0:
            raise ConfigError(f"g is a relative drop and must be in [0, 1], got {self.g!r}")
        if not 1 <= self.fs <= 10:
            raise ConfigError(f"fs is a feedback score and must be in 1..10, got {self.fs}")
        if self.max_rounds < 0:
            raise ConfigError(f"max_rounds must be >= 0, got {self.max_rounds}")
        if self.feedback is not None and not isinstance(self.feedback, bool):
            raise ConfigError(f"feedback must be true, false or none, got {self.feedback!r}")
        if self.budget is not None and (not _is_int(self.budget) or self.budget < 1):
            raise ConfigError(f"budget must be a positive number of tokens, got {self.budget!r}")
        if self.selection not in SAGE_SELECTIONS:
            raise ConfigError(f"selection must be one of {', '.join(SAGE_SELECTIONS)}")
        if self.feedback_step not in FEEDBACK_STEPS:
            raise ConfigError(f"feedback_step must be one of {', '.join(FEEDBACK_STEPS)}")


@dataclass
class SageConfig(SageOptions):
    """``sage``'s options: SAGE's (:class:`SageOptions`) and naive's ceiling ``k``."""

    #: Ceiling (``--k``, naive's top-k, 10 by default): at most ``k`` chunks and at most the
    #: tokens of naive's top-``k``, so the context is never larger than naive's at the same
    #: ``--k``; the cut decides how much of it to keep (docs/sage.md, "A ceiling of --k").
    k: int = 10
    #: None: "auto", the loop with a remote LLM only (see :class:`SageOptions`).
    feedback: bool | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not _is_int(self.k) or self.k < 1:
            raise ConfigError(f"k must be a positive integer, got {self.k!r}")


def sage_cut(c: SageOptions, min_k: int, max_k: int | None = None) -> Selector:
    """SAGE's selection for ``min_k``: the gradient cut, or a fixed top ``min_k``
    (``selection=top-k``, the "without selection" ablation); ``budget`` is a ceiling."""
    if c.selection == "top-k":
        return TopKSelector(min_k if max_k is None else min(min_k, max_k), c.budget)
    return GradientCutSelector(min_k, c.g, c.budget, max_k)


#: The first-stage score a candidate keeps under this name, per retriever.
FIRST_STAGE_SCORE = {"hybrid": "rrf"}


class NaiveCeiling:
    """SAGE's cut under naive's ceiling: at most ``k`` chunks and, without a ``budget``, at most
    the tokens of naive's top-``k`` among the same candidates (the ``k`` best by the first-stage
    score, which the candidates keep beside the reranker's). So the context is never larger
    than naive's at the same ``--k``; the cut decides how much of it to keep. With a
    ``budget`` that is the ceiling, as naive fills it. Why: on a user's folder of 200-token
    chunks the uncapped cut ran on through the reranker's flat tail to 17-18 chunks, 1.7x
    naive's tokens (docs/sage.md, "A ceiling of --k")."""

    name = "gradient"

    def __init__(self, c: SageConfig, min_k: int, max_k: int) -> None:
        self.c = c
        self.min_k = min_k
        self.max_k = max_k

    def select(self, query: str, ranked: list[Scored]) -> Selection:
        c = self.c
        budget, naive_tokens = c.budget, None
        if budget is None and ranked:
            key = FIRST_STAGE_SCORE.get(c.retriever, c.retriever)
            first = sorted(ranked, key=lambda s: -s.scores.get(key, s.score))[: c.k]
            naive_tokens = budget = sum(s.chunk.n_tokens for s in first)
        sel = sage_cut(replace(c, budget=budget), self.min_k, self.max_k).select(query, ranked)
        trace = {**sel.trace, "ceiling": {"k": c.k, "naive_tokens": naive_tokens}}
        return Selection(sel.context, trace)


class SageMethod(StagedMethod):
    """SAGE: dense (or bm25/hybrid) top-``N`` -> reranker -> gradient cut -> LLM, with the
    LLM's self-feedback re-selecting the context (:mod:`ragsieve.methods.feedback`).

    :meth:`retrieve` is the no-LLM path (what ``ragsieve eval --no-llm`` measures);
    :meth:`answer` adds generation and the feedback loop.
    """

    name = "sage"

    def __init__(self, index: Index, config: SageConfig | None = None) -> None:
        super().__init__(index)
        c = config or SageConfig()
        self.min_k_scaled: dict[str, Any] | None = None
        if c.min_k is None:
            m = index.manifest
            mean = m["n_tokens"] / m["n_chunks"] if m.get("n_chunks") else 0.0
            c = replace(c, min_k=scaled_min_k(mean, c.N))
            self.min_k_scaled = {
                "paper_min_k": PAPER_MIN_K,
                "paper_chunk_tokens": PAPER_CHUNK_TOKENS,
                "index_mean_chunk_tokens": round(mean, 1),
                "min_k": c.min_k,
            }
        self.config = c
        self.retriever = get_retriever(c.retriever, index)
        self.reranker = get_reranker(c.reranker, index.config.embedder)
        self.feedback = (
            SelfFeedback(c, self.selector_for)
            if c.feedback is not False and c.max_rounds >= 1
            else None
        )

    def feedback_for(self, llm: object) -> SelfFeedback | None:
        """The loop for ``llm``: with ``feedback`` none (auto), none for a local LLM."""
        if self.config.feedback is None and is_local_llm(llm):
            return None
        return self.feedback

    def depth(self) -> int:
        return self.config.N

    def selector(self) -> Selector:
        return self.selector_for(self.config.min_k)

    def selector_for(self, min_k: int, max_k: int | None = None) -> Selector:
        """The selection stage for a given ``min_k`` (the feedback loop moves it) under naive's
        ceiling (:class:`NaiveCeiling`): "more context" past it re-selects the same context."""
        c = self.config
        return NaiveCeiling(c, min(min_k, c.k), c.k if max_k is None else min(max_k, c.k))

    def trace_info(self) -> dict[str, Any]:
        c = self.config
        info: dict[str, Any] = {
            "retriever": c.retriever,
            "reranker": c.reranker,
            "N": c.N,
            "k": c.k,
        }
        if self.min_k_scaled is not None:
            info["min_k_scaled"] = self.min_k_scaled
        return info


SAGE = MethodDef(
    "sage",
    SageConfig,
    SageMethod,
    aliases={"n": "N", "candidates": "N"},
    summary="rerank N, gradient cut, LLM self-feedback",
)
