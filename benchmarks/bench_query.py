"""Fast at query time (issue 34): selection seconds, the framework adapters, eval memory.

    .venv/bin/python benchmarks/bench_query.py select --baseline-src /tmp/before/src
    .venv/bin/python benchmarks/bench_query.py adapters            # first and repeat calls
    .venv/bin/python benchmarks/bench_query.py memory --limit 200  # eval peak RSS, 10 vs 200 q

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
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("RAGSIEVE_DATA", REPO.parent / "shared" / "data"))
RESULTS = Path(os.environ.get("RAGSIEVE_BENCH_RESULTS", REPO / "benchmarks" / "results"))
BOOTSTRAP = 2000
SELECT_METHODS = "naive[reranker=ensemble],carrot"
MEMORY_METHODS = "naive,naive[reranker=ensemble],carrot,tagger"


def paired_interval(a: np.ndarray, b: np.ndarray, seed: int = 0) -> tuple[float, float, float]:
    """mean(a - b) and its 95% percentile interval, resampling questions."""
    x = a - b
    idx = np.random.default_rng(seed).integers(0, len(x), size=(BOOTSTRAP, len(x)))
    means = x[idx].mean(axis=1)
    return float(x.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def selection_seconds(row: dict[str, Any]) -> float:
    return sum(v for k, v in row["timings"].items() if k != "retrieve")


def eval_rows(limit: int, methods: str, out: Path, src: str | None) -> list[dict[str, Any]]:
    """``ragsieve eval`` (HotpotQA IRCoT dev, per-question pools, budget 450, --no-llm) as a
    subprocess on the current code or on ``src``; its per-question rows."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
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
                "diff_ci": [round(v, 4) for v in paired_interval(a, b)],
            }
        out["methods"][label] = row
    return out


def mrr(n: int) -> dict[str, Any]:
    """The shipped ensemble's held-out ranking on HotpotQA IRCoT (``eval-reranker``'s task and
    sample) with its cosine feature from the int8 ONNX MiniLM (now) and from the fp32 torch
    MiniLM (the fit's build): cross-encoder and BM25 features computed once, shared."""
    from ragsieve.embed import get_embedder, index_embedder
    from ragsieve.rerank.evaluate import load_tasks, task_metrics
    from ragsieve.rerank.fusion import FusionWeights, list_features, stack

    tasks = load_tasks("hotpotqa", DATA, n, 0)
    from ragsieve.rerank.bm25 import BM25Reranker
    from ragsieve.rerank.cross_encoder import OnnxCrossEncoder

    ce, bm25, w = OnnxCrossEncoder(), BM25Reranker(), FusionWeights.load()
    builds = {"int8": index_embedder("minilm"), "fp32": get_embedder("minilm")}
    per: dict[str, list[float]] = {b: [] for b in builds}
    for i, t in enumerate(tasks, start=1):
        ps = list(t.passages)
        logits, raw = ce.logits(t.query, ps), bm25.raw_scores(t.query, ps)
        for b, emb in builds.items():
            vecs = emb.embed([t.query, *ps])
            x = stack(list_features(logits, vecs[1:] @ vecs[0], raw, bm25.k), w.features)
            per[b].append(task_metrics(x @ np.asarray(w.coef) + w.intercept, t.gold)["mrr@10"])
        if i % 50 == 0:
            print(f"{i}/{len(tasks)}", file=sys.stderr)
    a, b = np.array(per["int8"]), np.array(per["fp32"])
    return {
        "questions": len(tasks),
        "mrr@10": {"int8": round(float(a.mean()), 4), "fp32": round(float(b.mean()), 4)},
        "diff_ci": [round(v, 4) for v in paired_interval(a, b)],
    }


def mrr_table(res: dict[str, Any]) -> str:
    d, lo, hi = res["diff_ci"]
    return (
        f"HotpotQA IRCoT dev, {res['questions']} questions (eval-reranker's seed-0 sample), "
        "shipped fusion weights\n\n| cosine feature from | MRR@10 |\n|---|---:|\n"
        f"| int8 ONNX MiniLM (now) | {res['mrr@10']['int8']} |\n"
        f"| fp32 torch MiniLM (the fit's build) | {res['mrr@10']['fp32']} |\n\n"
        f"int8 minus fp32: {d:+.4f} [{lo:+.4f}, {hi:+.4f}] (paired bootstrap 95%)"
    )


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
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"eval --limit {limit} failed: {err.decode()[-500:]}")
    return usage.ru_maxrss / 1024, time.perf_counter() - t0


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
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "query.json"
    allres = json.loads(path.read_text()) if path.is_file() else {}
    allres[name] = data
    path.write_text(json.dumps(allres, indent=1) + "\n")
    md = RESULTS / "query.md"
    text = md.read_text() if md.is_file() else "# bench_query.py\n"
    marker = f"\n## {name}\n"
    if marker in text:
        head, _, rest = text.partition(marker)
        tail = rest[rest.find("\n## ") :] if "\n## " in rest else ""
        text = head + tail
    md.write_text(text.rstrip("\n") + "\n" + marker + "\n" + table + "\n")
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
    m = sub.add_parser("mrr")
    m.add_argument("--n", type=int, default=200)
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
    elif args.cmd == "mrr":
        res = mrr(args.n)
        save("mrr", res, mrr_table(res))


if __name__ == "__main__":
    main()
