"""Fit the tagger's stacked keep decision on the dev split and choose its threshold there.

    python -m ragsieve.tag.fit.stack [--model DIR] [--squad 400] [--limit N]

Reads the dev pools (:mod:`ragsieve.tag.fit.pools`: the 95 HotpotQA train questions held out of
training, weighted x3, and ``--squad`` SQuAD-train dev-article questions), tags each with the
model (both hops), and fits :class:`~ragsieve.tag.stack.Stacker` on their sentence gold. The
threshold is chosen on 5-fold out-of-fold predictions by the rule the raw threshold was chosen
by (:func:`ragsieve.tag.fit.pools.choose_point`): the fewest mean tokens, with the budget as a
ceiling, whose answer recall on every dev set stays at naive's within ``--tolerance`` (one dev
question in 100). A second, open point (no budget) is chosen by the same rule against naive's
whole pool, or the best the curve reaches where that is out of reach (:func:`open_reference`).
The final
weights are fitted on all of dev and written to ``DIR/stack.json`` with the whole
cross-validated curve. No test question is read. About 8 minutes on 2 cores.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.data import find_data_dir
from ragsieve.tag.fit.args import OneLineParser, check_positive, run_main
from ragsieve.tag.fit.pools import (
    TOLERANCE,
    Pool,
    choose_point,
    dense_order,
    load_split,
    mean,
    measure,
    naive,
)
from ragsieve.tag.model import OnnxTagger
from ragsieve.tag.prune import Tagger, readings
from ragsieve.tag.stack import Stacker, features, fit_weights, logistic

GRID = tuple(round(x, 2) for x in np.arange(0.02, 0.51, 0.01))
#: The open operating point's grid (no budget): naive then sends the whole pool, and matching
#: its answer recall takes thresholds below the budgeted grid's.
OPEN_GRID = (0.002, 0.004, 0.006, 0.008, 0.01, 0.0125, 0.015, 0.0175, 0.02, 0.025, 0.03, 0.04, 0.05)
FOLDS = 5
HOTPOT_WEIGHT = 3.0
BUDGET = 450
#: The floor on passage relevance stored with the stacker (see ``Stacker.passage_threshold``:
#: set for off-topic passages, which no dev pool holds; the threshold is chosen with it on).
PASSAGE_FLOOR = 0.1


def dev_pools(
    data: Path, squad: int, seed: int = 11, limit: int | None = None
) -> dict[str, list[Pool]]:
    """The stacker's dev pools: every held-out HotpotQA train question and ``squad``
    SQuAD-train dev-article questions (``limit``: at most that many of each, for tests)."""
    return load_split("dev", data, limit, squad, seed)


Rows = tuple[np.ndarray, np.ndarray, list[tuple[int, int]], np.ndarray]


def question_rows(tagger: Tagger, q: Pool) -> Rows:
    """Features, gold labels, (passage, sentence) and passage relevance of every sentence of
    one pool."""
    passages = [(t, s) for t, s, _ in q["pool"]]
    r = readings(tagger, q["question"], passages)
    mats = features(r.first, r.merged, r.bridge)
    where = [(p, s) for p, (_, sents, _) in enumerate(q["pool"]) for s in range(len(sents))]
    labels = np.array([y for _, _, ys in q["pool"] for y in ys], dtype=np.int64)
    rel = np.array([r.merged[p].relevance for p, _ in where], dtype=np.float64)
    return np.vstack(mats), labels, where, rel


def curve(
    sets: dict[str, list[Pool]],
    rows: dict[str, list[Rows]],
    probs: dict[str, list[np.ndarray]],
    budget: int | None,
    grid: Sequence[float] = GRID,
    floor: float = PASSAGE_FLOOR,
) -> dict[str, dict[str, dict[str, float]]]:
    """Per set and threshold, the mean metrics of keeping probability >= threshold in passages
    at or above ``floor`` (at least the most probable sentence, as ``prune``'s
    ``min_keep=1``) within ``budget``."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, qs in sets.items():
        out[name] = {}
        for c in grid:
            res = []
            for q, (_, _, where, rel), pr in zip(qs, rows[name], probs[name], strict=True):
                idx = np.flatnonzero((pr >= c) & (rel >= floor))
                if len(idx) == 0:
                    idx = np.array([int(np.argmax(pr))])
                res.append(measure([(*where[i], float(pr[i])) for i in idx], q, budget))
            out[name][_key(c)] = mean(res)
    return out


def open_reference(
    points: dict[str, dict[str, dict[str, float]]], base: dict[str, dict[str, float]]
) -> dict[str, float]:
    """The answer recall the open point must stay at, per set: naive's, or where no point of
    the curve reaches it, the best the curve reaches. A dev pool holds its answer by
    construction, so naive over the whole pool scores 1.0; on HotpotQA no threshold gets there
    (docs/tagger.md), and the rule would fall back to the lowest
    threshold of the grid whatever it costs."""
    return {
        n: min(base[n]["answer_recall"], max(m["answer_recall"] for m in points[n].values()))
        for n in points
    }


def _key(c: float) -> str:
    return f"{c:.2f}" if round(c, 2) == c else f"{c:g}"


def naive_means(sets: dict[str, list[Pool]], budget: int | None) -> dict[str, dict[str, float]]:
    """Naive's mean metrics per set: each pool's passages in dense (MiniLM) order, whole,
    within ``budget``; the reference the operating-point rule holds answer recall to."""
    from ragsieve.embed import get_embedder

    embed = get_embedder("minilm-onnx")
    return {
        n: mean([naive(q, dense_order(q["question"], q["pool"], embed), budget) for q in qs])
        for n, qs in sets.items()
    }


def _fit_on(rows: dict[str, list[Rows]], picked: list[tuple[str, int]]) -> tuple[Any, ...]:
    """:func:`~ragsieve.tag.stack.fit_weights` on the ``picked`` questions' rows, HotpotQA's
    weighted :data:`HOTPOT_WEIGHT`."""
    x = np.vstack([rows[n][i][0] for n, i in picked])
    y = np.concatenate([rows[n][i][1] for n, i in picked])
    w = np.concatenate(
        [np.full(len(rows[n][i][1]), HOTPOT_WEIGHT if n == "hotpot" else 1.0) for n, i in picked]
    )
    return fit_weights(x, y, w)


def out_of_fold(rows: dict[str, list[Rows]], folds: int = FOLDS) -> dict[str, list[np.ndarray]]:
    """Every question's keep probabilities from weights fitted on the other folds (questions
    dealt round-robin over the sets in order). Any number of feature columns: the benchmarks
    compare candidate features with it."""
    keys = [(n, i) for n in rows for i in range(len(rows[n]))]
    fold = {k: j % folds for j, k in enumerate(keys)}
    oof: dict[str, list[np.ndarray]] = {n: [np.zeros(0)] * len(qs) for n, qs in rows.items()}
    for f in range(folds):
        weights = _fit_on(rows, [k for k in keys if fold[k] != f])
        for n, i in (k for k in keys if fold[k] == f):
            oof[n][i] = logistic([rows[n][i][0]], *weights)[0]
    return oof


def fit_stack(
    tagger: Tagger,
    sets: dict[str, list[Pool]],
    budget: int = BUDGET,
    folds: int = FOLDS,
    tolerance: float = TOLERANCE,
    log: Any = print,
) -> tuple[Stacker, dict[str, Any]]:
    """The stacker fitted on every pool of ``sets`` and its cross-validated threshold, with a
    report (naive, the out-of-fold curve, the chosen point)."""
    t0 = time.perf_counter()
    rows = {n: [question_rows(tagger, q) for q in qs] for n, qs in sets.items()}
    log(f"tagged {sum(map(len, sets.values()))} dev questions in {time.perf_counter() - t0:.0f}s")
    base = naive_means(sets, budget)
    oof = out_of_fold(rows, folds)
    points = curve(sets, rows, oof, budget)
    th = float(choose_point(points, {n: b["answer_recall"] for n, b in base.items()}, tolerance))
    # The open point: no budget, against naive's whole pool, by the same rule.
    open_base = {
        n: mean([naive(q, list(range(len(q["pool"]))), None) for q in qs]) for n, qs in sets.items()
    }
    open_points = curve(sets, rows, oof, None, OPEN_GRID)
    reference = open_reference(open_points, open_base)
    open_th = float(choose_point(open_points, reference, tolerance))
    keys = [(n, i) for n in rows for i in range(len(rows[n]))]
    stacker = Stacker(
        *_fit_on(rows, keys), threshold=th, passage_threshold=PASSAGE_FLOOR, open_threshold=open_th
    )
    report = {
        "budget": budget,
        "passage_floor": PASSAGE_FLOOR,
        "folds": folds,
        "tolerance": tolerance,
        "questions": {n: len(qs) for n, qs in sets.items()},
        "naive": base,
        "cv": points,
        "chosen": th,
        "open": {
            "naive": open_base,
            "reference": reference,
            "cv": open_points,
            "chosen": open_th,
        },
        "questions_sha256": {
            n: hashlib.sha256("\n".join(q["question"] for q in qs).encode()).hexdigest()
            for n, qs in sets.items()
        },
    }
    return stacker, report


def main(argv: Sequence[str] | None = None) -> int:
    """Fit and save; a bad option, model folder or data folder is one line on stderr and a
    non-zero exit, with any stack.json already there left as it was (it is replaced whole,
    at the end)."""
    return run_main(_fit_and_save, argv)


def _fit_and_save(argv: Sequence[str] | None) -> None:
    ap = OneLineParser(
        prog="python -m ragsieve.tag.fit.stack", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--model", type=Path, default=None, help="tagger folder (default: shipped)")
    ap.add_argument(
        "--out", type=Path, default=None, help="where stack.json goes (default: --model)"
    )
    ap.add_argument("--squad", type=int, default=400, help="SQuAD dev-article questions")
    ap.add_argument("--limit", type=int, default=None, help="at most N questions per set")
    ap.add_argument("--budget", type=int, default=BUDGET)
    args = ap.parse_args(argv)
    check_positive(args, "squad", "limit", "budget")
    tagger = OnnxTagger(args.model)
    tagger.threshold  # noqa: B018 -- loads the model now: a bad folder fails before the data is read
    sets = dev_pools(find_data_dir(), args.squad, limit=args.limit)
    stacker, report = fit_stack(tagger, sets, args.budget)
    out = args.out or tagger.model_dir
    path = stacker.save(out, {"dev": report})
    for label, part in (("budget " + str(args.budget), report), ("no budget", report["open"])):
        best = _key(part["chosen"])
        for n in sets:
            m, nv = part["cv"][n][best], part["naive"][n]
            print(
                f"{label}, {n}: {m['tokens']:.0f} tokens ({m['tokens'] / nv['tokens']:.2f}x "
                f"naive), answer recall {m['answer_recall']:.3f} (naive "
                f"{nv['answer_recall']:.3f}), evidence recall {m['evidence_recall']:.3f} "
                f"(naive {nv['evidence_recall']:.3f})"
            )
        print(f"{label}: threshold {best} (5-fold, dev)")
    print(f"-> {path}")


if __name__ == "__main__":
    sys.exit(main())
