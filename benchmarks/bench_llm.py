"""Answers with the strongest local LLM, counting every call (issue "With the LLM on, `full`
must cost fewer tokens than naive").

    .venv/bin/python -m benchmarks bench_llm run --dataset hotpotqa-sent \
        --methods naive,carrot,full --limit 100
    .venv/bin/python -m benchmarks bench_llm run --dataset squad --methods naive,carrot,full
    .venv/bin/python -m benchmarks bench_llm run --dataset hotpotqa-sent --limit 30 \
        --methods "full[feedback=true]"
    .venv/bin/python -m benchmarks bench_llm run --dataset hotpotqa-sent --methods full \
        --total-x-naive 0.5   # full under a whole-question budget of half naive's tokens
    .venv/bin/python -m benchmarks bench_llm report

Each (dataset, method) run is one ``ragsieve eval`` pass (``run_eval``, the numbers the CLI
prints) with ``--llm qwen-0.5b`` at budget 450, saved to
``benchmarks/results/llm/<dataset>--<spec>.json.gz`` with its per-question rows (gzipped, as
every per-question record is); an existing file
is reused, so a stopped run resumes at the next method. ``report`` adds paired bootstrap 95%
intervals (2,000 resamples over questions, seed 0) on F1 and on F1 minus naive's, and SAGE's
cost efficiency (Eq. 2: F1 / cost, cost from Eq. 1 on the prompt and completion tokens of
every call), and writes ``benchmarks/results/llm_answers.md``. A run with ``--limit`` (the
feedback rows, which cost several calls per question) gets its own table against the full
runs restricted to the same questions.

Questions: HotpotQA AMOR's 100 (no training file holds them) and SQuAD dev's first 20
questions of each of articles 0-4 (the tagger trained on articles 24-47 only; nothing else
here trained on SQuAD). Nothing was tuned on them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import RESULTS, interval, questions, read_json, write_text

RUNS = RESULTS / "llm"
DATASETS = ("hotpotqa-sent", "squad")
BOOTSTRAP = 2000


def run_path(dataset: str, spec: str, limit: int | None, total: int | None = None) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.=,+-]", "_", spec) + (f"+total{total}" if total else "")
    return RUNS / f"{dataset}-{limit or 'all'}--{safe}.json.gz"


def half_naive(dataset: str, limit: int | None, fraction: float) -> int:
    """``fraction`` x naive's mean prompt tokens on the same questions (its saved run): the
    whole-question budget that puts a method at that ratio of naive's tokens."""
    naive = read_json(run_path(dataset, "naive", limit))
    return round(fraction * naive["methods"]["naive"]["prompt_tokens"])


def run(
    dataset: str,
    specs: list[str],
    limit: int | None,
    llm_spec: str,
    budget: int,
    total_x_naive: float | None = None,
) -> None:
    from ragsieve.evaluate.runner import EvalConfig, markdown_table, run_eval
    from ragsieve.llm import get_llm
    from ragsieve.methods import parse_methods

    ds = questions(dataset, limit)
    total = half_naive(dataset, limit, total_x_naive) if total_x_naive else None
    llm = None
    RUNS.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        path = run_path(dataset, spec, limit, total)
        if path.exists():
            print(f"{path.name}: done before", file=sys.stderr)
            continue
        llm = llm or get_llm(llm_spec)
        cfg = EvalConfig(
            methods=parse_methods(spec),
            budget=budget,
            total_budget=total,
            llm=llm_spec,
            max_tokens=64,
        )
        t0 = time.perf_counter()
        res = run_eval(ds, cfg, llm=llm)
        if total:  # the row's name says the whole-question budget it ran under
            res["methods"] = {f"{spec}, --total-budget {total}": res["methods"][spec]}
        res["wall_seconds"] = time.perf_counter() - t0
        res["command"] = " ".join(sys.argv)
        print(markdown_table(res), file=sys.stderr, flush=True)
        write_text(path, json.dumps(res, indent=1, default=float))


def paired_bootstrap(a: np.ndarray, b: np.ndarray | None) -> tuple[float, float]:
    """95% interval of mean(a) (or of mean(a - b), paired): 2,000 resamples of the questions."""
    return interval(a, b, n=BOOTSTRAP)[1:]


def restrict(res: dict[str, Any], ids: set[str]) -> dict[str, Any]:
    """``res`` with only the questions in ``ids`` (a paired comparison on a subset)."""
    return {**res, "per_question": [r for r in res["per_question"] if r["id"] in ids]}


def summarise(res: dict[str, Any], naive: dict[str, Any] | None) -> dict[str, Any]:
    """One method's row: tokens of every call, F1 with intervals, cost efficiency."""
    from ragsieve.llm.cost import cost_efficiency

    rows = sorted(res["per_question"], key=lambda r: r["id"])
    f1 = np.array([r["f1"] for r in rows])

    def mean(key: str, default: float | None = None) -> float:
        """Over the questions where ``key`` is defined (answer recall is not for yes/no)."""
        values = [r.get(key, default) for r in rows]
        return float(np.mean([v for v in values if v is not None]))

    out: dict[str, Any] = {
        "n": len(rows),
        "context_tokens": mean("context_tokens"),
        "prompt_tokens": mean("prompt_tokens"),
        "max_prompt_tokens": float(max(r["prompt_tokens"] for r in rows)),
        "completion_tokens": mean("completion_tokens"),
        "calls": mean("llm_calls", 1),
        "answer_recall": mean("answer_recall"),
        "em": mean("em"),
        "f1": float(f1.mean()),
        "f1_ci": paired_bootstrap(f1, None),
        "cost": mean("cost"),
        "seconds": float(np.mean([sum(r["timings"].values()) for r in rows])),
    }
    out["cost_efficiency"] = cost_efficiency(out["f1"], out["cost"])
    if naive is not None:
        base = {r["id"]: r["f1"] for r in naive["per_question"]}
        nf1 = np.array([base[r["id"]] for r in rows])
        out["f1_diff"] = float((f1 - nf1).mean())
        out["f1_diff_ci"] = paired_bootstrap(f1, nf1)
    return out


def table(title: str, runs: dict[str, dict[str, Any]]) -> tuple[list[str], dict[str, Any]]:
    """The markdown table of ``runs`` (spec -> run), naive first, ratios against naive."""
    naive = runs.get("naive")
    order = sorted(runs, key=lambda s: (s != "naive", s != "carrot", s))
    rows = {s: summarise(runs[s], naive if s != "naive" else None) for s in order}
    n = next(iter(rows.values()))["n"]
    lines = [
        f"### {title} ({n} questions)",
        "",
        "| method | context tokens | prompt tokens, all calls | x naive | completion tokens "
        "| LLM calls | answer recall | EM | F1 [95% CI] | F1 - naive [95% CI] "
        "| cost efficiency (Eq. 2) | s/question |",
        "|" + "---|" * 12,
    ]
    base = rows.get("naive")
    for s, m in rows.items():
        ratio = f"{m['prompt_tokens'] / base['prompt_tokens']:.2f}" if base else "-"
        lo, hi = m["f1_ci"]
        diff = (
            f"{m['f1_diff']:+.3f} [{m['f1_diff_ci'][0]:+.3f}, {m['f1_diff_ci'][1]:+.3f}]"
            if "f1_diff" in m
            else "-"
        )
        ce = "-" if m["cost_efficiency"] is None else f"{m['cost_efficiency']:.1f}"
        lines.append(
            f"| {s} | {m['context_tokens']:.0f} | {m['prompt_tokens']:.0f} | {ratio} "
            f"| {m['completion_tokens']:.1f} | {m['calls']:.2f} | {m['answer_recall']:.3f} "
            f"| {m['em']:.3f} | {m['f1']:.3f} [{lo:.3f}, {hi:.3f}] | {diff} | {ce} "
            f"| {m['seconds']:.1f} |"
        )
    return [*lines, ""], rows


def report() -> None:
    """Every saved run: one table per dataset over all its questions, and one per smaller
    run (the feedback rows) against the full runs restricted to the same questions."""
    lines = [
        "LLM `qwen-0.5b` (Qwen2.5 0.5B Q4_K_M, greedy), budget 450, answers capped at 64 "
        "tokens; prompt and completion tokens are per question, every LLM call summed. "
        "Cost: SAGE Eq. 1 at $10 / $30 per 1M tokens; cost efficiency: Eq. 2, F1 / cost. "
        "Intervals: paired bootstrap, 95%, 2,000 resamples over questions.",
        "",
    ]
    out: dict[str, Any] = {}
    for dataset in DATASETS:
        groups: dict[str, dict[str, dict[str, Any]]] = {}
        for p in sorted(RUNS.glob(f"{dataset}-*--*.json.gz")):
            res = read_json(p)
            spec = next(iter(res["methods"]))  # the spec as given (the file name is escaped)
            groups.setdefault(p.name.split("--", 1)[0].rsplit("-", 1)[1], {})[spec] = res
        full = groups.pop("all", {})
        if full:
            part, out[dataset] = table(dataset, full)
            lines += part
        for limit, runs in sorted(groups.items()):
            ids = {r["id"] for r in next(iter(runs.values()))["per_question"]}
            paired = {s: restrict(r, ids) for s, r in full.items()} | runs
            part, out[f"{dataset}-{limit}"] = table(f"{dataset}, first {limit}", paired)
            lines += part
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "llm_answers.json").write_text(json.dumps(out, indent=2, default=float))
    (RESULTS / "llm_answers.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--dataset", choices=DATASETS, required=True)
    r.add_argument("--methods", default="naive,carrot,full")
    r.add_argument("--limit", type=int, default=None)
    r.add_argument("--llm", default="qwen-0.5b")
    r.add_argument("--budget", type=int, default=450)
    r.add_argument("--total-x-naive", type=float, help="whole-question budget, x naive's tokens")
    sub.add_parser("report")
    a = ap.parse_args()
    if a.cmd == "run":
        from ragsieve.methods import parse_methods

        specs = [s.label for s in parse_methods(a.methods)]
        run(a.dataset, specs, a.limit, a.llm, a.budget, a.total_x_naive)
    else:
        report()


if __name__ == "__main__":
    main()
