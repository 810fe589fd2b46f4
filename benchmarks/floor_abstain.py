"""What the floor abstains on in an eval run: answerable questions abstained (a cost) and
unanswerable ones (no answers in the set) abstained (the point of it), from the ``confidence``
of a ``ragsieve eval --no-llm`` run's rows.

    .venv/bin/python -m benchmarks floor_abstain --dataset techdocs --rows RUN/per_question.jsonl
"""

from __future__ import annotations

from pathlib import Path

from common import dataset_parser, read_rows

from ragsieve.evaluate.datasets import load_dataset
from ragsieve.methods.answer_line import FLOOR


def main() -> None:
    ap = dataset_parser(__doc__)
    ap.add_argument("--rows", type=Path, required=True)
    ap.add_argument("--floor", type=float, default=FLOOR)
    args = ap.parse_args()
    qs = {q.id: q for q in load_dataset(args.dataset, limit=args.limit).questions}
    rows = read_rows(args.rows)
    print(f"{args.dataset}: floor {args.floor}")
    print("| method | answerable | abstained | unanswerable | abstained | abstention precision |")
    print("|---|---:|---:|---:|---:|---:|")
    for m in dict.fromkeys(r["method"] for r in rows):
        got = [r for r in rows if r["method"] == m and r["id"] in qs]
        ans = [r for r in got if qs[r["id"]].answers]
        un = [r for r in got if not qs[r["id"]].answers]
        a = sum((r.get("confidence") or 0.0) < args.floor for r in ans)
        u = sum((r.get("confidence") or 0.0) < args.floor for r in un)
        prec = u / (a + u) if a + u else 0.0
        print(
            f"| {m} | {len(ans)} | {a} ({a / max(1, len(ans)):.1%}) | {len(un)} | "
            f"{u} ({u / max(1, len(un)):.1%}) | {prec:.2f} |"
        )


if __name__ == "__main__":
    main()
