"""Paired bootstrap 95% intervals of each method minus a baseline, from the per-question
records that ``ragsieve eval --out DIR`` writes (``per_question.jsonl``).

    .venv/bin/python benchmarks/paired_eval.py DIR [DIR ...] --base naive

Questions are matched by id across the folders (one baseline run can serve several), and a
metric that says nothing for a question (answer recall of a yes/no question) is left out of
that metric's pairs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

METRICS = ("context_tokens", "evidence_recall", "answer_recall", "evidence_precision")


def load(dirs: list[Path]) -> dict[str, dict[str, dict]]:
    rows: dict[str, dict[str, dict]] = {}
    for d in dirs:
        for line in (d / "per_question.jsonl").open(encoding="utf-8"):
            r = json.loads(line)
            rows.setdefault(r["method"], {})[r["id"]] = r
    return rows


def interval(a: np.ndarray, b: np.ndarray, n: int = 10_000, seed: int = 0) -> tuple[float, ...]:
    d = a - b
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), (n, len(d)))].mean(axis=1)
    return float(d.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--base", default="naive")
    ap.add_argument(
        "--metrics",
        default=",".join(METRICS),
        help="comma-separated per-question fields, e.g. f1,em,prompt_tokens for an LLM run",
    )
    args = ap.parse_args()
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    rows = load(args.dirs)
    base = rows[args.base]
    print("| method | " + " | ".join(f"{m} (x base; diff [95% CI])" for m in metrics) + " |")
    print("|---|" + "---|" * len(metrics))
    for method, per in rows.items():
        cells = []
        for m in metrics:
            ids = [
                i
                for i in per
                if i in base and per[i].get(m) is not None and base[i].get(m) is not None
            ]
            a = np.array([per[i][m] for i in ids], dtype=float)
            b = np.array([base[i][m] for i in ids], dtype=float)
            mean, lo, hi = interval(a, b)
            ratio = a.mean() / b.mean() if b.mean() else float("nan")
            cells.append(f"{a.mean():.3f} ({ratio:.2f}x; {mean:+.3f} [{lo:+.3f}, {hi:+.3f}])")
        print(f"| {method} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
