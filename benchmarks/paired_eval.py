"""Paired bootstrap 95% intervals of each method minus a baseline, from the per-question
records that ``ragsieve eval --out DIR`` writes (``per_question.jsonl``).

    .venv/bin/python -m benchmarks paired_eval DIR [DIR ...] --base naive
    .venv/bin/python -m benchmarks paired_eval AFTER --before BEFORE   # a change, per method

Questions are matched by id across the folders (one baseline run can serve several), and a
metric that says nothing for a question (answer recall of a yes/no question) is left out of
that metric's pairs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import ci, interval, md_table, paired, read_rows

METRICS = ("context_tokens", "evidence_recall", "answer_recall", "evidence_precision")


def load(dirs: list[Path]) -> dict[str, dict[str, dict]]:
    rows: dict[str, dict[str, dict]] = {}
    for d in dirs:
        for r in read_rows(d):  # per_question.jsonl, or the tracked .jsonl.gz
            rows.setdefault(r["method"], {})[r["id"]] = r
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--base", default="naive")
    ap.add_argument(
        "--before",
        type=Path,
        help="pair each method with itself in this folder (a change's before), not with --base",
    )
    ap.add_argument(
        "--metrics",
        default=",".join(METRICS),
        help="comma-separated per-question fields, e.g. f1,em,prompt_tokens for an LLM run",
    )
    args = ap.parse_args()
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    rows = load(args.dirs)
    before = load([args.before]) if args.before else None
    word = "before" if before else "base"
    head = ["method", *(f"{m} (x {word}; diff [95% CI])" for m in metrics)]
    body = (
        row(per, before[m] if before else rows[args.base], metrics, m) for m, per in rows.items()
    )
    print("\n".join(md_table(head, body)))


def row(per: dict[str, dict], base: dict[str, dict], metrics: list[str], method: str) -> list[str]:
    """One method's cells: its mean, the ratio to the baseline's, the paired difference."""
    cells = [method]
    for m in metrics:
        a, b = paired(per, base, m)
        ratio = a.mean() / b.mean() if b.mean() else float("nan")
        cells.append(f"{a.mean():.3f} ({ratio:.2f}x; {ci(*interval(a, b))})")
    return cells


if __name__ == "__main__":
    main()
