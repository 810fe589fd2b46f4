"""The tagger's budget point against issue 44's acceptance (f), on dev, through the product.

    .venv/bin/python -m benchmarks tagger_dev_file --out DEV.jsonl
    .venv/bin/python -m benchmarks tagger_point --dataset DEV.jsonl [--model DIR] [--write]

``tag.fit.stack`` chooses the stacker's point against its own naive (the dev pools' passages at the
budget). This runs ``ragsieve eval`` itself (the evaluation index, hybrid candidates, budget
450, no LLM) on the dev file (95 HotpotQA rows, 200 SQuAD rows) for ``threshold`` 0.16, 0.15,
..., 0.04 and picks the tightest point at which, on the HotpotQA rows, evidence recall is at
least ``EVIDENCE`` x naive's and context tokens at most ``TOKENS`` x naive's, and on the SQuAD
rows context tokens at most ``TOKENS`` x naive's (docs/tagger.md, "The operating point against
acceptance (f)"). ``--write`` stores it as ``stack.json``'s ``threshold``, the fitted one kept
as ``fit_threshold``. Nothing on a test split is read.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np

from ragsieve.evaluate.datasets import load_dataset
from ragsieve.evaluate.runner import EvalConfig, run_eval
from ragsieve.methods import parse_methods
from ragsieve.tag.model import shipped_model_dir
from ragsieve.tag.stack import STACK_FILE, load_stacker

#: Acceptance (f) of issue 44: evidence recall >= 0.97x naive's at <= 0.35x its tokens.
EVIDENCE, TOKENS = 0.97, 0.35
GRID = [round(0.16 - 0.01 * i, 2) for i in range(13)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, required=True, help="tagger_dev_file's output")
    ap.add_argument("--model", type=Path, default=None, help="a tagger folder (default: shipped)")
    ap.add_argument("--budget", type=int, default=450)
    ap.add_argument("--write", action="store_true", help="store the point in stack.json")
    args = ap.parse_args()
    model = args.model or shipped_model_dir()
    stacker = load_stacker(model)
    if args.write and stacker is None:  # before the ten-minute run, not after it
        raise SystemExit(
            f"{model} has no {STACK_FILE} to write the point to: "
            "run python -m ragsieve.tag.fit.stack first"
        )
    opt = f",model={model}" if args.model else ""
    labels = {t: f"tagger[threshold={t}{opt}]" for t in GRID}
    dataset = load_dataset(str(args.dataset), limit=None)
    cfg = EvalConfig(
        methods=parse_methods(",".join(["naive", *labels.values()])),
        budget=args.budget,
        no_llm=True,
    )
    rows = run_eval(dataset, cfg)["per_question"]

    def mean(method: str, part: str, metric: str) -> float:
        got = [r[metric] for r in rows if r["method"] == method and r["id"].startswith(part)]
        return float(np.mean([x for x in got if x is not None]))

    chosen = None
    print("| threshold | HotpotQA tokens (x naive) | evidence (x naive) | SQuAD tokens (x naive) |")
    print("|---|---|---|---|")
    for t, label in labels.items():
        x = {
            p: mean(label, p, "context_tokens") / mean("naive", p, "context_tokens")
            for p in ("hotpot", "squad")
        }
        ev = mean(label, "hotpot", "evidence_recall") / mean("naive", "hotpot", "evidence_recall")
        ok = ev >= EVIDENCE and x["hotpot"] <= TOKENS and x["squad"] <= TOKENS
        chosen = t if ok and chosen is None else chosen
        print(
            f"| {t} | {mean(label, 'hotpot', 'context_tokens'):.0f} ({x['hotpot']:.2f}x) "
            f"| {mean(label, 'hotpot', 'evidence_recall'):.3f} ({ev:.3f}x) "
            f"| {mean(label, 'squad', 'context_tokens'):.0f} ({x['squad']:.2f}x)"
            + (" **chosen** |" if chosen == t else " |")
        )
    print(f"chosen: {chosen}" if chosen is not None else "none passes: the fitted point stays")
    if args.write and stacker is not None and chosen is not None:
        # Stacker.save writes atomically; the file's other keys (tag.fit.stack's "dev" curves, an
        # earlier fit_threshold) ride along as its extra.
        data = json.loads((Path(model) / STACK_FILE).read_text("utf-8"))
        extra = {k: v for k, v in data.items() if k not in stacker.to_dict()}
        extra.setdefault("fit_threshold", stacker.threshold)
        extra["threshold_rule"] = "benchmarks/tagger_point.py: acceptance (f) on dev"
        path = dataclasses.replace(stacker, threshold=chosen).save(Path(model), extra)
        print(f"wrote threshold {chosen} to {path}")


if __name__ == "__main__":
    main()
