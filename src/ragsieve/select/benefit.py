"""Benefit of an ordered chunk combination: the reranker's score of (query, concatenation).

CARROT (Sec. II, V-B) measures the benefit ``W(Phi)`` of a combination order
``Phi = <chi_1, ..., chi_m>`` by calling the reranker on the query and the chunks concatenated
in that order. Every search policy in this package (MCTS, the exhaustive "upper", beam search)
goes through :class:`BenefitScorer`, so they all see the same ``W`` and are comparable.

Why a wrapper instead of calling ``reranker.score`` directly
-------------------------------------------------------------
Two of our rerankers are *list-relative*: :class:`~ragsieve.rerank.bm25.BM25Reranker` takes its
document frequencies and average length from the texts of the call, and the default
``ensemble`` (:class:`~ragsieve.rerank.fusion.FusionReranker`) has features relative to the best
text of the call (``bm25_rel``, ``cosine_rel``). Scoring each expansion's children in one call,
as CARROT does, would then make a benefit depend on its siblings: benefits of different
expansions would not be comparable, the final arg-max over the tree would be meaningless and a
cache by ordered tuple would be wrong. So the scorer *anchors* those statistics to the query's
candidate pool, once per query:

* BM25: document frequencies and average length of the candidate chunks themselves (a
  concatenation of pool chunks contains no other term, so the idf is exact);
* ensemble: ``bm25_rel`` divides by the best raw BM25 of a *single* candidate and
  ``cosine_rel`` subtracts the best single-candidate cosine (a combination may exceed them).

Absolute scorers (the cross-encoder, the bi-encoder, any sentence-transformers cross-encoder)
are called as they are. With anchoring, a text's benefit is the same whatever batch it is scored
in (tested), which is what makes batching and caching correct.

Two more details make the benefit a function of the text alone, and cheap:

* The shipped cross-encoder is int8 ONNX with *dynamic* quantisation: activation scales come
  from the whole batch, so a padded batch changes every member's logit (by up to 0.8 on real
  chunks). The scorer therefore runs the model on one (query, text) pair at a time; on 2 cores
  that costs about 25% more than batching and makes ``W`` batch-invariant.
* Both neural scorers read a bounded window: 128 word pieces of (query, passage) for the
  cross-encoder, 256 for MiniLM. Every combination that starts with the same window of text
  has the same model input, hence the same score, so model outputs are cached by the
  *truncated token ids*. This is exact (the model never sees past the window) and it is why
  a 325-order exhaustive search costs a handful of model evaluations. It also means that with
  256-token chunks these two scorers judge a combination by its first chunk; BM25 (and the
  BM25 features of the ensemble) read the whole concatenation. docs/carrot.md discusses it.

Every :meth:`BenefitScorer.score` that scores new texts counts as one reranker call (CARROT's
one batched call per expansion); cached combinations are never scored again. ``calls``,
``texts_scored`` and ``model_inputs`` (distinct model inputs actually run) go into the trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragsieve.rerank.base import Reranker

#: Chunks of a combination are joined as in the LLM prompt's context (blank line between).
SEPARATOR = "\n\n"

Combo = tuple[int, ...]


class _AnchoredBM25:
    """Okapi BM25 with idf and average length fixed by the candidate pool."""

    def __init__(self, query: str, pool: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        from ragsieve.rerank.bm25 import tokenize

        self.k1, self.b = k1, b
        self.terms = tokenize(query)
        docs = [tokenize(t) for t in pool]
        n = len(docs)
        self.avgdl = float(np.mean([len(d) for d in docs])) if n else 1.0
        self.avgdl = self.avgdl if self.avgdl > 0 else 1.0
        self.idf: dict[str, float] = {}
        for term in set(self.terms):
            df = sum(term in set(d) for d in docs)
            self.idf[term] = float(np.log1p((n - df + 0.5) / (df + 0.5)))
        self._tokenize = tokenize

    def raw(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros(len(texts), dtype=np.float64)
        if not self.terms:
            return out
        for i, text in enumerate(texts):
            toks = self._tokenize(text)
            norm = self.k1 * (1.0 - self.b + self.b * len(toks) / self.avgdl)
            counts: dict[str, int] = {}
            for t in toks:
                if t in self.idf:
                    counts[t] = counts.get(t, 0) + 1
            # A repeated query term counts once per occurrence, as BM25Index.scores does.
            out[i] = sum(
                self.idf[t] * counts[t] * (self.k1 + 1.0) / (counts[t] + norm)
                for t in self.terms
                if t in counts
            )
        return out


class BenefitScorer:
    """``W(Phi)`` for ordered combinations of one query's candidate chunks, cached by tuple.

    ``pool`` holds the candidate texts; a combination is a tuple of indices into it. Scores are
    independent of the batch they are computed in (see the module docstring).
    """

    def __init__(self, reranker: Reranker, query: str, pool: Sequence[str]) -> None:
        from ragsieve.rerank.base import BiEncoderReranker
        from ragsieve.rerank.bm25 import BM25Reranker
        from ragsieve.rerank.cross_encoder import OnnxCrossEncoder
        from ragsieve.rerank.fusion import FusionReranker

        self.reranker = reranker
        self.query = query
        self.pool = list(pool)
        self.cache: dict[Combo, float] = {}
        self.calls = 0
        self.texts_scored = 0
        self.model_inputs = 0
        self._bm25: _AnchoredBM25 | None = None
        self._anchor: dict[str, float] | None = None
        self._ce: Any = None
        self._embedder: Any = None
        self._qvec: np.ndarray | None = None
        self._ce_cache: dict[Any, float] = {}
        self._cos_cache: dict[Any, float] = {}
        if isinstance(reranker, BM25Reranker):
            self._kind = "bm25"
            self._bm25 = _AnchoredBM25(query, self.pool, reranker.k1, reranker.b)
        elif isinstance(reranker, FusionReranker):
            self._kind = "ensemble"
            self._bm25 = _AnchoredBM25(query, self.pool, reranker.bm25.k1, reranker.bm25.b)
            self._ce = reranker.cross_encoder
            self._embedder = reranker.bi_encoder.embedder
        elif isinstance(reranker, OnnxCrossEncoder):
            self._kind = "cross-encoder"
            self._ce = reranker
        elif isinstance(reranker, BiEncoderReranker):
            self._kind = "bi-encoder"
            self._embedder = reranker.embedder
        else:
            self._kind = "plain"

    def reordered(self, perm: Sequence[int]) -> BenefitScorer:
        """The same scorer over ``[pool[i] for i in perm]``, sharing its model caches and
        continuing its counters.

        Lets a method score the single chunks once (its "rerank"), sort them, and search the
        sorted pool without scoring any text twice.
        """
        inv = {old: new for new, old in enumerate(perm)}
        other = BenefitScorer.__new__(BenefitScorer)
        other.__dict__.update(self.__dict__)
        other.pool = [self.pool[i] for i in perm]
        other.cache = {
            tuple(inv[i] for i in c): w for c, w in self.cache.items() if all(i in inv for i in c)
        }
        return other

    def fresh(self) -> BenefitScorer:
        """A scorer for the same query and pool with an empty combination cache and zeroed
        counters, sharing the model-output caches: two searches compared on one query (MCTS vs
        exhaustive) then count their own calls without running the models twice."""
        other = self.reordered(range(len(self.pool)))
        other.cache = {}
        other.calls = other.texts_scored = other.model_inputs = 0
        return other

    @property
    def name(self) -> str:
        return str(getattr(self.reranker, "name", type(self.reranker).__name__))

    def text(self, combo: Combo) -> str:
        return SEPARATOR.join(self.pool[i] for i in combo)

    def score(self, combos: Sequence[Combo]) -> np.ndarray:
        """Benefits of ``combos`` in order; the uncached ones are scored in ONE reranker call."""
        todo = list(dict.fromkeys(c for c in combos if c not in self.cache))
        if todo:
            values = self._score_texts([self.text(c) for c in todo])
            self.calls += 1
            self.texts_scored += len(todo)
            for c, v in zip(todo, values, strict=True):
                self.cache[c] = float(v)
        return np.asarray([self.cache[c] for c in combos], dtype=np.float64)

    def stats(self) -> dict[str, Any]:
        return {
            "reranker": self.name,
            "calls": self.calls,
            "texts_scored": self.texts_scored,
            "model_inputs": self.model_inputs,
        }

    # ------------------------------------------------------------------ per reranker kind
    def _score_texts(self, texts: list[str]) -> np.ndarray:
        if self._kind == "bm25":
            assert self._bm25 is not None
            raw = self._bm25.raw(texts)
            k = float(getattr(self.reranker, "k", 5.0))
            return raw / (raw + k)
        if self._kind == "ensemble":
            return self._ensemble(texts)
        if self._kind == "cross-encoder":
            return 1.0 / (1.0 + np.exp(-self._ce_logits(texts)))
        if self._kind == "bi-encoder":
            return np.clip(self._cosines(texts), 0.0, 1.0)
        self.model_inputs += len(texts)
        return np.asarray(self.reranker.score(self.query, texts), dtype=np.float64)

    def _ce_logits(self, texts: list[str]) -> np.ndarray:
        """Cross-encoder logits, one pair per model run, cached by the truncated input ids."""
        ce = self._ce
        ce._load()
        keys = [tuple(ce._tokenizer.encode(self.query, t).ids) for t in texts]
        for key, t in zip(keys, texts, strict=True):
            if key not in self._ce_cache:
                self._ce_cache[key] = float(ce.logits_pairs([(self.query, t)])[0])
                self.model_inputs += 1
        return np.asarray([self._ce_cache[k] for k in keys], dtype=np.float64)

    def _embed_key(self, text: str) -> Any:
        emb = self._embedder
        model = getattr(emb, "_model", None)
        tok = getattr(model, "tokenizer", None)
        if tok is not None and hasattr(model, "max_seq_length"):
            ids = tok(text, truncation=True, max_length=model.max_seq_length)["input_ids"]
            return tuple(ids)
        inner = getattr(emb, "_tok", None)  # MiniLMOnnxEmbedder: a truncating `tokenizers` one
        if inner is not None:
            return tuple(inner.encode(text).ids)
        return text

    def _cosines(self, texts: list[str]) -> np.ndarray:
        """Query-text cosines, embedding each distinct (truncated) input once."""
        from ragsieve.embed.base import SentenceTransformerEmbedder

        emb = self._embedder
        if self._qvec is None:
            self._qvec = np.asarray(emb.embed([self.query])[0], dtype=np.float64)
        keys = [self._embed_key(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._cos_cache}
        if missing:
            new = list(missing.values())
            if isinstance(emb, SentenceTransformerEmbedder):  # fp32: padding-invariant
                vecs = emb.embed(new)
            else:  # e.g. int8 ONNX: one text per run, as for the cross-encoder
                vecs = np.concatenate([emb.embed([t]) for t in new])
            for k, v in zip(missing, vecs, strict=True):
                self._cos_cache[k] = float(np.asarray(v, dtype=np.float64) @ self._qvec)
            self.model_inputs += len(new)
        return np.asarray([self._cos_cache[k] for k in keys], dtype=np.float64)

    def _ensemble(self, texts: list[str]) -> np.ndarray:
        from ragsieve.rerank.fusion import stack

        rr: Any = self.reranker
        assert self._bm25 is not None
        if self._anchor is None:
            # Anchors: the best single candidate's raw BM25 and cosine. MCTS's root expansion
            # scores exactly these singles, so their cosines are reused from the cache.
            cos = self._cosines(self.pool)
            raw = self._bm25.raw(self.pool)
            self._anchor = {
                "bm25": float(raw.max()) if raw.size else 0.0,
                "cos": float(cos.max()) if cos.size else 0.0,
            }
        ce = self._ce_logits(texts)
        cos = self._cosines(texts)
        raw = self._bm25.raw(texts)
        top = self._anchor["bm25"]
        feats = {
            "ce_logit": ce,
            "cosine": cos,
            "bm25": raw / (raw + rr.bm25.k),
            "bm25_rel": raw / top if top > 0 else np.zeros_like(raw),
            "cosine_rel": cos - self._anchor["cos"],
        }
        x = stack(feats, rr.weights.features)
        z = x @ np.asarray(rr.weights.coef) + rr.weights.intercept
        return 1.0 / (1.0 + np.exp(-z))
