"""Choose the answer floor on dev rows of ``floor_study``: for each confidence form, the
highest point at which at most ``--lose`` of the answerable readings abstain, and what it
abstains on the unanswerable ones (gold removed, foreign), with the span F1 it costs.

    .venv/bin/python -m benchmarks floor_point ROWS.jsonl [--lose 0.03]

ROWS may be gzipped, as the stored record is (``results/answer_floor/dev_rows.jsonl.gz``).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import read_rows

from ragsieve.methods.answer_line import overlap as share


def overlap(row: dict[str, Any]) -> float:
    """The product's overlap (:func:`ragsieve.methods.answer_line.overlap`) on the kept text."""
    return share(row["question"], row["kept"])


def geo(*xs: float) -> float:
    return math.prod(max(x, 0.0) for x in xs) ** (1 / len(xs))


FORMS: dict[str, Callable[[dict[str, Any]], float]] = {
    "span": lambda r: r["span_score"] or 0.0,
    "keep": lambda r: r["max_prob"],
    "overlap": overlap,
    "geo(span,keep,overlap)": lambda r: geo(r["span_score"] or 0.0, r["max_prob"], overlap(r)),
    "geo(keep,overlap)": lambda r: geo(r["max_prob"], overlap(r)),
    "geo(span,keep)": lambda r: geo(r["span_score"] or 0.0, r["max_prob"]),
}


def readings(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The rows by kind: every answerable reading, and the gold-removed and foreign readings
    whose pool holds no answer string (only those are unanswerable)."""
    return {
        "answerable": [r for r in rows if r["kind"] == "answerable"],
        **{
            k: [r for r in rows if r["kind"] == k and not r["answer_in_pool"]]
            for k in ("gold_removed", "foreign")
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", type=Path)
    ap.add_argument("--lose", type=float, default=0.03)
    args = ap.parse_args()
    kinds = readings(read_rows(args.rows))
    ans = kinds.pop("answerable")
    un = kinds
    print(
        f"{len(ans)} answerable, "
        + ", ".join(f"{len(v)} {k} (answer absent)" for k, v in un.items())
        + f"; at most {args.lose:.0%} of answerable abstain"
    )
    print("| form | point | answerable abstained | span F1 kept | gold removed | foreign |")
    print("|---|---:|---:|---:|---:|---:|")
    f1_all = sum(r["span_f1"] for r in ans) / len(ans)
    for name, form in FORMS.items():
        scores = sorted(form(r) for r in ans)
        point = scores[int(args.lose * len(scores))]  # the lowest `lose` share falls under it
        below = [r for r in ans if form(r) < point]
        f1_kept = sum(r["span_f1"] for r in ans if form(r) >= point) / len(ans)
        rates = {k: sum(form(r) < point for r in v) / len(v) for k, v in un.items() if v}
        print(
            f"| {name} | {point:.3f} | {len(below) / len(ans):.3f} | {f1_kept:.3f} of "
            f"{f1_all:.3f} | {rates.get('gold_removed', 0):.3f} | {rates.get('foreign', 0):.3f} |"
        )


if __name__ == "__main__":
    main()
