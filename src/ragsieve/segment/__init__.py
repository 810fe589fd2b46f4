"""Chunkers: ``fixed`` (Naive RAG), ``paragraph``; SAGE's semantic segmenter joins later."""

from ragsieve.segment import fixed, paragraph  # noqa: F401  (register)
from ragsieve.segment.base import Segmenter, get_segmenter, known_segmenters, sentences_of

__all__ = ["Segmenter", "get_segmenter", "known_segmenters", "sentences_of"]
