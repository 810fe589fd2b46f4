"""The combined method's benchmark (docs/full.md): the targets and the one-stage ablation.

    .venv/bin/python benchmarks/bench_full.py targets    # (a), (b), (c) of the full-method issue
    .venv/bin/python benchmarks/bench_full.py ablation   # remove one stage at a time, 3 datasets

All runs are ``--no-llm`` (context metrics) through the evaluation harness, so every number is
what ``ragsieve eval`` prints for the same spec. Each writes ``benchmarks/results/full_<name>.json``
and ``full_<name>.md`` and prints the table with a PASS/MISS line per target. Sizes are modest
(2 shared cores): ``--limit`` questions per dataset, evaluation indexes cached between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: ``bench_all.py --quick`` points this elsewhere so a small pass never overwrites the published
#: tables.
RESULTS = Path(os.environ.get("RAGSIEVE_BENCH_RESULTS", REPO / "benchmarks" / "results"))

#: Every dataset whose questions carry evidence gold (for target (c) and the ablation).
EVIDENCE_SETS = ("hotpotqa-sent", "hotpotqa", "qasper", "squad")
ABLATION = {
    "full": "full",
    "- pareto (alpha = 1)": "full[pareto=false]",
    "- hybrid chunk sentences": "full[chunks=0]",
    "+ SAKI expansion (3 sentences x 3 links)": "full[expand=3]",
    "- ensemble reranker (bi-encoder)": "full[reranker=bi-encoder]",
    "- adaptive cut (fixed top 3, no floor)": "full[selection=top-k,min_k=3,floor=0]",
    "- floor (SAGE's cut alone)": "full[floor=0]",
    "- bridge hop": "full[hops=1]",
    "- title in the reranker input": "full[title=false]",
    "+ MCTS order": "full[order=mcts]",
}
COLUMNS = ("context_tokens", "evidence_recall", "evidence_precision", "ie", "answer_recall")


def _run(
    dataset: str, methods: str, *, limit: int | None, pool: bool = False, **kw: Any
) -> dict[str, Any]:
    from ragsieve.evaluate.runner import (
        EvalConfig,
        markdown_table,
        parse_methods,
        run_eval,
        select_dataset,
    )

    ds = select_dataset(dataset, None, None, limit, pool)
    cfg = EvalConfig(methods=parse_methods(methods), no_llm=True, **kw)
    t0 = time.perf_counter()
    res = run_eval(ds, cfg)
    res["wall_seconds"] = time.perf_counter() - t0
    print(markdown_table(res), file=sys.stderr, flush=True)
    return res


def _row(label: str, m: dict[str, Any]) -> str:
    cells = []
    for c in COLUMNS:
        v = m.get(c)
        cells.append("-" if v is None else (f"{v:.0f}" if c == "context_tokens" else f"{v:.3f}"))
    lat = m.get("latency_p50_total")
    cells.append("-" if lat is None else f"{lat:.2f}")
    return f"| {label} | " + " | ".join(cells) + " |"


def _head(first: str) -> list[str]:
    cols = [first, *COLUMNS, "p50 s/q"]
    return ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]


def _save(name: str, obj: Any, lines: list[str]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"full_{name}.json").write_text(json.dumps(obj, indent=2, default=float))
    (RESULTS / f"full_{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def targets(limit: int | None, spec: str, hotpot_limit: int | None = None) -> None:
    """(a) HotpotQA sentence gold at budget 450; (b) the same pooled into one corpus; (c) no
    budget against naive k = 10 on every evidence dataset. ``hotpot_limit`` (default: all 100
    questions) sizes the hotpotqa-sent runs."""
    lines: list[str] = [f"`{spec}` against naive; `--limit {limit}` questions per dataset.", ""]
    out: dict[str, Any] = {"spec": spec, "limit": limit, "hotpot_limit": hotpot_limit}
    t0 = time.perf_counter()

    a = _run("hotpotqa-sent", f"naive,pareto,{spec}", limit=hotpot_limit, budget=450)
    full, naive = a["methods"][spec], a["methods"]["naive"]
    ok_a = full["evidence_precision"] >= 0.45 and full["evidence_recall"] >= 0.60
    lines += [
        f"## (a) HotpotQA sentence gold ({a['n_questions']} questions), budget 450",
        "",
        *_head("method"),
    ]
    lines += [_row(k, v) for k, v in a["methods"].items()]
    lines += [
        "",
        f"**{_verdict(ok_a)}**: precision {full['evidence_precision']:.3f} (target >= 0.45), "
        f"recall {full['evidence_recall']:.3f} (target >= 0.60).",
        "",
    ]
    out["a"] = a["methods"]

    b = _run("hotpotqa-sent", f"naive,{spec}", limit=hotpot_limit, pool=True, budget=450)
    full, naive = b["methods"][spec], b["methods"]["naive"]
    ie_x = full["ie"] / naive["ie"] if naive["ie"] else float("inf")
    rec_x = full["evidence_recall"] / naive["evidence_recall"]
    ok_b = ie_x >= 5.0 and rec_x >= 0.8
    lines += ["## (b) HotpotQA pooled into one open corpus, budget 450", "", *_head("method")]
    lines += [_row(k, v) for k, v in b["methods"].items()]
    lines += [
        "",
        f"**{_verdict(ok_b)}**: ie {ie_x:.2f}x naive (target >= 5x), evidence recall "
        f"{rec_x:.2f}x naive (target >= 0.8x).",
        "",
    ]
    out["b"] = b["methods"]

    lines += [
        "## (c) adaptive selection (no budget) against naive k = 10",
        "",
        "| dataset | method | tokens | x naive | evidence recall | x naive | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    out["c"] = {}
    passage = f"{spec[:-1]},unit=passage]" if spec.endswith("]") else f"{spec}[unit=passage]"
    for ds in EVIDENCE_SETS:
        lim = hotpot_limit if ds == "hotpotqa-sent" else limit
        c = _run(ds, f"naive,{spec},{passage}", limit=lim, k=10)
        naive = c["methods"]["naive"]
        lines.append(
            f"| {ds} ({c['n_questions']} q) | naive k=10 | {naive['context_tokens']:.0f} | 1 | "
            f"{naive['evidence_recall']:.3f} | 1 | |"
        )
        for name in (spec, passage):
            m = c["methods"][name]
            tok = m["context_tokens"] / naive["context_tokens"]
            rec = m["evidence_recall"] / naive["evidence_recall"]
            ok = tok <= 0.40 and rec >= 0.95
            lines.append(
                f"| | {name} | {m['context_tokens']:.0f} | {tok:.2f} | "
                f"{m['evidence_recall']:.3f} | {rec:.2f} | {_verdict(ok)} |"
            )
        out["c"][ds] = c["methods"]
    lines += ["", f"Wall time {time.perf_counter() - t0:.0f} s."]
    out["wall_seconds"] = time.perf_counter() - t0
    _save("targets", out, lines)


def ablation(
    limit: int | None, datasets: list[str], budget: int | None, hotpot_limit: int | None
) -> None:
    """Each stage removed in turn (and MCTS ordering added), same harness, same questions."""
    methods = ",".join(ABLATION.values())
    lines = [f"Budget {budget}; `--limit {limit}` (hotpotqa-sent: {hotpot_limit}) questions.", ""]
    out: dict[str, Any] = {"budget": budget, "limit": limit, "specs": ABLATION}
    t0 = time.perf_counter()
    for ds in datasets:
        lim = hotpot_limit if ds == "hotpotqa-sent" else limit
        res = _run(ds, methods, limit=lim, budget=budget)
        lines += [f"## {ds} ({res['n_questions']} questions)", "", *_head("variant")]
        lines += [_row(label, res["methods"][spec]) for label, spec in ABLATION.items()]
        lines.append("")
        out[ds] = res["methods"]
    lines.append(f"Wall time {time.perf_counter() - t0:.0f} s.")
    out["wall_seconds"] = time.perf_counter() - t0
    _save(f"ablation{'' if budget is None else f'_b{budget}'}", out, lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("what", choices=["targets", "ablation"])
    ap.add_argument("--limit", type=int, default=20, help="questions per set (hotpotqa-sent: all)")
    ap.add_argument("--spec", default="full", help="the method spec the targets measure")
    ap.add_argument("--datasets", default="hotpotqa-sent,qasper,squad")
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument(
        "--hotpot-limit", type=int, default=None, help="hotpotqa-sent size (default all)"
    )
    args = ap.parse_args()
    if args.what == "targets":
        targets(args.limit, args.spec, args.hotpot_limit)
    else:
        ablation(args.limit, args.datasets.split(","), args.budget, args.hotpot_limit)


if __name__ == "__main__":
    main()
