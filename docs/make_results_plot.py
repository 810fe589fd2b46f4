"""Regenerate docs/results-quality-tokens.png: answer recall against context tokens.

Left: every method on HotpotQA AMOR (test, 100 questions, budget 450, no LLM), the points of
BENCHMARKS.md's first table (copied below with the stop that measured each). Right: the
tagger's threshold curve on the AMOR and SQuAD dev pools (test, budget 450), read from
``benchmarks/results/tagger_sweep_test_stack.json`` (``python -m benchmarks tagger_sweep
--split test --decision stack``). Nothing is measured here; it only draws.

    .venv/bin/python docs/make_results_plot.py [--out PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

REPO = Path(__file__).resolve().parents[1]
SWEEP = REPO / "benchmarks" / "results" / "tagger_sweep_test_stack.json"
OUT = REPO / "docs" / "results-quality-tokens.png"

#: (method, context tokens, answer recall, stop): BENCHMARKS.md, "Every method, no LLM".
AMOR = [
    ("naive", 427, 0.766, "stop 38"),
    ("tagger (default)", 160, 0.809, "stop 38"),
    ("full", 158, 0.809, "stop 38"),
    ("tagger[stack=false]", 177, 0.745, "stop 38"),
    ("tagger[hops=1]", 131, 0.670, "stop 38"),
    ("naive[reranker=ensemble]", 427, 0.798, "stop 38"),
    ("pareto", 446, 0.851, "stop 29"),
    ("carrot", 192, 0.638, "stop 39"),
    ("saki", 273, 0.585, "sentence issue"),
    ("full[scorer=ensemble]", 172, 0.617, "issue 18"),
]
DEFAULT_POINT = "0.09/floor"
OPEN_POINT = "0.0125/floor"


def sweep_curve(points: dict[str, dict]) -> tuple[list[float], list[float]]:
    """The threshold curve's (tokens, answer recall), ordered by tokens."""
    pairs = sorted((p["tokens"], p["answer_recall"]) for p in points.values())
    return [t for t, _ in pairs], [a for _, a in pairs]


def draw(out: Path) -> None:
    """Draw both panels into ``out``."""
    sweep = json.loads(SWEEP.read_text("utf-8"))["sets"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), sharey=True)

    for name, tokens, recall, stop in AMOR:
        default = name.startswith("tagger (default)")
        left.scatter(tokens, recall, s=70 if default else 35, c="C3" if default else "C0")
        dx, ha = (-6, "right") if name in ("full", "naive") else (6, "left")
        left.annotate(
            f"{name} ({stop})",
            (tokens, recall),
            xytext=(dx, -3 if name == "full" else 4),
            textcoords="offset points",
            ha=ha,
            fontsize=8,
        )
    left.set_title("Every method: AMOR (test, 100 q), budget 450, no LLM", fontsize=10)
    left.set_xlabel("context tokens (mean)")
    left.set_ylabel("answer recall")
    left.set_xlim(60, 540)

    for key, label, colour in (("hotpot", "AMOR pools", "C3"), ("squad", "SQuAD dev pools", "C2")):
        data = sweep[key]
        xs, ys = sweep_curve(data["points"])
        right.plot(xs, ys, "-o", ms=3, c=colour, label=f"tagger, {label} ({data['questions']} q)")
        naive = data["naive"]
        right.scatter(naive["tokens"], naive["answer_recall"], marker="s", c=colour)
        right.annotate(
            "naive",
            (naive["tokens"], naive["answer_recall"]),
            xytext=(-6, 4),
            textcoords="offset points",
            ha="right",
            fontsize=8,
        )
        for point, text in ((DEFAULT_POINT, "default 0.09"), (OPEN_POINT, "open 0.0125")):
            p = data["points"][point]
            right.scatter(p["tokens"], p["answer_recall"], s=60, facecolors="none", edgecolors="k")
            right.annotate(
                text,
                (p["tokens"], p["answer_recall"]),
                xytext=(6, -10),
                textcoords="offset points",
                fontsize=8,
            )
    right.set_title("The tagger's thresholds (test pools, budget 450; stop 38)", fontsize=10)
    right.set_xlabel("context tokens (mean)")
    right.legend(fontsize=8, loc="lower right")

    for ax in (left, right):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    draw(ap.parse_args().out)


if __name__ == "__main__":
    main()
