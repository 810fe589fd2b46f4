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

Each reranker anchors itself (``reranker.anchored(query, pool)``, the
:class:`~ragsieve.rerank.base.Anchored` protocol); one without that method (a
sentence-transformers cross-encoder) is called as it is. With anchoring, a text's benefit is the
same whatever batch it is scored in (tested), which is what makes batching and caching correct.

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

``combination_cosine`` (:data:`~ragsieve.rerank.base.COMBINATION_COSINES`) says how a scorer
with a MiniLM cosine reads a combination: ``exact`` embeds its window with the index's build;
``int8`` with the same weights and int8 activations (about 2x faster a window); ``pooled``
(opt-in) gets each combination as its parts and pools its cosine from the parts' own token
states (:mod:`ragsieve.rerank.pooled`): one forward pass per candidate instead of one per window.

Every :meth:`BenefitScorer.score` that scores new texts counts as one reranker call (CARROT's
one batched call per expansion); cached combinations are never scored again. ``calls``,
``texts_scored`` and ``model_inputs`` (distinct model inputs actually run) go into the trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragsieve.rerank.base import Reranker, anchored, pools_combinations
from ragsieve.select.base import Selection
from ragsieve.types import Scored

#: Chunks of a combination are joined as in the LLM prompt's context (blank line between).
SEPARATOR = "\n\n"

Combo = tuple[int, ...]


class BenefitScorer:
    """``W(Phi)`` for ordered combinations of one query's candidate chunks, cached by tuple.

    ``pool`` holds the candidate texts; a combination is a tuple of indices into it. Scores are
    independent of the batch they are computed in (see the module docstring).
    """

    def __init__(
        self,
        reranker: Reranker,
        query: str,
        pool: Sequence[str],
        combination_cosine: str = "exact",
    ) -> None:
        self.reranker = reranker
        self.query = query
        self.pool = list(pool)
        self.cache: dict[Combo, float] = {}
        self.calls = 0
        self.texts_scored = 0
        self.model_inputs = 0
        #: The reranker anchored to this pool (shared, with its model caches, by the
        #: reordered and fresh copies: anchors depend on the pool's set, not its order).
        self.anchored = anchored(reranker, query, self.pool, combination_cosine)
        #: How combinations' cosines are read, as it runs: ``exact`` for a reranker without a
        #: MiniLM cosine (BM25, a cross-encoder alone) or a build without int8 activations.
        cos = getattr(self.anchored, "cos", self.anchored)
        self.combination_cosine = (
            str(getattr(cos, "kind", "exact")) if pools_combinations(reranker) else "exact"
        )

    def seed(self, cosines: Sequence[float | None]) -> None:
        """The pool texts' query cosines where already known (a dense retrieval's scores):
        a scorer with a cosine cache takes them instead of embedding the texts again."""
        seed = getattr(self.anchored, "seed", None)
        if callable(seed):
            seed(self.pool, cosines)

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
            values = self._score_combos(todo)
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
            "combination_cosine": self.combination_cosine,
        }

    def _score_combos(self, combos: list[Combo]) -> np.ndarray:
        """One scorer call; a scorer that reads combinations as their parts gets them so."""
        parts = getattr(self.anchored, "score_parts", None)
        if callable(parts):
            values, ran = parts([tuple(self.pool[i] for i in c) for c in combos], SEPARATOR)
        else:
            values, ran = self.anchored.score([self.text(c) for c in combos])
        self.model_inputs += ran
        return np.asarray(values, dtype=np.float64)


class PoolSearch:
    """A search over the top ``candidates`` ranked chunks (MCTS, exhaustive, beam): ``select``
    builds one :class:`BenefitScorer` for that pool and hands it to ``select_with``, which a
    method that already scored the chunks calls directly."""

    reranker: Reranker
    candidates: int

    def select(self, query: str, ranked: list[Scored]) -> Selection:
        pool = ranked[: self.candidates]
        return self.select_with(
            BenefitScorer(self.reranker, query, [s.chunk.text for s in pool]), pool
        )

    def select_with(self, scorer: BenefitScorer, pool: list[Scored]) -> Selection:
        raise NotImplementedError
