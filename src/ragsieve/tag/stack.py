"""The stacked keep decision: a logistic regression over the tagger's own readings.

The tagger's raw sentence probability is read one passage at a time, so it cannot compare a
sentence with the rest of the pool, and its second (bridge) reading has no say on whether the
passage is worth reading at all. On the dev split the misses were mostly the best sentence of a
passage the passage head rated highly (the answer one sentence away from the question's words)
while lone high-probability sentences of same-entity distractors were kept. A single fixed
threshold on the raw probability cannot tell these apart; eleven numbers the tagger already
computes can. The stacker scores every sentence from them:

- ``sentence``, ``sentence_hop``: logit of the first reading and of the better of both readings;
- ``passage``, ``passage_hop``: the same for the passage head;
- ``passage_rank``, ``sentence_rank``: ranks by the hop readings, in the pool and the passage;
- ``passage_best``, ``passage_best_first``: the passage's best sentence logit (hop, first);
- ``bridge``: the passage whose kept sentences joined the question for the second hop;
- ``top_passage``: the pool's most relevant passage; ``second_passage``: the runner-up's logit.

It has two operating points, both chosen on dev, each against naive in its own regime:
``threshold`` (the default, chosen with a token budget as a ceiling) and ``open_threshold``
(opt-in, ``open_point``: chosen with no budget, for recall).
A passage below the stacker's ``passage_threshold`` (a floor on the passage head) keeps nothing
but ``min_keep``, as in the raw rule.

Weights are fitted on the dev split's pools (``python -m ragsieve.tag.fit.stack``: HotpotQA
train questions and SQuAD train dev-article questions that training never read) and its
threshold chosen there by 5-fold cross-validation, then stored as ``stack.json`` beside the
model. This is our design, not a paper's: Provence thresholds its token probabilities
directly; docs/tagger.md measures both.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.numeric import sigmoid
from ragsieve.tag.verdict import Tagged

STACK_FILE = "stack.json"
FEATURES = (
    "sentence",
    "sentence_hop",
    "passage",
    "passage_hop",
    "passage_rank",
    "sentence_rank",
    "passage_best",
    "passage_best_first",
    "bridge",
    "top_passage",
    "second_passage",
)


def _logit(x: Any) -> np.ndarray:
    p = np.clip(np.asarray(x, dtype=np.float64), 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


def _ranks(values: np.ndarray) -> np.ndarray:
    return np.argsort(np.argsort(-values, kind="stable"), kind="stable").astype(np.float64)


def features(
    first: Sequence[Tagged], merged: Sequence[Tagged], bridge: int | None
) -> list[np.ndarray]:
    """Per passage, a (sentences x ``len(FEATURES)``) matrix from the first reading, the
    merged (better of both hops) reading and the bridge passage's number."""
    rel_m = np.array([t.relevance for t in merged], dtype=np.float64)
    prank = _ranks(rel_m)
    second = float(np.sort(rel_m)[-2]) if len(rel_m) > 1 else 0.5
    out = []
    for p, (a, b) in enumerate(zip(first, merged, strict=True)):
        n = len(b.probs)
        if n == 0:
            out.append(np.zeros((0, len(FEATURES))))
            continue
        col = np.ones(n)
        out.append(
            np.column_stack(
                [
                    _logit(a.probs),
                    _logit(b.probs),
                    col * _logit(a.relevance),
                    col * _logit(b.relevance),
                    col * prank[p],
                    _ranks(np.asarray(b.probs, dtype=np.float64)),
                    col * _logit(np.max(b.probs)),
                    col * _logit(np.max(a.probs)),
                    col * float(p == bridge),
                    col * float(rel_m[p] == rel_m.max()),
                    col * _logit(second),
                ]
            )
        )
    return out


@dataclass(frozen=True)
class Stacker:
    """Standardised features -> logistic regression -> keep probability; ``threshold`` is the
    operating point chosen on dev for that probability."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    features: tuple[str, ...] = FEATURES
    #: A floor on the passage head's (hop) relevance. The dev pools are all on-topic (a
    #: HotpotQA question's distractors, a SQuAD article's paragraphs), so the stacker never saw
    #: an off-topic passage; the passage head did (whole-passage negatives), and this floor lets
    #: it veto one: on the sample corpus the best sentences of the bees and lighthouse passages
    #: (relevance 0.02-0.04) reached 0.08-0.09 for a Rosetta question without it. On dev it
    #: costs at most half a question in 100 (docs/tagger.md).
    passage_threshold: float = 0.0
    #: The open operating point, for a context no budget caps (None: ``threshold``). Chosen
    #: on dev by the same rule against naive's whole pool: with a ceiling, naive itself is cut
    #: to the budget and a tighter point matches it; without one, naive sends every passage and
    #: matching its answer recall takes more sentences. Opt-in: on dev with no budget its
    #: longer contexts cost the local SmolLM2 reader F1 (qwen-0.5b: within noise), and on the
    #: sample corpus they turned its right answer wrong (docs/tagger.md, BENCHMARKS.md).
    open_threshold: float | None = None

    def threshold_for(self, open_point: bool) -> float:
        """The default threshold: the open point's where asked for (and fitted), else the
        budgeted point's."""
        if open_point and self.open_threshold is not None:
            return self.open_threshold
        return self.threshold

    def __post_init__(self) -> None:
        if tuple(self.features) != FEATURES or not (
            len(self.mean) == len(self.scale) == len(self.coef) == len(FEATURES)
        ):
            raise ConfigError(
                f"stacker features {list(self.features)} do not match this ragsieve's "
                f"{list(FEATURES)}: refit it with `python -m ragsieve.tag.fit.stack`"
            )

    def probs(self, rows: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Keep probabilities for :func:`features`' matrices."""
        return logistic(rows, self.mean, self.scale, self.coef, self.intercept)

    def keep_probs(
        self, first: Sequence[Tagged], merged: Sequence[Tagged], bridge: int | None
    ) -> list[np.ndarray]:
        return self.probs(features(first, merged, bridge))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {**d, "features": list(self.features)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Stacker:
        try:
            return cls(
                tuple(float(x) for x in d["mean"]),
                tuple(float(x) for x in d["scale"]),
                tuple(float(x) for x in d["coef"]),
                float(d["intercept"]),
                float(d["threshold"]),
                tuple(str(x) for x in d["features"]),
                float(d.get("passage_threshold", 0.0)),
                None if d.get("open_threshold") is None else float(d["open_threshold"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"malformed {STACK_FILE}: {exc}") from exc

    def save(self, model_dir: Path, extra: dict[str, Any] | None = None) -> Path:
        path = Path(model_dir) / STACK_FILE
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({**self.to_dict(), **(extra or {})}, indent=2) + "\n", "utf-8")
        tmp.replace(path)
        return path


def load_stacker(model_dir: Path) -> Stacker | None:
    """The model folder's stacker, or None where it has none (a model trained before it, or
    one trained without ``tag.fit.stack``)."""
    path = Path(model_dir) / STACK_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    return Stacker.from_dict(data)


def logistic(
    rows: Sequence[np.ndarray],
    mean: Sequence[float],
    scale: Sequence[float],
    coef: Sequence[float],
    intercept: float,
) -> list[np.ndarray]:
    """Probabilities of standardised logistic-regression weights (:func:`fit_weights`'
    output) for each matrix of ``rows``: the stacker's, or a candidate's with other columns."""
    m, sc, co = (np.asarray(v, dtype=np.float64) for v in (mean, scale, coef))
    out = []
    for x in rows:
        z = ((x - m) / sc) @ co + intercept if len(x) else np.zeros(0)
        out.append(sigmoid(z))
    return out


def fit_weights(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None, c: float = 1.0
) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...], float]:
    """Standardisation and logistic-regression weights (scikit-learn, L2 ``c``) for rows ``x``
    labelled ``y``: (mean, scale, coef, intercept)."""
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    lr = LogisticRegression(C=c, max_iter=5000).fit((x - mean) / scale, y, sample_weight=weight)
    as_t = lambda v: tuple(float(a) for a in v)  # noqa: E731
    return as_t(mean), as_t(scale), as_t(lr.coef_[0]), float(lr.intercept_[0])
