"""Chunkers: ``fixed`` (Naive RAG), ``paragraph``, ``sage`` (SAGE's trained segmenter) and
``sentences`` (SAKI-RAG's two-sentence chunks)."""

from ragsieve.segment import fixed, paragraph, sage, sentences  # noqa: F401  (register)
from ragsieve.segment.base import (
    Segmenter,
    get_segmenter,
    known_segmenters,
    segment_checked,
    sentences_of,
)

__all__ = ["Segmenter", "get_segmenter", "known_segmenters", "segment_checked", "sentences_of"]
