"""Dev only: two taggers' stacked curves at matched token counts, from their ``stack.json``
(or a record's ``stack.json.gz``).

    .venv/bin/python -m benchmarks stack_curves BASE/stack.json OTHER/stack.json

``tag.fit.stack`` stores each stacker's 5-fold out-of-fold curve on the dev pools (budget 450).
For every BASE threshold from 0.05 to 0.15 this takes OTHER's threshold with the most mean
tokens (HotpotQA and SQuAD dev averaged) not above BASE's, and prints OTHER minus BASE for
answer and evidence recall on each dev set, and HotpotQA's distractor share. The last line is
the dominance test of issue 31, stop 41: OTHER is never more than 0.01 below on any of the
four, and its HotpotQA evidence is +0.02 or more on average. Comparing at matched tokens keeps
a curve's quality apart from where each stacker's rule lands on it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from common import read_json

SETS = ("hotpot", "squad")
METRICS = ("answer_recall", "evidence_recall")
POINTS = tuple(f"{x / 100:.2f}" for x in range(5, 16))


def mean_tokens(cv: dict[str, Any], t: str) -> float:
    return sum(cv[n][t]["tokens"] for n in SETS) / len(SETS)


def compare(base: dict[str, Any], other: dict[str, Any]) -> tuple[list[str], bool, float]:
    """Printed rows, whether OTHER dominates, and its mean HotpotQA evidence difference."""
    rows, ok, diffs = [], True, []
    for t in POINTS:
        tokens = mean_tokens(base, t)
        fits = [k for k in other["hotpot"] if mean_tokens(other, k) <= tokens]
        if not fits:
            ok = False
            rows.append(f"{t}: {tokens:.1f} tokens; OTHER has no point this small")
            continue
        k = max(fits, key=lambda x: mean_tokens(other, x))
        cells = []
        for n in SETS:
            for m in METRICS:
                d = other[n][k][m] - base[n][t][m]
                ok = ok and d >= -0.01
                cells.append(f"{n} {m.split('_')[0]} {d:+.3f}")
        diffs.append(other["hotpot"][k]["evidence_recall"] - base["hotpot"][t]["evidence_recall"])
        dis = (base["hotpot"][t]["distractor_kept"], other["hotpot"][k]["distractor_kept"])
        rows.append(
            f"{t} ({tokens:.1f} tokens) vs {k} ({mean_tokens(other, k):.1f}): "
            + ", ".join(cells)
            + f"; hotpot distractor kept {dis[0]:.3f} -> {dis[1]:.3f}"
        )
    mean_diff = sum(diffs) / len(diffs) if diffs else 0.0
    return rows, ok and mean_diff >= 0.02, mean_diff


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("other", type=Path)
    args = ap.parse_args()
    base, other = (read_json(p)["dev"]["cv"] for p in (args.base, args.other))
    rows, dominates, mean_diff = compare(base, other)
    print("\n".join(rows))
    print(f"dominates: {dominates} (mean HotpotQA evidence difference {mean_diff:+.4f})")


if __name__ == "__main__":
    main()
