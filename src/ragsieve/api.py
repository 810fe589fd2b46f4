"""The Python API that mirrors the CLI: ``search`` and ``ask`` over an index, and, on passages
a user already has (no index), ``prune`` (the evidence tagger) and ``rerank``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsieve.checks import (
    MAX_COUNT,
    check_int,
    check_name,
    check_passages,
    check_path,
    check_real,
    check_run,
    check_text,
    check_texts,
    describe,
)
from ragsieve.defaults import DEFAULT_MAX_TOKENS
from ragsieve.errors import ConfigError, InputError
from ragsieve.index import Index
from ragsieve.llm.cost import Prices
from ragsieve.methods import DEFAULT_METHOD, MethodSpec, build_method
from ragsieve.rerank import get_reranker
from ragsieve.rerank import rerank as rerank_scored
from ragsieve.rerank.base import DEFAULT_RERANKER
from ragsieve.retrieve import get_retriever
from ragsieve.tag.prune import Kept
from ragsieve.tag.settings import TaggerSettings
from ragsieve.types import Answer, Scored, SourceSpan

#: The highest price ``ask`` takes, dollars per 1M tokens (a typo guard, not a market bound).
MAX_PRICE = 1_000_000.0


def _as_index(index: Index | str | Path) -> Index:
    """``index`` itself, or the index at that path (anything else is refused by name)."""
    if isinstance(index, Index):
        return index
    if not isinstance(index, str | os.PathLike):
        raise InputError(f"index must be an Index or the path of one, got {describe(index)}")
    return Index.open(check_path("index", index))


def search(
    query: str,
    index: Index | str | Path,
    *,
    k: int = 10,
    retriever: str = "dense",
    reranker: str | None = None,
) -> list[Scored]:
    """The top-``k`` chunks for ``query`` (optionally reranked from a deeper candidate list)."""
    check_text("query", query)
    check_int("k", k, hi=MAX_COUNT)
    check_name("retriever", retriever, expected="a retriever name (dense, bm25, hybrid)")
    check_name("reranker", reranker, none_ok=True, expected="a reranker name")
    idx = _as_index(index)
    depth = k if reranker is None else max(k, 50)
    hits = get_retriever(retriever, idx).retrieve([query], depth)[0]
    if reranker is not None:
        hits = rerank_scored(get_reranker(reranker, idx.config.embedder), query, hits)
    return hits[:k]


def ask(
    question: str,
    index: Index | str | Path,
    *,
    method: str = DEFAULT_METHOD,
    llm: Any = "local",
    options: list[str] | None = None,
    total_budget: int | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    llm_ctx: int | None = None,
    prices: Prices | tuple[float | None, float | None] | None = None,
    **run: Any,
) -> Answer:
    """Answer ``question`` from ``index`` with ``method``, a spec such as
    ``"full[unit=passage]"`` (:mod:`ragsieve.methods.spec`); ``run`` takes ``k``, ``budget``,
    ``retriever`` and ``reranker``; ``llm`` is a spec string or an LLM. ``total_budget``
    bounds the prompt tokens of every LLM call for the question (feedback included);
    ``max_tokens`` caps the answer and ``llm_ctx`` sets the LLM's context window (as the
    CLI's ``--max-tokens`` and ``--llm-ctx``). ``prices``, a
    :class:`~ragsieve.llm.cost.Prices` or ``(in, out)`` pair in dollars per 1M tokens, price
    ``Answer.cost``; a price not given (None) is 0 for a local model's answer and SAGE's
    example price for a remote one's (:mod:`ragsieve.llm.cost`).
    ``llm="none"`` (or None) asks no LLM: the answer is the tagger's answer span
    (``Answer.span``; ``""`` and no span when the method gives none). With the packaged readers
    (``"local"``, ``"qwen-0.5b"``) ``Answer.text`` is that span where it answers (not a yes/no
    question) and ``Answer.reply`` the LLM's own reply (:mod:`ragsieve.methods.answer_line`)."""
    from ragsieve.llm import get_llm

    # Every argument is checked before the index opens or a model loads.
    check_text("question", question)
    if not isinstance(method, MethodSpec):
        check_name(
            "method", method, expected="a method spec such as 'tagger' or 'full[unit=passage]'"
        )
    no_llm = llm is None or (isinstance(llm, str) and llm.strip().lower() == "none")
    if not no_llm and not isinstance(llm, str) and not callable(getattr(llm, "generate", None)):
        raise ConfigError(
            "llm must be an LLM spec string such as 'local' (or 'none'), or an LLM object with "
            f"a generate method, got {describe(llm)}"
        )
    if no_llm and llm_ctx is not None:
        raise ConfigError("llm_ctx sets an LLM's context window: there is none with llm='none'")
    if isinstance(llm, str):
        check_name("llm", llm, expected="an LLM spec such as 'local' or 'openai:MODEL@URL'")
    if options is not None:
        check_texts("options", options)
    check_int("total_budget", total_budget, none_ok=True)
    check_int("max_tokens", max_tokens)
    check_int("llm_ctx", llm_ctx, lo=16, none_ok=True)
    price_in_per_m, price_out_per_m = _prices(prices)
    check_run(run)
    idx = _as_index(index)
    m = build_method(method, idx, **run)
    if no_llm:
        model = None
    elif isinstance(llm, str):
        model = get_llm(llm, **({} if llm_ctx is None else {"n_ctx": llm_ctx}))
    else:
        if llm_ctx is not None:
            raise ConfigError("llm_ctx goes with an LLM spec string; set n_ctx on your LLM")
        model = llm
    return m.ask(
        question,
        model,
        options=options,
        max_tokens=max_tokens,
        total_budget=total_budget,
        price_in_per_m=price_in_per_m,
        price_out_per_m=price_out_per_m,
    )


def _prices(prices: Any) -> tuple[float | None, float | None]:
    """``ask``'s ``prices`` as (in, out) dollars per 1M tokens, each checked (None: default)."""
    if prices is None:
        return None, None
    if not isinstance(prices, tuple) or len(prices) != 2:
        raise ConfigError(f"prices must be a Prices or an (in, out) pair, got {describe(prices)}")
    price_in = check_real("prices.in_per_m", prices[0], lo=0, hi=MAX_PRICE, none_ok=True)
    price_out = check_real("prices.out_per_m", prices[1], lo=0, hi=MAX_PRICE, none_ok=True)
    return price_in, price_out


@dataclass(frozen=True)
class Ranked:
    """One passage of :func:`rerank`: its position in the input, its score in [0, 1], its text."""

    index: int
    score: float
    text: str


def rerank(
    query: str,
    passages: list[str],
    *,
    top_k: int | None = None,
    model: str = DEFAULT_RERANKER,
) -> list[Ranked]:
    """``passages`` scored for ``query`` by a reranker and sorted best first, in memory (no
    index): what FlashRank's and rerankers' ``rank`` give. ``model`` is any name ``--reranker``
    takes (default: the shipped ensemble); ``top_k`` keeps the best ``k``.

    >>> [r.index for r in rerank("When was Voyager 1 launched?", ["Bees dance.", "In 1977."])]
    [1, 0]
    """
    from ragsieve.types import Chunk, Scored

    check_text("query", query)
    passages = check_texts("passages", passages)
    check_int("top_k", top_k, none_ok=True)
    check_name("model", model, expected="a reranker name")
    if not passages:
        return []
    hits = [
        Scored(Chunk(str(i), "", i, text, 0, len(text), 0, 1, 0), 0.0)
        for i, text in enumerate(passages)
    ]
    ranked = rerank_scored(get_reranker(model), query, hits)
    out = [Ranked(s.chunk.index, s.score, s.chunk.text) for s in ranked]
    return out if top_k is None else out[:top_k]


class KeptSentences(list[Kept]):
    """What :func:`prune` returns: the kept sentences (a list, as it always was) and ``span``,
    the tagger's extractive answer inside one of them: a :class:`SourceSpan` whose ``passage``
    indexes your passages and whose ``sentence`` and character offsets are the kept sentence's
    (``kept.text[span.start:span.end] == span.text``). None when the model has no span head or
    a budget left the span's sentence out."""

    span: SourceSpan | None = None


#: :func:`prune`'s tagger settings when none are given: the ``tagger`` method's, without lead
#: carrying, which was adopted for the method only (docs/tagger.md, "Lead carrying on today's
#: code": "``ragsieve.prune`` and ``full`` carry no leads").
PRUNE_SETTINGS = TaggerSettings(lead=False)


def prune(
    question: str,
    passages: list[str] | list[tuple[str, str]],
    *,
    settings: TaggerSettings | None = None,
    budget: int | None = None,
    rate: float | None = None,
    model: str | Path | None = None,
    **options: Any,
) -> KeptSentences:
    """The sentences of ``passages`` that the evidence tagger keeps for ``question``, each with
    its keep probability and its paragraph's relevance: paragraph by paragraph, the most
    relevant paragraph first, sentences in source order inside a paragraph.

    ``settings`` (a :class:`~ragsieve.tag.settings.TaggerSettings`; None:
    :data:`PRUNE_SETTINGS`) are the tagger's, and ``options`` override any of them by name:
    ``threshold``, ``passage_threshold``, ``hops``, ``min_keep``, ``stack``, ``open_point``,
    ``link``, ``lead``, ``span_power``, ``span_snap``, ``span_link``, ``span_overlap``. ``link``
    (on, as in the ``tagger`` method): a passage that kept nothing but whose title a kept
    sentence of a passage with another title names keeps its most probable sentence
    (docs/tagger.md, "Link carrying"). ``open_point`` takes the stacker's open point (chosen
    on dev with no budget: recall over precision) instead of its default.

    ``budget`` (tokens) and ``rate`` (a share of the passages' tokens, as LLMLingua's ``rate``)
    are ceilings: when the kept sentences exceed one, the most probable ones that fit stay, in
    the same order. ``model``: a tagger folder (None: the shipped model).

    A passage is a text or a ``(title, text)`` pair. It is read paragraph by paragraph
    (blank-line blocks, the unit the tagger was trained on), each paragraph with the passage's
    title; ``Kept.passage`` is the index of the passage in ``passages``.

    >>> kept = prune("When did Champollion announce it?", [("Champollion", text)])
    >>> [(k.text, round(k.prob, 2)) for k in kept]
    """
    from dataclasses import replace

    from ragsieve.methods.tagger import get_tagger
    from ragsieve.tag.prune import prune as run

    # Every argument is checked before the tagger loads.
    check_text("question", question)
    pairs = check_passages("passages", passages)
    chosen = _prune_settings(settings, options)
    check_int("budget", budget, none_ok=True)
    check_real("rate", rate, lo=0, hi=1, lo_open=True, none_ok=True)
    if model is not None and not isinstance(model, str | os.PathLike):
        raise ConfigError(f"model must be a tagger folder (a path) or None, got {describe(model)}")
    items, owner = _paragraphs(pairs)
    tagger = get_tagger(str(model) if model is not None else None)
    pruned = run(tagger, question, items, chosen)
    kept = _limited(pruned.kept, items, budget, rate)
    out = KeptSentences(replace(k, passage=owner[k.passage]) for k in kept)
    span = pruned.span
    if span is not None and any(
        (k.passage, k.sentence) == (span.passage, span.sentence) for k in kept
    ):
        out.span = replace(span, passage=owner[span.passage])
    return out


def _prune_settings(settings: Any, options: dict[str, Any]) -> TaggerSettings:
    """:func:`prune`'s settings: ``settings`` (None: :data:`PRUNE_SETTINGS`) with ``options``
    set by name, checked as they are made; an option that is no setting is refused by name."""
    from dataclasses import fields, replace

    if settings is not None and not isinstance(settings, TaggerSettings):
        raise ConfigError(f"settings must be a TaggerSettings or None, got {describe(settings)}")
    names = [f.name for f in fields(TaggerSettings)]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise ConfigError(
            f"prune got unknown option(s) {', '.join(unknown)}: it takes settings, budget, "
            f"rate, model and the tagger's settings {', '.join(names)}"
        )
    return replace(settings or PRUNE_SETTINGS, **options)


def _paragraphs(pairs: list[tuple[str, str]]) -> tuple[list[tuple[str, list[str]]], list[int]]:
    """The paragraphs the tagger reads (blank-line blocks of each passage, with the passage's
    title, as sentence lists; empty ones dropped) and, for each, the passage it came from."""
    import re

    from ragsieve.text import sentence_texts

    items: list[tuple[str, list[str]]] = []
    owner: list[int] = []
    for i, (title, text) in enumerate(pairs):
        for para in re.split(r"\n\s*\n", text):
            sents = [s for s in sentence_texts(para) if s.strip()]
            if sents:
                items.append((title, sents))
                owner.append(i)
    return items, owner


def _limited(
    kept: list[Kept],
    items: list[tuple[str, list[str]]],
    budget: int | None,
    rate: float | None,
) -> list[Kept]:
    """``kept`` within the tighter of ``budget`` tokens and ``rate`` x the paragraphs' tokens
    (:func:`_within`); all of it when neither is given."""
    from ragsieve.text import count_tokens

    limits = [] if budget is None else [budget]
    if rate is not None:
        total = sum(count_tokens(s) for _, sents in items for s in sents)
        limits.append(int(rate * total))
    return _within(kept, min(limits)) if limits else kept


def _within(kept: list[Kept], limit: int) -> list[Kept]:
    """The most probable of ``kept`` whose tokens fit ``limit``, in their given order."""
    from ragsieve.text import count_tokens

    chosen: set[int] = set()
    used = 0
    for i in sorted(range(len(kept)), key=lambda i: -kept[i].prob):
        n = count_tokens(kept[i].text)
        if used + n <= limit:
            chosen.add(i)
            used += n
    return [k for i, k in enumerate(kept) if i in chosen]
