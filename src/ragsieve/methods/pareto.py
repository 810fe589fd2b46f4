"""ParetoRAG (Sec. 3) as a method: the top-k sentences by sentence-context weighted vectors, or as
many as fill a token budget in rank order, grouped per document (best document first) and in
source order inside a document, each with its score (:mod:`ragsieve.retrieve.pareto` ranks)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragsieve.errors import ConfigError
from ragsieve.index.sentences import CONTEXT_FORMS
from ragsieve.methods.base import Method, MethodDef, Retrieval, scored_trace, selection_trace
from ragsieve.retrieve.base import DocFilter
from ragsieve.retrieve.pareto import ParetoRetriever, group_in_source_order
from ragsieve.select import BudgetSelector, TopKSelector
from ragsieve.select.base import Selection, make_context

if TYPE_CHECKING:
    from ragsieve.index import Index


@dataclass
class ParetoConfig:
    """ParetoRAG options. ``alpha`` None uses the index's (its stored ``pareto`` vectors)."""

    k: int = 5
    budget: int | None = None
    alpha: float | None = None
    #: Checked against the index (the context form is fixed when the index is built).
    context: str | None = None
    #: Whole-index search: candidates fetched per column before exact re-scoring.
    depth: int = 200

    def __post_init__(self) -> None:
        if not isinstance(self.k, int) or self.k < 1:
            raise ConfigError(f"k must be a positive integer, got {self.k!r}")
        if self.budget is not None and (not isinstance(self.budget, int) or self.budget < 1):
            raise ConfigError(f"budget must be a positive number of tokens, got {self.budget!r}")
        if self.alpha is not None and (
            not isinstance(self.alpha, int | float) or not 0.0 <= self.alpha <= 1.0
        ):
            raise ConfigError(f"alpha must be in [0, 1], got {self.alpha!r}")
        if self.context is not None and self.context not in CONTEXT_FORMS:
            raise ConfigError(f"context must be one of {', '.join(CONTEXT_FORMS)}")
        if not isinstance(self.depth, int) or self.depth < 1:
            raise ConfigError(f"depth must be a positive integer, got {self.depth!r}")


class ParetoMethod(Method):
    """ParetoRAG sentence retrieval (see the module doc)."""

    name = "pareto"
    needs_sentences = True

    def __init__(self, index: Index, config: ParetoConfig | None = None) -> None:
        super().__init__(index)
        self.config = config or ParetoConfig()
        c = self.config
        # First: the ranker refuses an index without a sentence table in one line.
        self.ranker = ParetoRetriever(index, c.alpha, max(c.depth, 4 * c.k, (c.budget or 0) // 4))
        built = index.config.pareto_context
        if c.context is not None and c.context != built:
            raise ConfigError(
                f"index {index.path} holds {built} Pareto context vectors, not {c.context}: "
                f"build one with --pareto-context {c.context}"
            )
        self.alpha = self.ranker.alpha
        self.selector = BudgetSelector(c.budget) if c.budget is not None else TopKSelector(c.k)

    def _retrieve(self, questions: list[str], doc_ids: DocFilter) -> list[Retrieval]:
        t0 = time.perf_counter()
        qv = self.index.embedder.embed(questions)
        ranked = self.ranker.rank(qv, doc_ids)
        per_q = (time.perf_counter() - t0) / max(1, len(questions))
        out: list[Retrieval] = []
        for q, cands in zip(questions, ranked, strict=True):
            t: dict[str, float] = {"retrieve": per_q}
            t0 = time.perf_counter()
            sel = self.selector.select(q, cands)
            grouped = group_in_source_order(list(sel.context.chunks))
            sel = Selection(make_context(grouped), {**sel.trace, "order": "document, source"})
            t["select"] = time.perf_counter() - t0
            trace = {
                "method": self.name,
                "alpha": self.alpha,
                "context_form": self.index.config.pareto_context,
                "passage": self.index.config.sentence_options().passage,
                "candidates": scored_trace(cands),
                **selection_trace(sel),
            }
            out.append(Retrieval(q, sel.context, cands, trace, t))
        return out


PARETO = MethodDef(
    "pareto",
    ParetoConfig,
    ParetoMethod,
    needs_sentences=True,
    summary="ParetoRAG: sentences by 0.8 sentence + 0.2 passage vectors",
)
