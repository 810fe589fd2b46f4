"""Naive RAG, the baseline of SAGE and CARROT: dense top-k (k = 10), or fill a token budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragsieve.errors import ConfigError
from ragsieve.methods.base import MethodDef, StagedMethod
from ragsieve.rerank import get_reranker
from ragsieve.retrieve import get_retriever
from ragsieve.select import BudgetSelector, TopKSelector
from ragsieve.select.base import Selector

if TYPE_CHECKING:
    from ragsieve.index import Index


@dataclass
class NaiveConfig:
    """Naive RAG: fixed chunks, dense top-k (k = 10) or filled up to ``budget`` tokens."""

    k: int = 10
    budget: int | None = None
    retriever: str = "dense"
    #: None keeps the retriever's order (Naive RAG); a name reranks first.
    reranker: str | None = None
    #: How many candidates to fetch when a budget or a reranker needs more than k.
    candidates: int = 50

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigError(f"k must be at least 1, got {self.k}")
        if self.candidates < 1:
            raise ConfigError(f"candidates must be at least 1, got {self.candidates}")
        if self.budget is not None and self.budget < 1:
            raise ConfigError(f"budget must be a positive number of tokens, got {self.budget}")


class NaiveMethod(StagedMethod):
    """Naive RAG (SAGE's and CARROT's baseline): top-k by similarity, or fill a budget."""

    name = "naive"

    def __init__(self, index: Index, config: NaiveConfig | None = None) -> None:
        super().__init__(index)
        self.config = config or NaiveConfig()
        c = self.config
        self.retriever = get_retriever(c.retriever, index)
        self.reranker = get_reranker(c.reranker, index.config.embedder) if c.reranker else None

    def depth(self) -> int:
        c = self.config
        return c.k if (c.budget is None and self.reranker is None) else max(c.k, c.candidates)

    def selector(self) -> Selector:
        c = self.config
        return BudgetSelector(c.budget) if c.budget is not None else TopKSelector(c.k)

    def trace_info(self) -> dict[str, Any]:
        return {"retriever": self.config.retriever, "reranker": self.config.reranker}


NAIVE = MethodDef(
    "naive",
    NaiveConfig,
    NaiveMethod,
    summary="top-k by similarity (or fill --budget), optionally reranked",
)
