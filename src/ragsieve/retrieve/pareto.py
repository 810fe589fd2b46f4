"""ParetoRAG (Sec. 3): sentence retrieval with sentence-context weighted vectors.

Each sentence of the index's ``sentences`` table carries its core vector ``h_core`` and the
vector of the rest of its passage ``h_context`` (:mod:`ragsieve.index.sentences`). A sentence
scores ``q . (alpha * h_core + (1 - alpha) * h_context)`` (``q . h_core`` without a context; the
paper's dot product), and the top-k sentences, or as many as fill a token budget in rank order,
form the context: grouped per document (best document first) and in source order inside a
document, each with its score.

Scoring is exact. With a per-question pool (the evaluation harness's document filter) the pool's
sentences are scored in numpy; over the whole index, Lance's flat scan ranks the stored
``pareto`` column (the index's ``alpha``). A different ``alpha`` re-scores the union of the top
candidates of the ``pareto`` and core columns, which is exact for the returned set's members
but may miss a sentence ranked low by both columns (documented in docs/sentence-retrieval.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ragsieve.errors import ConfigError
from ragsieve.index.sentences import CONTEXT_FORMS, sentence_id
from ragsieve.pipeline import (
    Method,
    Retrieval,
    _check_questions,
    _scored_trace,
    _selection_trace,
    register_method,
)
from ragsieve.retrieve.base import DocFilter
from ragsieve.select import BudgetSelector, TopKSelector
from ragsieve.select.base import Selection, make_context
from ragsieve.types import Chunk, Scored

if TYPE_CHECKING:
    from ragsieve.index import Index


def row_sentence_chunk(row: dict[str, Any]) -> Chunk:
    """A sentence row as a sentence-sized :class:`Chunk` (its own doc offsets and index)."""
    idx = int(row["idx"])
    return Chunk(
        id=row.get("id") or sentence_id(row["doc_id"], idx),
        doc_id=row["doc_id"],
        index=idx,
        text=row["text"],
        start=int(row["start"]),
        end=int(row["end"]),
        sent_start=idx,
        sent_end=idx + 1,
        n_tokens=int(row["n_tokens"]),
        title=row.get("title") or "",
    )


def weighted_scores(
    q: np.ndarray, core: np.ndarray, context: np.ndarray, alpha: float
) -> np.ndarray:
    """ParetoRAG's ``Sim = h_weighted . q`` for every row (core alone where no context)."""
    has = np.any(context != 0, axis=1)
    sc = core @ q
    sx = context @ q
    return np.where(has, alpha * sc + (1.0 - alpha) * sx, sc).astype(np.float32)


def _vectors(table: pa.Table, column: str) -> np.ndarray:
    col = table.column(column).combine_chunks()
    if len(col) == 0:
        return np.zeros((0, 1), dtype=np.float32)
    dim = col.type.list_size
    return col.values.to_numpy(zero_copy_only=False).reshape(-1, dim).astype(np.float32)


def group_in_source_order(items: Sequence[Scored]) -> list[Scored]:
    """Sentences grouped per document (best-scored document first), source order inside."""
    best: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, s in enumerate(items):
        d = s.chunk.doc_id
        if d not in best:
            best[d], first[d] = s.score, i
        best[d] = max(best[d], s.score)
    return sorted(
        items, key=lambda s: (-best[s.chunk.doc_id], first[s.chunk.doc_id], s.chunk.start)
    )


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


class ParetoMethod(Method):
    """ParetoRAG sentence retrieval (see the module doc)."""

    name = "pareto"
    needs_sentences = True

    def __init__(self, index: Index, config: ParetoConfig | None = None) -> None:
        super().__init__(index)
        self.config = config or ParetoConfig()
        c = self.config
        index.sentences_table  # noqa: B018  (raises the one-line "build with --sentences" error)
        built = index.config.pareto_context
        if c.context is not None and c.context != built:
            raise ConfigError(
                f"index {index.path} holds {built} Pareto context vectors, not {c.context}: "
                f"build one with --pareto-context {c.context}"
            )
        self.alpha = float(index.config.alpha if c.alpha is None else c.alpha)
        self.selector = BudgetSelector(c.budget) if c.budget is not None else TopKSelector(c.k)

    def rank(self, qvecs: np.ndarray, doc_ids: DocFilter = None) -> list[list[Scored]]:
        """Every candidate sentence of each query, best first, with its Pareto score."""
        out: list[list[Scored]] = []
        pooled: pa.Table | None = None
        if doc_ids is not None:
            wanted = sorted({d for ids in doc_ids if ids for d in ids})
            pooled = self.index.sentence_rows(wanted, vectors=["vector", "context"])
            doc_col = np.asarray(pooled.column("doc_id").to_pylist(), dtype=object)
            core_all, ctx_all = _vectors(pooled, "vector"), _vectors(pooled, "context")
        for i, q in enumerate(np.asarray(qvecs, dtype=np.float32)):
            allowed = doc_ids[i] if doc_ids is not None else None
            if pooled is not None and allowed is not None:
                mask = np.isin(doc_col, list(allowed))
                rows = pooled.filter(pa.array(mask))
                core, ctx = core_all[mask], ctx_all[mask]
            else:
                rows = self._search_all(q)
                core, ctx = _vectors(rows, "vector"), _vectors(rows, "context")
            if rows.num_rows == 0:
                out.append([])
                continue
            scores = weighted_scores(q, core, ctx, self.alpha)
            order = np.argsort(-scores, kind="stable")
            dicts = rows.select(
                ["id", "doc_id", "idx", "title", "text", "start", "end", "n_tokens"]
            )
            pyrows = dicts.to_pylist()
            out.append(
                [
                    Scored(
                        row_sentence_chunk(pyrows[j]),
                        float(scores[j]),
                        {"pareto": float(scores[j]), "core": float(core[j] @ q)},
                    )
                    for j in order
                ]
            )
        return out

    def _search_all(self, q: np.ndarray) -> pa.Table:
        c = self.config
        depth = max(c.depth, 4 * c.k, (c.budget or 0) // 4)
        found = self.index.sentence_search(q, depth, column="pareto")
        if abs(self.alpha - float(self.index.config.alpha)) > 1e-9:
            more = self.index.sentence_search(q, depth, column="vector")
            found = pa.concat_tables([found, more])
            ids = found.column("id").to_pylist()
            keep = [ids.index(x) for x in dict.fromkeys(ids)]
            found = found.take(pa.array(keep))
        return found

    def retrieve(self, questions: list[str], doc_ids: DocFilter = None) -> list[Retrieval]:
        _check_questions(questions)
        t0 = time.perf_counter()
        qv = self.index.embedder.embed(questions)
        ranked = self.rank(qv, doc_ids)
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
                "candidates": _scored_trace(cands),
                **_selection_trace(sel),
            }
            out.append(Retrieval(q, sel.context, cands, trace, t))
        return out


def _pareto_factory(
    index: Index,
    *,
    k: int = 5,
    budget: int | None = None,
    retriever: str = "dense",
    reranker: str | None = None,
    **options: Any,
) -> Method:
    """``pareto[alpha=0.8,k=5,context=mean]``; ``retriever``/``reranker`` do not apply
    (ParetoRAG scores sentences by its weighted vectors only) and are accepted for the shared
    CLI/eval option set."""
    del retriever, reranker
    allowed = {"alpha", "context", "depth"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ConfigError(
            f"unknown pareto option(s) {', '.join(unknown)}: use k, budget, {', '.join(allowed)}"
        )
    if index is None:
        raise ConfigError("the pareto method needs an index")
    return ParetoMethod(index, ParetoConfig(k=k, budget=budget, **options))


_pareto_factory.needs_sentences = True  # type: ignore[attr-defined]
register_method("pareto")(_pareto_factory)
