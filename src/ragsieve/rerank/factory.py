"""Rerankers by name: the one place that knows every concrete reranker (so the protocol in
:mod:`ragsieve.rerank.base` imports none of them)."""

from __future__ import annotations

import os
from functools import lru_cache

from ragsieve.errors import ConfigError
from ragsieve.rerank.base import (
    DEFAULT_RERANKER,
    BiEncoderReranker,
    CrossEncoderReranker,
    Reranker,
)


@lru_cache(maxsize=8)
def get_reranker(name: str = DEFAULT_RERANKER, embedder: str = "minilm") -> Reranker:
    """A reranker by name.

    * ``ensemble`` (default): the shipped cross-encoder fused with bi-encoder cosine and BM25
      by learned weights (:mod:`ragsieve.rerank.fusion`; offline);
    * ``cross-encoder``: the shipped int8 ONNX cross-encoder alone (offline);
      ``cross-encoder-fp32:DIR`` / ``cross-encoder:DIR`` load ``model_fp32.onnx`` / ``model.onnx``
      from a ``ragsieve train-reranker`` output folder;
    * ``bi-encoder``: cosine of the index's embedder (offline);
    * ``bm25``: BM25 over the candidate passages themselves (offline);
    * anything else with a ``/`` or naming a directory: a sentence-transformers cross-encoder
      (a Hugging Face name needs the network).
    """
    from ragsieve.rerank.bm25 import BM25Reranker
    from ragsieve.rerank.cross_encoder import OnnxCrossEncoder

    if name in ("ensemble", "fusion"):
        from ragsieve.rerank.fusion import FusionReranker

        return FusionReranker(embedder=embedder)
    if name in ("cross-encoder", "crossencoder"):
        return OnnxCrossEncoder()
    for prefix, variant in (("cross-encoder:", "int8"), ("cross-encoder-fp32:", "fp32")):
        if name.startswith(prefix):
            path = name[len(prefix) :]
            if not os.path.isdir(path):
                raise ConfigError(f"cross-encoder folder {path!r} does not exist")
            return OnnxCrossEncoder(path, variant=variant)
    if name in ("bi-encoder", "biencoder"):
        return BiEncoderReranker(embedder)
    if name == "bm25":
        return BM25Reranker()
    if "/" in name or os.path.isdir(name):
        return CrossEncoderReranker(name)
    raise ConfigError(
        f"unknown reranker {name!r}: use ensemble, cross-encoder, bi-encoder, bm25 or a "
        "cross-encoder ORG/NAME (online)"
    )
