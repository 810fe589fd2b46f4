"""The ``ensemble`` reranker: the shipped cross-encoder fused with bi-encoder cosine and BM25.

Why: the cross-encoder we can train here (MiniLM-L6, ~12k pairs on 2 CPU cores) learns
question-passage interaction that neither baseline has, and wins on QASPER, but it sees too
little data to match BM25's exact-term matching on SQuAD or the bi-encoder's broad semantic
prior on HotpotQA (``benchmarks/results/reranker.md``). The three scorers err on different
pairs, so a calibrated linear fusion of their scores is better than each alone — the same
reason hybrid retrieval beats dense or sparse retrieval. This is a learned, documented deviation
from "a cross-encoder alone" in the reranker issue; ``--reranker cross-encoder`` still selects
the pure model.

Features of a (query, passage) pair inside its candidate list (:data:`FEATURES`):

* ``ce_logit``: the shipped int8 cross-encoder's logit;
* ``cosine``: the bi-encoder cosine (MiniLM, the index's default embedder, in the int8 ONNX
  build that writes and queries index vectors: no torch at query time);
* ``bm25``: BM25 over the candidate list, squashed ``s / (s + 5)`` as :class:`BM25Reranker`;
* ``bm25_rel``: raw BM25 divided by the list's best raw BM25 (0 when no query term occurs):
  how close a passage comes to the best lexical match, which is what makes BM25 strong on
  SQuAD, where some question terms occur in every paragraph of the article;
* ``cosine_rel``: cosine minus the list's best cosine.

Score = ``sigmoid(w . x + b)`` in [0, 1]; ``w``, ``b`` come from an L2-regularised logistic
regression (scikit-learn) fitted by :func:`fit_fusion` on *training* lists only: QASPER train
(question against every paragraph of its paper) and MS MARCO dev-small (query against its
positive and BM25-mined other positives). No evaluation set is used.
``ragsieve train-fusion`` reproduces ``models/reranker/fusion.json`` with a fixed seed.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.numeric import sigmoid

FEATURES = ("ce_logit", "cosine", "bm25", "bm25_rel", "cosine_rel")
FUSION_FILE = "fusion.json"


def shipped_fusion_path() -> Path:
    from ragsieve.rerank.cross_encoder import shipped_model_dir

    return shipped_model_dir() / FUSION_FILE


@dataclass(frozen=True)
class FusionWeights:
    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float

    @classmethod
    def load(cls, path: Path | None = None) -> FusionWeights:
        path = path or shipped_fusion_path()
        if not path.is_file():
            raise ConfigError(
                f"fusion weights {path} are missing: reinstall ragsieve or run "
                "`ragsieve train-fusion --out FILE`"
            )
        obj = json.loads(path.read_text(encoding="utf-8"))
        feats = tuple(obj["features"])
        unknown = [f for f in feats if f not in FEATURES]
        if unknown or len(obj["coef"]) != len(feats):
            raise ConfigError(f"fusion weights {path} are malformed (features {feats})")
        return cls(feats, tuple(float(c) for c in obj["coef"]), float(obj["intercept"]))


def list_features(
    ce_logits: np.ndarray, cosines: np.ndarray, bm25_raw: np.ndarray, bm25_k: float = 5.0
) -> dict[str, np.ndarray]:
    """Every feature of :data:`FEATURES` for one candidate list (arrays of equal length)."""
    ce = np.asarray(ce_logits, dtype=np.float64)
    cos = np.asarray(cosines, dtype=np.float64)
    raw = np.asarray(bm25_raw, dtype=np.float64)
    top = float(raw.max()) if raw.size else 0.0
    return {
        "ce_logit": ce,
        "cosine": cos,
        "bm25": raw / (raw + bm25_k),
        "bm25_rel": raw / top if top > 0 else np.zeros_like(raw),
        "cosine_rel": cos - (float(cos.max()) if cos.size else 0.0),
    }


def stack(feats: dict[str, np.ndarray], names: tuple[str, ...]) -> np.ndarray:
    return np.stack([feats[n] for n in names], axis=1) if names else np.zeros((0, 0))


class FusionReranker:
    """``sigmoid(w . features + b)``: cross-encoder + bi-encoder + BM25, weights from training."""

    def __init__(
        self,
        weights: FusionWeights | None = None,
        embedder: str = "minilm",
        cross_encoder: Any = None,
    ) -> None:
        from ragsieve.rerank.base import BiEncoderReranker
        from ragsieve.rerank.bm25 import BM25Reranker
        from ragsieve.rerank.cross_encoder import OnnxCrossEncoder

        self.name = "ensemble"
        self.pools_combinations = True
        self.weights = weights or FusionWeights.load()
        self.cross_encoder = cross_encoder or OnnxCrossEncoder()
        self.bi_encoder = BiEncoderReranker(embedder)
        self.bm25 = BM25Reranker()

    def features(
        self, query: str, texts: list[str], cosines: Sequence[float | None] | None = None
    ) -> dict[str, np.ndarray]:
        """Every feature of ``texts``; ``cosines`` may hold some already (None: embed)."""
        known = cosines if cosines is not None else [None] * len(texts)
        return list_features(
            self.cross_encoder.logits(query, texts),
            self.bi_encoder.cosines(query, texts, known),
            self.bm25.raw_scores(query, texts),
            self.bm25.k,
        )

    def anchored(
        self, query: str, pool: Sequence[str], combination_cosine: str = "exact"
    ) -> AnchoredFusion:
        """The ensemble with ``bm25_rel`` and ``cosine_rel`` relative to the best *single* pool
        text instead of the best text of the call (a combination may exceed them).
        ``combination_cosine``: how a text without a known cosine is read
        (:data:`~ragsieve.rerank.base.COMBINATION_COSINES`)."""
        return AnchoredFusion(self, query, pool, combination_cosine)

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        return self.score_known(query, texts, [None] * len(texts))

    def score_known(
        self, query: str, texts: list[str], cosines: Sequence[float | None]
    ) -> np.ndarray:
        """:meth:`score` with some cosines already known (the dense retriever's; see
        :func:`~ragsieve.rerank.base.rerank`): those texts are not embedded again."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        x = stack(self.features(query, texts, cosines), self.weights.features)
        z = x @ np.asarray(self.weights.coef) + self.weights.intercept
        return sigmoid(z).astype(np.float32)


class AnchoredFusion:
    """:meth:`FusionReranker.anchored`: pairwise cross-encoder logits, cached cosines and
    pool-anchored BM25, combined by the trained weights. ``combination_cosine`` says how a text
    without a known cosine is read (:func:`~ragsieve.rerank.base.cosine_scorer`)."""

    def __init__(
        self, rr: FusionReranker, query: str, pool: Sequence[str], combination_cosine: str = "exact"
    ) -> None:
        from ragsieve.rerank.base import cosine_scorer
        from ragsieve.rerank.bm25 import AnchoredBM25
        from ragsieve.rerank.cross_encoder import PairwiseLogits

        self.rr, self.pool = rr, list(pool)
        self.ce = PairwiseLogits(rr.cross_encoder, query)
        self.cos: Any = cosine_scorer(rr.bi_encoder.embedder, query, combination_cosine)
        self.bm25 = AnchoredBM25(query, self.pool, rr.bm25.k1, rr.bm25.b, rr.bm25.k)
        self._anchor: dict[str, float] | None = None

    def seed(self, texts: Sequence[str], cosines: Sequence[float | None]) -> None:
        """Cosines already known for some texts (:meth:`CachedCosines.seed`)."""
        self.cos.seed(texts, cosines)

    def share(self, ce: Any = None, cos: Any = None) -> None:
        """Reuse another scorer's model caches for the same query (same models)."""
        self.ce = ce if ce is not None else self.ce
        self.cos = cos if cos is not None else self.cos

    def score(self, texts: list[str]) -> tuple[np.ndarray, int]:
        return self._score(texts, None)

    def score_parts(
        self, parts: Sequence[tuple[str, ...]], separator: str
    ) -> tuple[np.ndarray, int]:
        """:meth:`score` of each combination given as its parts, joined by ``separator``; the
        cosine is pooled from the parts where this scorer pools."""
        texts = [separator.join(p) for p in parts]
        cosines_parts = getattr(self.cos, "cosines_parts", None)
        if not callable(cosines_parts):
            return self._score(texts, None)
        return self._score(texts, cosines_parts(parts, separator))

    def _score(
        self, texts: list[str], cosines: tuple[np.ndarray, int] | None
    ) -> tuple[np.ndarray, int]:
        """The fused scores of ``texts``; ``cosines`` (values, model runs) where already
        computed, else the texts' cached cosines."""
        ran = 0
        if self._anchor is None:
            # The best single candidate's raw BM25 and cosine; MCTS's root expansion scores
            # exactly these singles, so their cosines are reused from the cache.
            cos, ran = self.cos.cosines(self.pool)
            raw = self.bm25.raw(self.pool)
            self._anchor = {
                "bm25": float(raw.max()) if raw.size else 0.0,
                "cos": float(cos.max()) if cos.size else 0.0,
            }
        ce, n_ce = self.ce.logits(texts)
        cos, n_cos = cosines if cosines is not None else self.cos.cosines(texts)
        raw = self.bm25.raw(texts)
        top = self._anchor["bm25"]
        feats = {
            "ce_logit": ce,
            "cosine": cos,
            "bm25": raw / (raw + self.rr.bm25.k),
            "bm25_rel": raw / top if top > 0 else np.zeros_like(raw),
            "cosine_rel": cos - self._anchor["cos"],
        }
        w = self.rr.weights
        z = stack(feats, w.features) @ np.asarray(w.coef) + w.intercept
        return sigmoid(z), ran + n_ce + n_cos


# --------------------------------------------------------------------------- fitting


@dataclass(frozen=True)
class TrainList:
    query: str
    passages: tuple[str, ...]
    gold: frozenset[int]
    source: str


def build_fusion_lists(
    data_dir: Path, qasper: int, msmarco: int, negatives: int, seed: int
) -> list[TrainList]:
    """Training lists shaped like real reranking: many candidates, few gold.

    QASPER train: a question against all paragraphs of its paper (gold = evidence paragraphs).
    MS MARCO dev-small: a query against its positive plus the ``negatives`` best BM25 matches
    among the other queries' positives (hard, as a first-stage retriever would return them).
    """
    from ragsieve.data import msmarco_positives
    from ragsieve.rerank.bm25 import BM25Index
    from ragsieve.rerank.sources import other_positives, qasper_train

    rng = random.Random(seed)
    lists = [
        TrainList(q["question"].strip(), tuple(paras), frozenset(gold), "qasper")
        for q, paras, gold in qasper_train(data_dir)
    ]
    lists = rng.sample(lists, min(qasper, len(lists)))

    queries, passages = msmarco_positives(data_dir)
    index = BM25Index(passages)
    for qi in rng.sample(range(len(queries)), min(msmarco, len(queries))):
        negs = other_positives(index, queries, passages, qi, negatives + 5)
        cands = [qi, *negs[:negatives]]
        rng.shuffle(cands)
        gold = frozenset(k for k, i in enumerate(cands) if i == qi)
        lists.append(TrainList(queries[qi], tuple(passages[i] for i in cands), gold, "msmarco"))
    return lists


def compute_features(
    lists: list[TrainList], embedder: str = "minilm", log: Callable[[str], None] = print
) -> list[dict[str, np.ndarray]]:
    """Features of every list; each distinct text is embedded once."""
    from ragsieve.embed import index_embedder
    from ragsieve.rerank.bm25 import BM25Reranker
    from ragsieve.rerank.cross_encoder import OnnxCrossEncoder

    t0 = time.perf_counter()
    texts = list(dict.fromkeys([t.query for t in lists] + [p for t in lists for p in t.passages]))
    vecs = index_embedder(embedder).embed(texts)  # the build the reranker scores with
    row = {t: i for i, t in enumerate(texts)}
    log(f"embedded {len(texts)} texts ({time.perf_counter() - t0:.0f}s)")
    ce, bm25 = OnnxCrossEncoder(), BM25Reranker()
    out = []
    t0 = time.perf_counter()
    for n, t in enumerate(lists, start=1):
        ps = list(t.passages)
        cos = vecs[[row[p] for p in ps]] @ vecs[row[t.query]]
        out.append(list_features(ce.logits(t.query, ps), cos, bm25.raw_scores(t.query, ps)))
        if n % 100 == 0:
            log(f"features: {n}/{len(lists)} lists ({time.perf_counter() - t0:.0f}s)")
    return out


def fit_weights(
    lists: list[TrainList],
    feats: list[dict[str, np.ndarray]],
    names: tuple[str, ...] = FEATURES,
    c: float = 1.0,
) -> FusionWeights:
    """L2 logistic regression on every (pair, is-gold) of the lists, classes balanced per
    source so that QASPER's long lists do not drown MS MARCO's short ones."""
    from sklearn.linear_model import LogisticRegression

    xs, ys, ws = [], [], []
    per_source: dict[str, int] = {}
    for t in lists:
        per_source[t.source] = per_source.get(t.source, 0) + 1
    for t, f in zip(lists, feats, strict=True):
        n = len(t.passages)
        xs.append(stack(f, names))
        ys.append(np.array([1 if i in t.gold else 0 for i in range(n)]))
        # each list weighs the same inside its source, each source the same overall
        ws.append(np.full(n, 1.0 / (n * per_source[t.source])))
    x, y, w = np.concatenate(xs), np.concatenate(ys), np.concatenate(ws)
    w = w * len(w) / w.sum()
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(x, y, sample_weight=w)
    return FusionWeights(
        names, tuple(round(float(v), 6) for v in model.coef_[0]), float(model.intercept_[0])
    )


def train_fusion(
    out: Path,
    data_dir: Path,
    qasper: int = 300,
    msmarco: int = 300,
    negatives: int = 19,
    seed: int = 13,
    command: str = "",
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Build training lists, compute features with the shipped models, fit, write ``out``."""
    from ragsieve.data import sha256_file
    from ragsieve.rerank.train import TRAIN_FILES

    t0 = time.perf_counter()
    lists = build_fusion_lists(data_dir, qasper, msmarco, negatives, seed)
    log(f"{len(lists)} training lists, {sum(len(t.passages) for t in lists)} pairs")
    feats = compute_features(lists, log=log)
    weights = fit_weights(lists, feats)
    info: dict[str, Any] = {
        "features": list(weights.features),
        "coef": list(weights.coef),
        "intercept": round(weights.intercept, 6),
        "score": "sigmoid(coef . features + intercept)",
        "training": {
            "lists": {"qasper": qasper, "msmarco": msmarco},
            "msmarco_negatives": negatives,
            "pairs": sum(len(t.passages) for t in lists),
            "seed": seed,
            "seconds": round(time.perf_counter() - t0, 1),
            "command": command,
            "data_sha256": {f: sha256_file(data_dir / f) for f in TRAIN_FILES},
        },
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    log(f"weights {dict(zip(weights.features, weights.coef, strict=True))} -> {out}")
    return info
