"""Rerankers: score (query, passage) pairs on a calibrated [0, 1] scale."""

from ragsieve.rerank.base import (
    BiEncoderReranker,
    CrossEncoderReranker,
    Reranker,
    rerank,
)
from ragsieve.rerank.factory import get_reranker

__all__ = ["BiEncoderReranker", "CrossEncoderReranker", "Reranker", "get_reranker", "rerank"]
