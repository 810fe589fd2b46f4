"""Rerankers: score (query, passage) pairs on a calibrated [0, 1] scale."""

from ragsieve.rerank.base import (
    BiEncoderReranker,
    CrossEncoderReranker,
    Reranker,
    get_reranker,
    rerank,
)

__all__ = ["BiEncoderReranker", "CrossEncoderReranker", "Reranker", "get_reranker", "rerank"]
