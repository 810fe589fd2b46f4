"""The Python API that mirrors the CLI: ``search`` and ``ask`` over an index, and ``prune``,
the evidence tagger on passages a user already has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsieve.index import Index
from ragsieve.methods import DEFAULT_METHOD, build_method
from ragsieve.rerank import get_reranker, rerank
from ragsieve.retrieve import get_retriever
from ragsieve.tag.prune import Kept
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
    method: str = DEFAULT_METHOD,
    llm: Any = "local",
    options: list[str] | None = None,
    total_budget: int | None = None,
    **run: Any,
) -> Answer:
    """Answer ``question`` from ``index`` with ``method``, a spec such as
    ``"full[unit=passage]"`` (:mod:`ragsieve.methods.spec`); ``run`` takes ``k``, ``budget``,
    ``retriever`` and ``reranker``; ``llm`` is a spec string or an LLM. ``total_budget``
    bounds the prompt tokens of every LLM call for the question (feedback included)."""
    from ragsieve.llm import get_llm

    idx = _as_index(index)
    m = build_method(method, idx, **run)
    model = get_llm(llm) if isinstance(llm, str) else llm
    return m.ask(question, model, options=options, total_budget=total_budget)


def prune(
    question: str,
    passages: list[str] | list[tuple[str, str]],
    *,
    threshold: float | None = None,
    hops: int = 2,
    min_keep: int = 1,
    model: str | Path | None = None,
) -> list[Kept]:
    """The sentences of ``passages`` that the evidence tagger keeps for ``question``, most
    relevant first, each with its keep probability and its paragraph's relevance.

    A passage is a text or a ``(title, text)`` pair. It is read paragraph by paragraph
    (blank-line blocks, the unit the tagger was trained on), each paragraph with the passage's
    title; ``Kept.passage`` is the index of the passage in ``passages``.

    >>> kept = prune("When did Champollion announce it?", [("Champollion", text)])
    >>> [(k.text, round(k.prob, 2)) for k in kept]
    """
    import re
    from dataclasses import replace

    from ragsieve.errors import InputError
    from ragsieve.methods.tagger import get_tagger
    from ragsieve.tag.prune import prune as run
    from ragsieve.text import sentence_texts

    if not question or not question.strip():
        raise InputError("the question is empty")
    items: list[tuple[str, list[str]]] = []
    owner: list[int] = []
    for i, p in enumerate(passages):
        title, text = p if isinstance(p, tuple) else ("", p)
        if not isinstance(text, str) or not isinstance(title, str):
            raise InputError(f"a passage must be a string or a (title, text) pair, got {p!r}")
        for para in re.split(r"\n\s*\n", text):
            sents = [s for s in sentence_texts(para) if s.strip()]
            if sents:
                items.append((title, sents))
                owner.append(i)
    tagger = get_tagger(str(model) if model is not None else None)
    kept = run(tagger, question, items, threshold, hops, min_keep).kept
    return [replace(k, passage=owner[k.passage]) for k in kept]
