"""Chunkers: ``fixed`` (Naive RAG), ``paragraph``, and ``sage`` (SAGE's trained segmenter)."""

from ragsieve.segment import fixed, paragraph, sage  # noqa: F401  (register)
from ragsieve.segment.base import Segmenter, get_segmenter, known_segmenters, sentences_of

__all__ = ["Segmenter", "get_segmenter", "known_segmenters", "sentences_of"]
