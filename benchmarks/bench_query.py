"""Fast at query time (issue 34): selection seconds, the framework adapters, eval memory.

    .venv/bin/python -m benchmarks bench_query select --baseline-src /tmp/before/src
    .venv/bin/python -m benchmarks bench_query adapters            # first and repeat calls
    .venv/bin/python -m benchmarks bench_query memory --limit 200  # eval peak RSS, 10 vs 200 q

``select`` runs ``ragsieve eval`` (``--no-llm``, per-question pools of HotpotQA IRCoT dev,
budget 450) as subprocesses on the current code and on ``--baseline-src`` (the ``src`` of a
checkout from before issue 34: ``git worktree add /tmp/before 3f94cd8``), alternating, with
the same interpreter and the same cached evaluation index. It prints p50 selection seconds
(every stage after ``retrieve``), how many selections are identical, and paired bootstrap 95%
intervals of now minus before on evidence recall, answer recall and tokens.

``adapters`` times, each in a fresh interpreter, ``PoolSelector()`` and the LangChain,
LlamaIndex and Haystack components with their defaults on one 10-paragraph HotpotQA pool: the
first call (imports and model load included; the framework's own first import, which the
user's application has already paid, is timed apart) and 5 repeat calls on other pools.

``memory`` runs ``ragsieve eval`` as a subprocess on 10 and on ``--limit`` questions with the
same 4 methods and compares the peak RSS of the two runs (``wait4``).

Results go to ``benchmarks/results/query.{json,md}`` (one key per command).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from common import DATA, code_env, interval, run_measured, save_json, save_section

BOOTSTRAP = 2000
SELECT_METHODS = "naive[reranker=ensemble],carrot"
MEMORY_METHODS = "naive,naive[reranker=ensemble],carrot,tagger"


def selection_seconds(row: dict[str, Any]) -> float:
    return sum(v for k, v in row["timings"].items() if k != "retrieve")


def eval_rows(limit: int, methods: str, out: Path, src: str | None) -> list[dict[str, Any]]:
    """``ragsieve eval`` (HotpotQA IRCoT dev, per-question pools, budget 450, --no-llm) as a
    subprocess on the current code or on ``src``; its per-question rows."""
    env = code_env(src)
    argv = [sys.executable, "-m", "ragsieve.cli", "eval", "--dataset", "hotpotqa"]
    argv += ["--no-llm", "--limit", str(limit), "--budget", "450", "--methods", methods]
    subprocess.run([*argv, "--out", str(out)], env=env, check=True, capture_output=True)
    lines = (out / "per_question.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def select(limit: int, methods: str, rounds: int, baseline: str) -> dict[str, Any]:
    """Both codes, alternating, ``rounds`` times each; the first round's selections compared."""
    import tempfile

    codes = {"now": None, "before": baseline}
    runs: dict[str, list[list[dict[str, Any]]]] = {c: [] for c in codes}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for name in codes if r % 2 == 0 else reversed(list(codes)):
                rows = eval_rows(limit, methods, Path(tmp) / f"{name}{r}", codes[name])
                runs[name].append(rows)
                print(f"round {r} {name}: {len(rows)} rows", file=sys.stderr)
    out: dict[str, Any] = {"questions": limit, "rounds": rounds, "methods": {}}
    for label in dict.fromkeys(x["method"] for x in runs["now"][0]):
        per = {c: [[x for x in rs if x["method"] == label] for rs in runs[c]] for c in codes}
        new, old = per["now"][0], per["before"][0]
        row: dict[str, Any] = {
            "p50_select_s": {
                c: round(statistics.median(selection_seconds(x) for rs in per[c] for x in rs), 3)
                for c in codes
            },
            "same_selection": sum(
                a["selected"] == b["selected"] for a, b in zip(new, old, strict=True)
            ),
            "questions": len(new),
        }
        for metric in ("evidence_recall", "answer_recall", "context_tokens"):
            a = np.array([x.get(metric) or 0.0 for x in new], dtype=float)
            b = np.array([x.get(metric) or 0.0 for x in old], dtype=float)
            row[metric] = {
                "now": round(float(a.mean()), 4),
                "before": round(float(b.mean()), 4),
                "diff_ci": [round(v, 4) for v in interval(a, b, n=BOOTSTRAP)],
            }
        out["methods"][label] = row
    return out


ADAPTER_PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
kind, pools = sys.argv[1], json.loads(sys.stdin.read())
t_fw = t0  # after the framework's own import (the user's application has done it)
if kind == "pool":
    from ragsieve.pool import Passage, PoolSelector
    sel = PoolSelector()
    call = lambda q, ps: sel.select(q, [Passage(t, h) for h, t in ps]).pieces
elif kind == "langchain":
    from langchain_core.documents import Document
    t_fw = time.perf_counter()
    from ragsieve.integrations.langchain import RagsieveCompressor
    comp = RagsieveCompressor()
    call = lambda q, ps: comp.compress_documents(
        [Document(t, metadata={"title": h}) for h, t in ps], q)
elif kind == "llamaindex":
    from llama_index.core.schema import NodeWithScore, TextNode
    t_fw = time.perf_counter()
    from ragsieve.integrations.llamaindex import RagsievePostprocessor
    post = RagsievePostprocessor()
    call = lambda q, ps: post.postprocess_nodes(
        [NodeWithScore(node=TextNode(text=t, metadata={"title": h})) for h, t in ps], query_str=q)
else:
    from haystack import Document
    t_fw = time.perf_counter()
    from ragsieve.integrations.haystack import RagsieveRanker
    rank = RagsieveRanker()
    call = lambda q, ps: rank.run(q, [Document(content=t, meta={"title": h}) for h, t in ps])[
        "documents"]
times, kept = [], []
for q, ps in pools:
    a = time.perf_counter()
    kept.append(len(call(q, ps)))
    times.append(time.perf_counter() - a)
end = time.perf_counter() - sum(times[1:])
print(json.dumps({"first_s": end - t0, "framework_import_s": t_fw - t0, "repeat_s": times[1:],
                  "kept": kept, "torch": "torch" in sys.modules}))
"""


def hotpot_pools(n: int) -> list[tuple[str, list[tuple[str, str]]]]:
    """The first ``n`` HotpotQA IRCoT dev questions, each with its 10 titled paragraphs."""
    out = []
    with (DATA / "hotpotqa/hotpot_dev_subsampled500_ircot.jsonl").open() as fh:
        for line in fh:
            obj = json.loads(line)
            ps = [(c["title"], c["paragraph_text"].strip()) for c in obj["contexts"]]
            if len(ps) == 10:
                out.append((obj["question_text"].strip(), ps))
            if len(out) == n:
                break
    return out


def adapters(repeat: int, rounds: int) -> dict[str, Any]:
    """Each adapter with its default method in a fresh interpreter: the first call on a
    10-paragraph pool (imports, model load and the call) and ``repeat`` calls on other pools;
    ``rounds`` interpreters per adapter, alternating adapters."""
    pools = json.dumps(hotpot_pools(repeat + 1))
    kinds = ("pool", "langchain", "llamaindex", "haystack")
    got: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    for _ in range(rounds):
        for kind in kinds:
            p = subprocess.run(
                [sys.executable, "-c", ADAPTER_PROBE, kind],
                input=pools,
                capture_output=True,
                text=True,
                check=True,
            )
            got[kind].append(json.loads(p.stdout.strip().splitlines()[-1]))
            print(kind, got[kind][-1], file=sys.stderr)
    out: dict[str, Any] = {"pool_paragraphs": 10, "repeat": repeat, "rounds": rounds, "rows": {}}
    for kind, runs in got.items():
        out["rows"][kind] = {
            "first_s": round(statistics.median(r["first_s"] for r in runs), 3),
            "framework_import_s": round(
                statistics.median(r["framework_import_s"] for r in runs), 3
            ),
            "first_after_framework_s": round(
                statistics.median(r["first_s"] - r["framework_import_s"] for r in runs), 3
            ),
            "repeat_p50_s": round(statistics.median(t for r in runs for t in r["repeat_s"]), 3),
            "repeat_max_s": round(max(t for r in runs for t in r["repeat_s"]), 3),
            "kept_mean": round(statistics.mean(k for r in runs for k in r["kept"]), 1),
            "torch": any(r["torch"] for r in runs),
        }
    return out


def adapters_table(res: dict[str, Any]) -> str:
    names = {
        "pool": "PoolSelector()",
        "langchain": "RagsieveCompressor()",
        "llamaindex": "RagsievePostprocessor()",
        "haystack": "RagsieveRanker()",
    }
    lines = [
        f"HotpotQA IRCoT dev pools of 10 titled paragraphs, default method (tagger, direct); "
        f"first call in a fresh interpreter incl. imports and model load, then {res['repeat']} "
        f"repeat calls on other pools; median of {res['rounds']} interpreter(s)",
        "",
        "| component | first call s | of which the framework's import s | first call after "
        "it s | repeat p50 s | repeat max s | pieces kept (mean) | torch loaded |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for kind, r in res["rows"].items():
        lines.append(
            f"| {names[kind]} | {r['first_s']} | {r['framework_import_s']} | "
            f"{r['first_after_framework_s']} | {r['repeat_p50_s']} | {r['repeat_max_s']} | "
            f"{r['kept_mean']} | {'yes' if r['torch'] else 'no'} |"
        )
    return "\n".join(lines)


def peak_rss_eval(limit: int, methods: str, out: Path) -> tuple[float, float]:
    """``ragsieve eval`` on ``limit`` questions as a subprocess: its peak RSS in MB (``wait4``
    on this child alone) and its wall seconds."""
    argv = [sys.executable, "-m", "ragsieve.cli", "eval", "--dataset", "hotpotqa", "--no-llm"]
    argv += ["--limit", str(limit), "--budget", "450", "--methods", methods, "--out", str(out)]
    code, secs, rss, text = run_measured(argv)
    if code != 0:
        raise SystemExit(f"eval --limit {limit} failed: {text[-500:]}")
    return rss, secs


def memory(limit: int, methods: str) -> dict[str, Any]:
    """Peak RSS of ``eval`` on 10 questions and on ``limit`` (each method over every question,
    one after the other, as ``eval`` runs them)."""
    import tempfile

    out: dict[str, Any] = {"methods": methods, "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (10, limit):
            rss, secs = peak_rss_eval(n, methods, Path(tmp) / str(n))
            out["runs"][str(n)] = {"peak_rss_mb": round(rss), "seconds": round(secs)}
            print(n, out["runs"][str(n)], file=sys.stderr)
    small, big = out["runs"]["10"]["peak_rss_mb"], out["runs"][str(limit)]["peak_rss_mb"]
    out["ratio"] = round(big / small, 3)
    return out


def memory_table(res: dict[str, Any]) -> str:
    lines = [
        f"`ragsieve eval --dataset hotpotqa --no-llm --budget 450 --methods "
        f"'{res['methods']}'`, peak RSS of the whole process",
        "",
        "| questions | peak RSS MB | seconds |",
        "|---:|---:|---:|",
    ]
    for n, r in res["runs"].items():
        lines.append(f"| {n} | {r['peak_rss_mb']} | {r['seconds']} |")
    lines.append(f"\npeak at {list(res['runs'])[-1]} / peak at 10: {res['ratio']}")
    return "\n".join(lines)


def select_table(res: dict[str, Any]) -> str:
    lines = [
        f"HotpotQA IRCoT dev, {res['questions']} questions, per-question pools, budget 450, "
        f"--no-llm, {res['rounds']} round(s) per build",
        "",
        "| method | p50 select s, now | p50 select s, before | same selection | "
        "evidence recall now / before [diff, 95% CI] | answer recall now / before [diff] | "
        "tokens now / before [diff] |",
        "|---|---:|---:|---:|---|---|---|",
    ]
    for label, r in res["methods"].items():
        cells = []
        for m in ("evidence_recall", "answer_recall", "context_tokens"):
            v = r[m]
            d, lo, hi = v["diff_ci"]
            cells.append(f"{v['now']} / {v['before']} [{d:+.3f}, {lo:+.3f} to {hi:+.3f}]")
        lines.append(
            f"| {label} | {r['p50_select_s']['now']} | {r['p50_select_s']['before']} | "
            f"{r['same_selection']}/{r['questions']} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def save(name: str, data: dict[str, Any], table: str) -> None:
    save_json("query.json", data, key=name, indent=1)
    save_section("query.md", name, table, "bench_query.py")
    print(table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("select")
    s.add_argument("--limit", type=int, default=200)
    s.add_argument("--methods", default=SELECT_METHODS)
    s.add_argument("--rounds", type=int, default=2)
    s.add_argument("--baseline-src", required=True, help="src folder of the code before")
    a = sub.add_parser("adapters")
    a.add_argument("--repeat", type=int, default=5)
    a.add_argument("--rounds", type=int, default=3)
    mem = sub.add_parser("memory")
    mem.add_argument("--limit", type=int, default=200)
    mem.add_argument("--methods", default=MEMORY_METHODS)
    args = ap.parse_args()
    if not (DATA / "hotpotqa").is_dir():
        sys.exit(f"skipped: shared data not found at {DATA} (set RAGSIEVE_DATA)")
    if args.cmd == "select":
        res = select(args.limit, args.methods, args.rounds, args.baseline_src)
        save("select", res, select_table(res))
    elif args.cmd == "adapters":
        res = adapters(args.repeat, args.rounds)
        save("adapters", res, adapters_table(res))
    elif args.cmd == "memory":
        res = memory(args.limit, args.methods)
        save("memory", res, memory_table(res))


if __name__ == "__main__":
    main()
