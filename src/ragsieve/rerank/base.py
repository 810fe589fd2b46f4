"""The Reranker protocol and the offline bi-encoder fallback.

Scores are always in [0, 1] so that thresholds and SAGE's relative-drop rule behave the same
whichever scorer runs: a cross-encoder's logit goes through a sigmoid; the bi-encoder's cosine is
clipped at 0 (MiniLM cosines below 0 are rare and all mean "unrelated"). Clipping rather than
mapping (1 + cos) / 2 keeps relative drops between scores intact, which the gradient cut needs.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

from ragsieve.embed import get_embedder
from ragsieve.errors import ConfigError
from ragsieve.types import Scored


@runtime_checkable
class Reranker(Protocol):
    name: str

    def score(self, query: str, texts: list[str]) -> np.ndarray: ...


class BiEncoderReranker:
    """Cosine between query and passage embeddings, clipped to [0, 1]."""

    def __init__(self, embedder: str = "minilm") -> None:
        self.name = "bi-encoder"
        self.embedder = get_embedder(embedder)

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        vecs = self.embedder.embed([query, *texts])
        return np.clip(vecs[1:] @ vecs[0], 0.0, 1.0).astype(np.float32)


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder (a local directory, or a hub name when online)."""

    def __init__(self, model: str, batch_size: int = 32) -> None:
        import torch
        from sentence_transformers import CrossEncoder

        torch.set_num_threads(max(1, os.cpu_count() or 1))
        self.name = model
        self.batch_size = batch_size
        self._lock = threading.Lock()
        try:
            self._model = CrossEncoder(model, device="cpu")
        except Exception as e:
            raise ConfigError(
                f"cannot load cross-encoder {model!r}: {str(e).splitlines()[0]}"
            ) from e

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        with self._lock:
            logits = self._model.predict(
                [(query, t) for t in texts],
                batch_size=self.batch_size,
                activation_fn=None,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        logits = np.asarray(logits, dtype=np.float32).reshape(len(texts), -1)[:, -1]
        return (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)


# The default is the cross-encoder fused with bi-encoder cosine and BM25 (ragsieve.rerank.fusion):
# the cross-encoder alone loses to both baselines on SQuAD and HotpotQA; the fusion does not
# (benchmarks/results/reranker.md).
DEFAULT_RERANKER = "ensemble"


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


def rerank(reranker: Reranker, query: str, candidates: list[Scored]) -> list[Scored]:
    """Re-score ``candidates`` and sort them best first (ties keep retrieval order)."""
    if not candidates:
        return []
    scores = reranker.score(query, [c.chunk.text for c in candidates])
    rescored = [
        replace(c, score=float(s), scores={**c.scores, "rerank": float(s)})
        for c, s in zip(candidates, scores, strict=True)
    ]
    order = sorted(range(len(rescored)), key=lambda i: -rescored[i].score)
    return [rescored[i] for i in order]
