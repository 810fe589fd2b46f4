"""CARROT benchmarks (docs/carrot.md, BENCHMARKS.md "CARROT").

``upper``: on real queries, restricted to the same top-5 reranked candidates, MCTS at the paper's
defaults (10 iterations, c = 2.4, lambda = 0.1, budget 1024, 256-token chunks) against the
exhaustive optimum over all 325 orders ("CARROT upper"): the share of queries where MCTS reaches
>= 98% of the optimum's benefit, the distribution of the ratio, and the reranker calls / texts
scored of each. Both searches of one query share the models' output caches (keyed by the exact
model input), so the models run once per distinct input; the calls and texts are counted per
search.

    .venv/bin/python benchmarks/bench_carrot.py upper --per-dataset 60 --out benchmarks/results

The ablation (Table VI) goes through ``ragsieve eval`` (see BENCHMARKS.md for the command).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.evaluate.datasets import load_dataset
from ragsieve.evaluate.runner import EvalConfig, MethodSpec, _question_filter, eval_index
from ragsieve.rerank import get_reranker
from ragsieve.retrieve import get_retriever
from ragsieve.select.benefit import BenefitScorer
from ragsieve.select.mcts import MCTSConfig, mcts_search
from ragsieve.select.search import exhaustive_search


def run_upper(datasets: list[str], per_dataset: int, scorers: list[str]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    cfg_mcts = MCTSConfig()  # the paper's defaults
    for name in datasets:
        ds = load_dataset(name, limit=per_dataset)
        ecfg = EvalConfig(methods=[MethodSpec("naive", "naive")], chunk_tokens=256)
        index, _ = eval_index(ds, ecfg)
        retriever = get_retriever("dense", index)
        questions = list(ds.questions)
        hits = retriever.retrieve(
            [q.question for q in questions], 10, [_question_filter(ds, q) for q in questions]
        )
        for q, cands in zip(questions, hits, strict=True):
            for scorer_name in scorers:
                rr = get_reranker(scorer_name, index.config.embedder)
                base = BenefitScorer(rr, q.question, [s.chunk.text for s in cands])
                singles = base.score([(i,) for i in range(len(cands))])
                order = sorted(range(len(cands)), key=lambda i: -float(singles[i]))[:5]
                pool = [cands[i] for i in order]
                costs = [s.chunk.n_tokens for s in pool]
                s_up = base.reordered(order).fresh()
                t0 = time.perf_counter()
                best, w_opt, st = exhaustive_search(s_up, costs, cfg_mcts.budget)
                t_up = time.perf_counter() - t0
                s_m = s_up.fresh()
                t0 = time.perf_counter()
                res = mcts_search(s_m, costs, cfg_mcts)
                t_m = time.perf_counter() - t0
                ratio = res.benefit / w_opt if w_opt > 0 else 1.0
                rows.append(
                    {
                        "dataset": name,
                        "id": q.id,
                        "scorer": scorer_name,
                        "optimum": w_opt,
                        "optimum_order": list(best),
                        "mcts": res.benefit,
                        "mcts_order": list(res.best),
                        "ratio": ratio,
                        "exact": list(res.best) == list(best),
                        "upper_calls": st["reranker_calls"],
                        "upper_texts": st["texts_scored"],
                        "mcts_calls": res.calls,
                        "mcts_texts": res.texts_scored,
                        "mcts_nodes": len(res.nodes) - 1,
                        "upper_s": t_up,
                        "mcts_s": t_m,
                    }
                )
    return {"rows": rows, "summary": summarize(rows, scorers)}


def summarize(rows: list[dict[str, Any]], scorers: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for scorer in scorers:
        rs = [r for r in rows if r["scorer"] == scorer]
        if not rs:
            continue
        ratios = np.asarray([r["ratio"] for r in rs])
        out[scorer] = {
            "queries": len(rs),
            "share_ge_98": float(np.mean(ratios >= 0.98)),
            "share_optimal_benefit": float(np.mean(ratios >= 1.0 - 1e-9)),
            "share_same_order": float(np.mean([r["exact"] for r in rs])),
            "ratio_quantiles": {
                str(p): float(np.quantile(ratios, p)) for p in (0.0, 0.05, 0.1, 0.25, 0.5)
            },
            "ratio_mean": float(ratios.mean()),
            "histogram": {
                "<0.90": int(np.sum(ratios < 0.90)),
                "0.90-0.95": int(np.sum((ratios >= 0.90) & (ratios < 0.95))),
                "0.95-0.98": int(np.sum((ratios >= 0.95) & (ratios < 0.98))),
                "0.98-1.00": int(np.sum((ratios >= 0.98) & (ratios < 1.0 - 1e-9))),
                "=1.00": int(np.sum(ratios >= 1.0 - 1e-9)),
            },
            "upper_calls_mean": float(np.mean([r["upper_calls"] for r in rs])),
            "upper_texts_mean": float(np.mean([r["upper_texts"] for r in rs])),
            "mcts_calls_mean": float(np.mean([r["mcts_calls"] for r in rs])),
            "mcts_texts_mean": float(np.mean([r["mcts_texts"] for r in rs])),
            "by_dataset": {
                d: float(np.mean([r["ratio"] >= 0.98 for r in rs if r["dataset"] == d]))
                for d in sorted({r["dataset"] for r in rs})
            },
        }
    return out


def markdown(result: dict[str, Any], command: str) -> str:
    lines = [
        "# CARROT: MCTS (paper defaults) vs the exhaustive optimum over the top 5",
        "",
        f"Command: `{command}`",
        "",
        "| scorer | queries | MCTS >= 98% of optimum | = optimum | same order | ratio p5 | "
        "ratio p10 | ratio mean | upper calls / texts | MCTS calls / texts |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for scorer, s in result["summary"].items():
        q = s["ratio_quantiles"]
        lines.append(
            f"| {scorer} | {s['queries']} | {s['share_ge_98']:.1%} | "
            f"{s['share_optimal_benefit']:.1%} | {s['share_same_order']:.1%} | {q['0.05']:.3f} | "
            f"{q['0.1']:.3f} | {s['ratio_mean']:.4f} | {s['upper_calls_mean']:.0f} / "
            f"{s['upper_texts_mean']:.0f} | {s['mcts_calls_mean']:.1f} / "
            f"{s['mcts_texts_mean']:.1f} |"
        )
    lines += ["", "Distribution of MCTS benefit / optimum benefit (queries per bin):", ""]
    bins = ["<0.90", "0.90-0.95", "0.95-0.98", "0.98-1.00", "=1.00"]
    lines.append("| scorer | " + " | ".join(bins) + " | >= 98% by dataset |")
    lines.append("|---|" + "---|" * (len(bins) + 1))
    for scorer, s in result["summary"].items():
        by = ", ".join(f"{d} {v:.1%}" for d, v in s["by_dataset"].items())
        lines.append(
            f"| {scorer} | " + " | ".join(str(s["histogram"][b]) for b in bins) + f" | {by} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("upper", help="MCTS vs exhaustive optimum on the top 5")
    up.add_argument("--datasets", default="qasper,hotpotqa")
    up.add_argument("--per-dataset", type=int, default=60)
    up.add_argument("--scorers", default="ensemble,bm25")
    up.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = ap.parse_args()
    if args.cmd == "upper":
        t0 = time.perf_counter()
        result = run_upper(args.datasets.split(","), args.per_dataset, args.scorers.split(","))
        result["seconds"] = time.perf_counter() - t0
        command = (
            f".venv/bin/python benchmarks/bench_carrot.py upper --datasets {args.datasets} "
            f"--per-dataset {args.per_dataset} --scorers {args.scorers}"
        )
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "carrot_upper.json").write_text(
            json.dumps(result, indent=1, default=float), encoding="utf-8"
        )
        md = markdown(result, command)
        (args.out / "carrot_upper.md").write_text(md, encoding="utf-8")
        print(md)
        print(f"{result['seconds']:.0f}s")


if __name__ == "__main__":
    main()
