"""First-stage retrievers: dense, BM25, and hybrid (reciprocal rank fusion)."""

from ragsieve.retrieve.base import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    Retriever,
    get_retriever,
    known_retrievers,
)

__all__ = [
    "BM25Retriever",
    "DenseRetriever",
    "HybridRetriever",
    "Retriever",
    "get_retriever",
    "known_retrievers",
]
