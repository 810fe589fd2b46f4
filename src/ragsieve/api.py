"""The Python API that mirrors the CLI: ``search`` and ``ask`` over an index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsieve.index import Index
from ragsieve.methods import build_method
from ragsieve.rerank import get_reranker, rerank
from ragsieve.retrieve import get_retriever
from ragsieve.types import Answer, Scored


def _as_index(index: Index | str | Path) -> Index:
    return index if isinstance(index, Index) else Index.open(index)


def search(
    query: str,
    index: Index | str | Path,
    *,
    k: int = 10,
    retriever: str = "dense",
    reranker: str | None = None,
) -> list[Scored]:
    """The top-``k`` chunks for ``query`` (optionally reranked from a deeper candidate list)."""
    idx = _as_index(index)
    depth = k if reranker is None else max(k, 50)
    hits = get_retriever(retriever, idx).retrieve([query], depth)[0]
    if reranker is not None:
        hits = rerank(get_reranker(reranker, idx.config.embedder), query, hits)
    return hits[:k]


def ask(
    question: str,
    index: Index | str | Path,
    *,
    method: str = "naive",
    llm: Any = "local",
    options: list[str] | None = None,
    **run: Any,
) -> Answer:
    """Answer ``question`` from ``index`` with ``method``, a spec such as
    ``"full[unit=passage]"`` (:mod:`ragsieve.methods.spec`); ``run`` takes ``k``, ``budget``,
    ``retriever`` and ``reranker``; ``llm`` is a spec string or an LLM."""
    from ragsieve.llm import get_llm

    idx = _as_index(index)
    m = build_method(method, idx, **run)
    model = get_llm(llm) if isinstance(llm, str) else llm
    return m.ask(question, model, options=options)
