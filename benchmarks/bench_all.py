"""Regenerate the published benchmark: every method on every built-in dataset, plus the
component benchmarks (``make bench``; ``make bench-quick`` for a smaller pass).

    .venv/bin/python -m benchmarks bench_all [--quick] [--llm] [--only STEP[,STEP]] [--list]

Steps run in order as subprocesses (one crash does not lose the others); each one's command,
exit code and wall time go to ``benchmarks/results/bench_all.md``. The ``methods`` step runs
``ragsieve eval`` for all methods on QASPER test, SQuAD dev, HotpotQA (IRCoT and AMOR sentence
gold) and QuALITY and then this script merges their ``results.json`` into one table per
dataset with per-stage latency, and one quality-vs-tokens plot per dataset
(``benchmarks/results/all_methods_<dataset>.png``). ``--llm`` adds the answer metrics with the
local SmolLM2 (slow: the quick pass's SQuAD step, 10 questions x 7 methods with contexts up to
2,000 tokens, took 18 minutes on 2 cores); in the full pass it also adds the ``qwen-*`` steps,
``bench_llm`` with Qwen2.5 0.5B on 100 AMOR and 100 SQuAD questions (79 minutes measured
for all its runs, evaluation indexes built fresh, load 2-4).

Run time on the 2-core machine: ``--quick`` measured at 32 minutes without ``--llm`` (all steps
exit 0; HotpotQA evaluation indexes cached); the full pass is estimated at about 4 hours without
``--llm`` from its steps' individual runs (the CARROT upper bound and the Ray index dominate).
The "peers" are the ones that run offline here: Chonkie's SemanticChunker in the segmenter
step (when ``pip install chonkie`` has been run) and, for selection, the LlamaIndex/LangChain-
style "dense top-k + cross-encoder rerank" pipeline, which is ``naive[reranker=ensemble,k=5]``
on the same embedder.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import REPO, md_table, scatter_plot

#: The published tables. ``--quick`` writes to ``bench-out/quick/results`` instead, so a small
#: pass (a smoke test of the whole chain) never overwrites them.
RESULTS = REPO / "benchmarks" / "results"
OUT = REPO / "bench-out" / "all"
PY = sys.executable
CLI = [str(Path(PY).parent / "ragsieve")]

#: Every method, with the peer "top-k + rerank" pipeline as a naive variant.
METHODS = "naive,naive[reranker=ensemble,k=5],sage[feedback=false],carrot,pareto,saki,full"
#: dataset -> (questions in the full pass, in --quick)
DATASETS = {
    "qasper": (40, 10),
    "squad": (100, 20),
    "hotpotqa": (50, 10),
    "hotpotqa-sent": (100, 30),
    "quality": (10, 3),
}


def _methods_steps(quick: bool, llm: bool) -> list[tuple[str, list[str]]]:
    steps = []
    for ds, (full_n, quick_n) in DATASETS.items():
        n = quick_n if quick else full_n
        base = [*CLI, "eval", "--dataset", ds, "--methods", METHODS]
        steps.append(
            (
                f"methods-{ds}",
                [*base, "--limit", str(n), "--no-llm", "--out", str(OUT / f"{ds}-nollm")],
            )
        )
        if llm:
            # SmolLM2's 4,096-token window: every context is capped at 2,000 tokens.
            llm_args = ["--limit", str(min(n, 10)), "--budget", "2000", "--max-tokens", "48"]
            steps.append((f"llm-{ds}", [*base, *llm_args, "--out", str(OUT / f"{ds}-llm")]))
    return steps


def bench(name: str, *args: str) -> list[str]:
    """The command that runs one benchmark module through the runner."""
    return [PY, "-m", "benchmarks", name, *args]


def steps(quick: bool, llm: bool) -> list[tuple[str, list[str]]]:
    q = quick
    out: list[tuple[str, list[str]]] = [
        ("index", bench("bench_index")),
        ("reranker", [*CLI, "eval-reranker", "--n", "50" if q else "100", "--seed", "0"]),
        ("segmenter", bench("bench_segmenter", "--papers", "5" if q else "30")),
        *_methods_steps(quick, llm),
        (
            "integrations",
            bench("bench_integrations")
            + (["--limit", "10", "--dev-limit", "20", "--timing-n", "5", "--check-n", "3"] * q),
        ),
    ]
    if not quick:
        out += [
            ("ray-index", bench("bench_ray_index", "--passages", "2000")),
            ("serve-load", bench("bench_serve_load")),
            *((f"fast-{w}", bench("bench_fast", w)) for w in ("agree", "cold", "index", "memory")),
            ("ann", bench("bench_ann")),
        ]
    if llm and not quick:
        llm_bench = bench("bench_llm")
        feedback = ["--dataset", "hotpotqa-sent", "--limit", "30"]
        feedback += ["--methods", "full[feedback=true]"]
        out += [
            (f"qwen-{d}", [*llm_bench, "run", "--dataset", d, "--methods", "naive,full,carrot"])
            for d in ("hotpotqa-sent", "squad")
        ]
        out += [
            (
                f"qwen-{d}-lean",
                [*llm_bench, "run", "--dataset", d, "--methods", "full[scorer=ensemble]"],
            )
            for d in ("hotpotqa-sent", "squad")
        ]
        out += [
            (
                f"qwen-{d}-total",
                [*llm_bench, "run", "--dataset", d, "--methods", "full", "--total-x-naive", "0.5"],
            )
            for d in ("hotpotqa-sent", "squad")
        ]
        out += [
            ("qwen-feedback", [*llm_bench, "run", *feedback]),
            ("qwen-report", [*llm_bench, "report"]),
        ]
    return out


def _stage_latency(m: dict[str, Any]) -> str:
    lat = m.get("latency") or {}
    parts = []
    for stage, v in lat.items():
        p50 = v.get("p50") if isinstance(v, dict) else v
        if stage != "total" and isinstance(p50, int | float):
            parts.append(f"{stage} {p50 * 1000:.0f}")
    return ", ".join(parts) or "-"


def merge_tables() -> list[str]:
    """One table per dataset from the ``methods`` steps, and its quality-vs-tokens plot."""
    lines: list[str] = []
    cols = ("context_tokens", "evidence_recall", "evidence_precision", "ie", "answer_recall")
    for ds in DATASETS:
        for kind in ("nollm", "llm"):
            path = OUT / f"{ds}-{kind}" / "results.json"
            if not path.exists():
                continue
            res = json.loads(path.read_text())
            extra = ("f1", "rouge_l", "accuracy", "cost_efficiency") if kind == "llm" else ()
            head = ["method", *cols, *extra, "p50 s/q", "p50 ms per stage"]
            rows, points = [], {}
            for name, m in res["methods"].items():
                cells = [name]
                for c in (*cols, *extra):
                    v = m.get(c)
                    cells.append(
                        "-" if v is None else (f"{v:.0f}" if c == "context_tokens" else f"{v:.3f}")
                    )
                cells.append(f"{m.get('latency_p50_total') or 0:.2f}")
                cells.append(_stage_latency(m))
                rows.append(cells)
                y = m.get("evidence_recall") if kind == "nollm" else m.get("f1")
                if y is None:
                    y = m.get("answer_recall") if kind == "nollm" else m.get("accuracy")
                if y is not None:
                    points[name] = (m["context_tokens"], y)
            title = f"{ds}, {'local LLM' if kind == 'llm' else 'context only'}"
            lines += md_table(head, rows, f"{title} ({res['n_questions']} questions)")
            png = RESULTS / f"all_methods_{ds}_{kind}.png"
            ylabel = "evidence recall" if kind == "nollm" else "F1 / accuracy"
            scatter_plot(points, png, "context tokens", ylabel, f"{ds} ({kind})")
            lines += ["", f"![{ds} {kind}]({png.name})", ""]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--llm", action="store_true", help="also answer with the local LLM")
    ap.add_argument("--only", default=None, help="comma-separated step names (see --list)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--merge-only", action="store_true", help="only rebuild the merged tables")
    args = ap.parse_args()
    global RESULTS, OUT
    if args.quick:
        OUT = REPO / "bench-out" / "quick"
        RESULTS = OUT / "results"
        os.environ["RAGSIEVE_BENCH_RESULTS"] = str(RESULTS)
    todo = steps(args.quick, args.llm)
    if args.list:
        for name, cmd in todo:
            print(f"{name}: {shlex.join(cmd)}")
        return
    if args.only:
        wanted = set(args.only.split(","))
        todo = [s for s in todo if s[0] in wanted]
    RESULTS.mkdir(parents=True, exist_ok=True)
    log = [
        "# bench_all run",
        "",
        f"`{shlex.join(['python', '-m', 'benchmarks', 'bench_all', *sys.argv[1:]])}`",
        "",
        "| step | exit | seconds | command |",
        "|---|---|---|---|",
    ]
    t_all = time.perf_counter()
    if not args.merge_only:
        for name, cmd in todo:
            print(f"== {name}: {shlex.join(cmd)}", flush=True)
            t0 = time.perf_counter()
            rc = subprocess.call(cmd, cwd=REPO)
            dt = time.perf_counter() - t0
            log.append(f"| {name} | {rc} | {dt:.0f} | `{shlex.join(cmd)}` |")
            print(f"== {name}: exit {rc} in {dt:.0f} s", flush=True)
    log += ["", f"Total {time.perf_counter() - t_all:.0f} s.", "", "## All methods", ""]
    log += merge_tables()
    (RESULTS / "bench_all.md").write_text("\n".join(log) + "\n")
    print(f"wrote {RESULTS / 'bench_all.md'} ({time.perf_counter() - t_all:.0f} s)")


if __name__ == "__main__":
    main()
