"""Dev only: does the tagger's hidden state know which passages hold evidence better than its
passage head says? A linear probe on the passage head's own input (the mean-pooled last hidden
state, 384 numbers), fitted on the tagger's training questions, against the head and against
the head's distillation teacher (the shipped cross-encoder), on the stacker's dev pools.

    .venv/bin/python benchmarks/passage_probe.py [--squad-train 300] [--cache FILE] [--model DIR]
    .venv/bin/python benchmarks/passage_probe.py --compare-heads DIR [DIR ...]

Prints, for HotpotQA and SQuAD dev: gold-vs-distractor AUC of the passages' first readings and
of the bridge hop's second readings (head, teacher, probe; the probe with a question-bootstrap
95% interval against the head), the distractors the hop's gate (relevance >= 0.3) lets through
and the probe's share at the same gold retention; then the stacker 5-fold out-of-fold on the
dev pools with and without two probe features (``fit_stack``'s folds, weights and rule).
The probe reads the tagger built with ``pooled=True`` (the graph with the head's input as one
more output; every tag bit-identical, tests/tag/test_graph.py). ``--model DIR`` measures
another tagger folder, such as one whose head ``ragsieve.tag.fit_head`` refitted.
Results in BENCHMARKS.md, issue 31, "Stop 41".
"""

from __future__ import annotations

import argparse
import pickle
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.data import find_data_dir
from ragsieve.tag.fit_stack import BUDGET, curve, dev_pools, naive_means, out_of_fold
from ragsieve.tag.model import OnnxTagger, Tagged
from ragsieve.tag.pools import Pool, choose_point, train_pools
from ragsieve.tag.prune import readings
from ragsieve.tag.stack import features


def read_pool(tagger: OnnxTagger, q: Pool) -> dict[str, Any]:
    """Both readings of one pool as (passage-head logit, pooled state), and the stacker's
    rows (as ``fit_stack.question_rows`` builds them)."""
    passages = [(t, s) for t, s, _ in q["pool"]]
    r = readings(tagger, q["question"], passages)

    def pair(t: Tagged) -> tuple[float, np.ndarray]:
        assert t.pooled is not None
        rel = min(max(t.relevance, 1e-7), 1.0 - 1e-7)
        return float(np.log(rel / (1.0 - rel))), t.pooled

    where = [(p, s) for p, (_, sents, _) in enumerate(q["pool"]) for s in range(len(sents))]
    return {
        "question": q["question"],
        "gold": [int(any(g)) for _, _, g in q["pool"]],
        "first": [pair(t) for t in r.first],
        "second": {i: pair(t) for i, t in enumerate(r.second) if t is not None},
        "x": np.vstack(features(r.first, r.merged, r.bridge)),
        "y": np.array([y for _, _, ys in q["pool"] for y in ys], dtype=np.int64),
        "where": where,
        "rel": np.array([r.merged[p].relevance for p, _ in where], dtype=np.float64),
        "sizes": [len(ys) for _, _, ys in q["pool"]],
    }


def vectors(rows: list[dict[str, Any]], which: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pooled states, gold, passage-head logits) of every first or second reading."""
    xs, ys, hs = [], [], []
    for r in rows:
        got = enumerate(r["first"]) if which == "first" else r["second"].items()
        for i, (logit, v) in got:
            xs.append(v)
            ys.append(r["gold"][i])
            hs.append(logit)
    return np.array(xs), np.array(ys), np.array(hs)


def fit_probe(rows: list[dict[str, Any]], which: Sequence[str]) -> Any:
    """Standardised logistic regression, L2 strength chosen by 5-fold log loss grouped by
    question, on the readings ``which`` of ``rows``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    parts = [vectors(rows, w) for w in which]
    x = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    groups = np.concatenate(
        [
            [k for k, r in enumerate(rows) for _ in (r["first"] if w == "first" else r["second"])]
            for w in which
        ]
    )
    best = (np.inf, 1.0)
    for c in (0.001, 0.003, 0.01, 0.03, 0.1):
        losses = []
        for a, b in GroupKFold(5).split(x, y, groups):
            m = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=3000))
            losses.append(log_loss(y[b], m.fit(x[a], y[a]).predict_proba(x[b])[:, 1]))
        best = min(best, (float(np.mean(losses)), c))
    model = make_pipeline(StandardScaler(), LogisticRegression(C=best[1], max_iter=3000))
    return model.fit(x, y)


def teacher_logits(pools: list[Pool]) -> list[np.ndarray]:
    """The passage head's distillation teacher (the shipped cross-encoder) on each passage,
    read with the question alone."""
    from ragsieve.rerank.cross_encoder import OnnxCrossEncoder

    ce = OnnxCrossEncoder()
    return [
        ce.logits(q["question"], [f"{t}: {' '.join(s)}" for t, s, _ in q["pool"]]) for q in pools
    ]


def auc_table(name: str, rows: list[dict[str, Any]], pools: list[Pool], probe: Any) -> None:
    from sklearn.metrics import roc_auc_score

    teach = teacher_logits(pools)
    for which in ("first", "second"):
        x, y, head = vectors(rows, which)
        if len(set(y)) < 2:
            continue
        t = np.array(
            [
                teach[k][i]
                for k, r in enumerate(rows)
                for i in (range(len(r["first"])) if which == "first" else r["second"])
            ]
        )
        p = probe.decision_function(x)
        q_of = np.array(
            [
                k
                for k, r in enumerate(rows)
                for _ in (r["first"] if which == "first" else r["second"])
            ]
        )
        rng, diffs = np.random.default_rng(0), []
        for _ in range(2000):
            idx = np.concatenate(
                [np.flatnonzero(q_of == k) for k in rng.choice(len(rows), len(rows))]
            )
            if 0 < y[idx].sum() < len(idx):
                diffs.append(roc_auc_score(y[idx], p[idx]) - roc_auc_score(y[idx], head[idx]))
        lo, hi = np.percentile(diffs, [2.5, 97.5])
        line = (
            f"{name} {which} readings ({len(y)}, {int(y.sum())} gold): AUC head "
            f"{roc_auc_score(y, head):.3f}, teacher {roc_auc_score(y, t):.3f}, probe "
            f"{roc_auc_score(y, p):.3f} (probe - head "
            f"{roc_auc_score(y, p) - roc_auc_score(y, head):+.3f}"
            f" [{lo:+.3f}, {hi:+.3f}])"
        )
        if which == "second":
            gate = head >= np.log(0.3 / 0.7)
            kept_gold = float(gate[y == 1].mean())
            cut = np.quantile(p[y == 1], 1 - kept_gold)
            line += (
                f"; gate 0.3 keeps {kept_gold:.3f} of gold, passes {gate[y == 0].mean():.3f} of "
                f"distractors; probe at that gold share passes {(p[y == 0] >= cut).mean():.3f}"
            )
        print(line, flush=True)


def probe_columns(r: dict[str, Any], probe: Any) -> np.ndarray:
    """Two stacker columns per sentence: the probe's logit on the first reading, and the
    better of that and the second reading's."""
    first = probe.decision_function(np.stack([v for _, v in r["first"]]))
    out = []
    for p, n in enumerate(r["sizes"]):
        hop = first[p]
        if p in r["second"]:
            hop = max(hop, float(probe.decision_function(r["second"][p][1][None])[0]))
        out += [[first[p], hop]] * n
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def stacker_rows(sets: dict[str, list[Pool]], dev: dict[str, list[dict]], probe: Any) -> None:
    """The stacker out-of-fold on the dev pools, with and without the probe columns."""
    base = naive_means(sets, BUDGET)
    for label, with_probe in (
        ("stacker, 11 features (shipped)", False),
        ("+ 2 probe features", True),
    ):
        rows = {
            n: [
                (
                    np.hstack([r["x"], probe_columns(r, probe)]) if with_probe else r["x"],
                    r["y"],
                    r["where"],
                    r["rel"],
                )
                for r in dev[n]
            ]
            for n in sets
        }
        oof = out_of_fold(rows)
        pts = curve(sets, rows, oof, BUDGET)
        th = choose_point(pts, {n: v["answer_recall"] for n, v in base.items()})
        for t in dict.fromkeys([th, "0.06", "0.09", "0.12", "0.15"]):
            cells = " | ".join(
                f"{n}: {pts[n][t]['tokens']:.1f} tok, answer {pts[n][t]['answer_recall']:.3f}, "
                f"evidence {pts[n][t]['evidence_recall']:.3f}, distractor kept "
                f"{pts[n][t]['distractor_kept']:.3f}"
                for n in sets
            )
            mark = " (rule point)" if t == th else ""
            print(f"{label} @ {t}{mark}: {cells}", flush=True)
    print(
        "naive: "
        + " | ".join(
            f"{n}: {v['tokens']:.0f} tok, answer {v['answer_recall']:.3f}, evidence "
            f"{v['evidence_recall']:.3f}"
            for n, v in base.items()
        )
    )


def compare_heads(folders: list[Path], sets: dict[str, list[Pool]]) -> None:
    """Each tagger folder's passage-head AUC (gold passage vs the rest) on the dev pools'
    first and second readings, each folder with its own hop: a retrained or refitted head is
    measured against the shipped one without fitting any probe."""
    from sklearn.metrics import roc_auc_score

    for folder in folders:
        tagger = OnnxTagger(folder)
        cells = []
        for n, qs in sets.items():
            got: dict[str, tuple[list[int], list[float]]] = {"first": ([], []), "second": ([], [])}
            for q in qs:
                passages = [(t, s) for t, s, _ in q["pool"]]
                r = readings(tagger, q["question"], passages)
                gold = [int(any(g)) for _, _, g in q["pool"]]
                for i, t in enumerate(r.first):
                    got["first"][0].append(gold[i])
                    got["first"][1].append(t.relevance)
                for i, t2 in enumerate(r.second):
                    if t2 is not None:
                        got["second"][0].append(gold[i])
                        got["second"][1].append(t2.relevance)
            for which, (y, s) in got.items():
                if len(set(y)) > 1:
                    cells.append(f"{n} {which} {roc_auc_score(y, s):.3f} ({len(y)})")
        print(f"{folder}: head AUC " + ", ".join(cells), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--squad-train", type=int, default=300, help="SQuAD train questions")
    ap.add_argument("--cache", type=Path, default=None, help="readings pickle (reused)")
    ap.add_argument("--model", type=Path, default=None, help="tagger folder (default: shipped)")
    ap.add_argument(
        "--compare-heads",
        type=Path,
        nargs="+",
        default=None,
        metavar="DIR",
        help="only print these tagger folders' head AUCs on the dev pools",
    )
    args = ap.parse_args()
    data = find_data_dir()
    sets = dev_pools(data, 400)
    if args.compare_heads:
        compare_heads(args.compare_heads, {"hotpot": sets["hotpot"], "squad": sets["squad"][:100]})
        return
    if args.cache and args.cache.is_file():
        train, dev = pickle.loads(args.cache.read_bytes())
    else:
        tagger = OnnxTagger(args.model, pooled=True)
        t0 = time.perf_counter()
        train = [
            read_pool(tagger, q) for qs in train_pools(data, args.squad_train).values() for q in qs
        ]
        dev = {n: [read_pool(tagger, q) for q in qs] for n, qs in sets.items()}
        print(
            f"read {len(train)} train and {sum(map(len, dev.values()))} dev pools in "
            f"{time.perf_counter() - t0:.0f}s",
            flush=True,
        )
        if args.cache:
            args.cache.write_bytes(pickle.dumps((train, dev)))
    probe = fit_probe(train, ("first", "second"))
    hop_probe = fit_probe(train, ("second",))
    for n in sets:
        auc_table(f"{n} dev", dev[n], sets[n], probe)
    from sklearn.metrics import roc_auc_score

    x, y, _ = vectors(dev["hotpot"], "second")
    print(
        f"hotpot dev second readings: a probe fitted on second readings only: AUC "
        f"{roc_auc_score(y, hop_probe.decision_function(x)):.3f}"
    )
    stacker_rows(sets, dev, probe)


if __name__ == "__main__":
    main()
