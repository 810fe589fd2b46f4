"""ParetoRAG (Sec. 3) as a method: the top-k sentences by sentence-context weighted vectors, or as
many as fill a token budget in rank order, grouped per document (best document first) and in
source order inside a document, each with its score (:mod:`ragsieve.retrieve.pareto` ranks).

Its sentences come from the index's sentence table (``ragsieve index --sentences``) when it has
one. On an index without it (the default build) they are built at query time from the dense
top ``source_chunks`` chunks (:mod:`ragsieve.retrieve.chunk_sentences`): the same vectors, but
the sentence index is limited to those chunks, so a sentence outside them cannot be found
(measured in docs/full.md, "Sentences from the handed chunks"). ``source=table`` or
``source=chunks`` forces one.

A sentence without words (a bare number, a rule, pipes, a code fence alone:
:func:`ragsieve.text.has_words`) is layout and never selected: the ranking skips it, and the
chunks that hand their sentences never consist of it alone (:mod:`ragsieve.retrieve.base`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragsieve.errors import ConfigError
from ragsieve.index.sentences import CONTEXT_FORMS
from ragsieve.methods.base import Method, MethodDef, Retrieval
from ragsieve.methods.trace import scored_trace, selection_trace
from ragsieve.retrieve.base import DenseRetriever, DocFilter
from ragsieve.retrieve.chunk_sentences import ChunkSentences, check_source, use_table
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
    #: Where the sentences come from: auto (the sentence table when the index has one, else
    #: the retrieved chunks), table or chunks (:mod:`ragsieve.retrieve.chunk_sentences`).
    source: str = "auto"
    #: Without a table: the dense top chunks whose sentences are the candidates (naive's
    #: default top-k: the sentences refine what naive would have read).
    source_chunks: int = 10

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
        check_source(self.source, self.source_chunks)


class ParetoMethod(Method):
    """ParetoRAG sentence retrieval (see the module doc)."""

    name = "pareto"
    needs_sentences = True

    def __init__(self, index: Index, config: ParetoConfig | None = None) -> None:
        super().__init__(index)
        self.config = config or ParetoConfig()
        c = self.config
        self.ranker = ParetoRetriever(index, c.alpha, max(c.depth, 4 * c.k, (c.budget or 0) // 4))
        #: None: the index's sentence table; else the sentences of the dense top chunks.
        self.built = None if use_table(index, c.source) else ChunkSentences(index)
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
        if self.built is None:
            with self.stage("rank the sentence table"):
                ranked = self.ranker.rank(qv, doc_ids)
        else:
            n = self.config.source_chunks
            with self.stage(f"retrieve {n} chunks"):
                hits = DenseRetriever(self.index).retrieve(questions, n, doc_ids)
            tables = [
                self.built.build([s.chunk for s in h], progress=self.progress, label="pareto: ")
                for h in hits
            ]
            ranked = self.ranker.rank_rows(qv, tables)
        per_q = (time.perf_counter() - t0) / max(1, len(questions))
        source = "table" if self.built is None else f"top {self.config.source_chunks} chunks"
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
                "sentences": source,
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
