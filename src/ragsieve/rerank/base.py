"""The Reranker protocol and the offline bi-encoder fallback.

Scores are always in [0, 1] so that thresholds and SAGE's relative-drop rule behave the same
whichever scorer runs: a cross-encoder's logit goes through a sigmoid; the bi-encoder's cosine is
clipped at 0 (MiniLM cosines below 0 are rare and all mean "unrelated"). Clipping rather than
mapping (1 + cos) / 2 keeps relative drops between scores intact, which the gradient cut needs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragsieve.embed import index_embedder
from ragsieve.errors import ConfigError
from ragsieve.numeric import sigmoid
from ragsieve.types import Scored


@runtime_checkable
class Reranker(Protocol):
    name: str

    def score(self, query: str, texts: list[str]) -> np.ndarray: ...


class Anchored(Protocol):
    """One query's scorer whose list-relative statistics are fixed by a candidate pool, so a
    text's score does not depend on the other texts of its call (CARROT's benefit needs it:
    :mod:`ragsieve.select.benefit`). ``score`` returns the scores in [0, 1] and how many model
    inputs it actually ran (cached ones are free)."""

    def score(self, texts: list[str]) -> tuple[np.ndarray, int]: ...


class PlainAnchored:
    """A reranker without list-relative statistics or a model cache: called as it is."""

    def __init__(self, reranker: Reranker, query: str) -> None:
        self.reranker, self.query = reranker, query

    def score(self, texts: list[str]) -> tuple[np.ndarray, int]:
        return np.asarray(self.reranker.score(self.query, texts), dtype=np.float64), len(texts)


#: How a scorer with a MiniLM cosine reads a text it has no cosine for (a combination of pool
#: chunks in CARROT): ``exact`` embeds it with the index's build; ``int8`` with the same weights
#: and int8 activations (:func:`~ragsieve.embed.int8_activation_build`, about 2x faster);
#: ``pooled`` pools a combination from its parts' token states (:mod:`ragsieve.rerank.pooled`).
COMBINATION_COSINES = ("exact", "int8", "pooled")


def check_combination_cosine(value: Any) -> None:
    """A one-line :class:`ConfigError` unless ``value`` is one of :data:`COMBINATION_COSINES`
    (checked where a method is configured and where a scorer is anchored)."""
    if value not in COMBINATION_COSINES:
        raise ConfigError(
            f"combination_cosine must be one of {', '.join(COMBINATION_COSINES)}, got {value!r}"
        )


def anchored(
    reranker: Reranker, query: str, pool: Sequence[str], combination_cosine: str = "exact"
) -> Anchored:
    """``reranker.anchored(query, pool)`` where the reranker offers it, else it as it is.

    ``combination_cosine`` (:data:`COMBINATION_COSINES`) applies to a reranker that has a
    MiniLM cosine (:func:`pools_combinations`); the others are anchored as they are."""
    check_combination_cosine(combination_cosine)
    make = getattr(reranker, "anchored", None)
    if not callable(make):
        return PlainAnchored(reranker, query)
    if combination_cosine != "exact" and pools_combinations(reranker):
        return make(query, pool, combination_cosine=combination_cosine)  # type: ignore[no-any-return]
    return make(query, pool)  # type: ignore[no-any-return]


def pools_combinations(reranker: Reranker) -> bool:
    """Whether ``reranker.anchored`` takes a ``combination_cosine`` (it has a MiniLM cosine:
    the bi-encoder and the ensemble; BM25 and a cross-encoder alone do not)."""
    return bool(getattr(reranker, "pools_combinations", False))


def cosine_scorer(embedder: Any, query: str, combination_cosine: str = "exact") -> Any:
    """The query's cached cosines for ``combination_cosine`` (:data:`COMBINATION_COSINES`):
    the bi-encoder and the ensemble build theirs here. ``int8`` falls back to exact where the
    embedder has no int8-activation build (a sentence-transformers model)."""
    from ragsieve.embed import int8_activation_build

    if combination_cosine == "int8":
        return CachedCosines(embedder, query, int8_activation_build(embedder))
    exact = CachedCosines(embedder, query)
    if combination_cosine != "pooled":
        return exact
    from ragsieve.rerank.pooled import PooledCosines

    return PooledCosines(exact)


class CachedCosines:
    """Query-text cosines, each distinct (truncated) model input embedded once.

    ``texts_embedder``: a faster build of the same model for the texts not already known
    (:meth:`seed`); the query vector stays ``embedder``'s, the build the seeded cosines came
    from. ``kind`` names what ran for the trace."""

    def __init__(self, embedder: Any, query: str, texts_embedder: Any = None) -> None:
        self.embedder, self.query = embedder, query
        self.texts_embedder = texts_embedder if texts_embedder is not None else embedder
        self.kind = "exact" if self.texts_embedder is embedder else "int8"
        self.cache: dict[Any, float] = {}
        self._qvec: np.ndarray | None = None

    def _key(self, text: str) -> Any:
        emb = self.embedder
        model = getattr(emb, "_model", None)
        tok = getattr(model, "tokenizer", None)
        if tok is not None and hasattr(model, "max_seq_length"):
            return tuple(tok(text, truncation=True, max_length=model.max_seq_length)["input_ids"])
        inner = getattr(emb, "_tok", None)  # MiniLMOnnxEmbedder: a truncating `tokenizers` one
        return tuple(inner.encode(text).ids) if inner is not None else text

    def seed(self, texts: Sequence[str], cosines: Sequence[float | None]) -> None:
        """Take cosines already known (a dense retrieval's scores, from the index's stored
        vectors of the same build) instead of embedding those texts again."""
        for t, c in zip(texts, cosines, strict=True):
            if c is not None:
                self.cache.setdefault(self._key(t), float(c))

    def query_vector(self) -> np.ndarray:
        """The query's embedding (computed once)."""
        if self._qvec is None:
            self._qvec = np.asarray(self.embedder.embed([self.query])[0], dtype=np.float64)
        return self._qvec

    def cosines(self, texts: list[str]) -> tuple[np.ndarray, int]:
        from ragsieve.embed.base import SentenceTransformerEmbedder

        emb = self.texts_embedder
        qvec = self.query_vector()
        keys = [self._key(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.cache}
        if missing:
            new = list(missing.values())
            # fp32 torch is padding-invariant; the int8-activation build reads one text a run
            # by itself, two in flight (embed.onnx.run_each)
            alone = getattr(emb, "activations", None) == "int8"
            if isinstance(emb, SentenceTransformerEmbedder) or alone:
                vecs = emb.embed(new)
            else:  # int8 ONNX: one text per run (as fast as batches on 2 cores here)
                vecs = np.concatenate([emb.embed([t]) for t in new])
            for k, v in zip(missing, vecs, strict=True):
                self.cache[k] = float(np.asarray(v, dtype=np.float64) @ qvec)
        return np.asarray([self.cache[k] for k in keys], dtype=np.float64), len(missing)

    def score(self, texts: list[str]) -> tuple[np.ndarray, int]:
        cos, n = self.cosines(texts)
        return np.clip(cos, 0.0, 1.0), n


class BiEncoderReranker:
    """Cosine between query and passage embeddings, clipped to [0, 1].

    ``embedder`` is the index's embedder spec; the cosines come from its query-time build
    (:func:`~ragsieve.embed.index_embedder`: the int8 ONNX MiniLM for ``minilm``), so scoring
    never loads torch. The int8 vectors agree with fp32 (cosine > 0.99) and, unlike the
    cross-encoder, do not depend on the batch (measured: at most 1.2e-7 apart)."""

    def __init__(self, embedder: str = "minilm") -> None:
        self.name = "bi-encoder"
        self.embedder = index_embedder(embedder)
        self.pools_combinations = True

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        return self.score_known(query, texts, [None] * len(texts))

    def cosines(self, query: str, texts: list[str], known: Sequence[float | None]) -> np.ndarray:
        """Query-text cosines; a text whose cosine is ``known`` (not None) is not embedded."""
        out = np.asarray([np.nan if k is None else float(k) for k in known], dtype=np.float64)
        todo = [i for i, k in enumerate(known) if k is None]
        if todo:
            vecs = self.embedder.embed([query, *(texts[i] for i in todo)])
            out[todo] = vecs[1:] @ vecs[0]
        return out

    def score_known(
        self, query: str, texts: list[str], cosines: Sequence[float | None]
    ) -> np.ndarray:
        """:meth:`score` with the cosines already known for some texts (see :func:`rerank`)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        return np.clip(self.cosines(query, texts, cosines), 0.0, 1.0).astype(np.float32)

    def anchored(self, query: str, pool: Sequence[str], combination_cosine: str = "exact") -> Any:
        """Cosines are absolute; anchoring only caches each distinct input's embedding, read
        as ``combination_cosine`` says (:func:`cosine_scorer`)."""
        return cosine_scorer(self.embedder, query, combination_cosine)


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
        return sigmoid(logits).astype(np.float32)


# The default is the cross-encoder fused with bi-encoder cosine and BM25 (ragsieve.rerank.fusion):
# the cross-encoder alone loses to both baselines on SQuAD and HotpotQA; the fusion does not
# (benchmarks/results/reranker.md).
DEFAULT_RERANKER = "ensemble"


def rerank(reranker: Reranker, query: str, candidates: list[Scored]) -> list[Scored]:
    """Re-score ``candidates`` and sort them best first (ties keep retrieval order).

    A candidate the dense retriever found carries its cosine (``scores["dense"]``: the query
    vector against the chunk's stored vector, both written by the index's embedder build,
    which is the build the bi-encoder and ensemble rerankers score with). A reranker with
    ``score_known`` takes those cosines instead of embedding the chunk again: that was 3/4 of
    the ensemble's time on a 10-paragraph pool."""
    if not candidates:
        return []
    texts = [c.chunk.text for c in candidates]
    known = getattr(reranker, "score_known", None)
    if callable(known):
        scores = known(query, texts, [c.scores.get("dense") for c in candidates])
    else:
        scores = reranker.score(query, texts)
    rescored = [
        replace(c, score=float(s), scores={**c.scores, "rerank": float(s)})
        for c, s in zip(candidates, scores, strict=True)
    ]
    order = sorted(range(len(rescored)), key=lambda i: -rescored[i].score)
    return [rescored[i] for i in order]
