"""Reranker throughput (issue: shipped cross-encoder): pairs/s of each scorer in one process.

Scorers: the bi-encoder (``bi-encoder`` over the default torch ``minilm`` embedder, and over
``minilm-onnx``), BM25 over the candidates, the shipped int8 cross-encoder and, when a
``train-reranker`` output folder with ``model_fp32.onnx`` is given, the same model in fp32.
Workload: real (question, paragraph) lists from HotpotQA IRCoT (10 paragraphs per question, titles
prefixed as in ``eval-reranker``); each scorer scores every list fresh (the bi-encoder embeds the
query and all passages, nothing cached), after one warm-up list. This is a benchmark, not a test.

Usage: .venv/bin/python benchmarks/bench_reranker.py [--questions 40] [--fp32-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("RAGSIEVE_DATA", REPO.parent / "shared" / "data"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--fp32-dir", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not (DATA / "hotpotqa").is_dir():
        sys.exit(f"skipped: shared data not found at {DATA} (set RAGSIEVE_DATA)")

    from ragsieve.rerank.base import BiEncoderReranker
    from ragsieve.rerank.evaluate import load_hotpotqa
    from ragsieve.rerank.factory import get_reranker

    tasks = load_hotpotqa(DATA)[: args.questions + 1]
    warm, tasks = tasks[0], tasks[1:]
    scorers = {
        "bi-encoder (minilm, torch fp32)": BiEncoderReranker("minilm"),
        "bi-encoder (minilm-onnx, int8)": BiEncoderReranker("minilm-onnx"),
        "bm25": get_reranker("bm25"),
        "cross-encoder (int8 ONNX, shipped)": get_reranker("cross-encoder"),
    }
    if args.fp32_dir is not None:
        scorers["cross-encoder (fp32 ONNX)"] = get_reranker(f"cross-encoder-fp32:{args.fp32_dir}")
    n_pairs = sum(len(t.passages) for t in tasks)
    rows = []
    for name, scorer in scorers.items():
        scorer.score(warm.query, list(warm.passages))
        t0 = time.perf_counter()
        for t in tasks:
            scorer.score(t.query, list(t.passages))
        secs = time.perf_counter() - t0
        rows.append(
            {
                "scorer": name,
                "pairs": n_pairs,
                "seconds": round(secs, 2),
                "pairs_per_s": round(n_pairs / secs, 1),
            }
        )
        print(f"{name}: {n_pairs / secs:.1f} pairs/s", file=sys.stderr)
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "rows": rows}, indent=2))
        return
    print(f"{len(tasks)} HotpotQA questions x 10 paragraphs, {os.cpu_count()} CPUs\n")
    print("| scorer | pairs | seconds | pairs/s |\n|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['scorer']} | {r['pairs']} | {r['seconds']} | {r['pairs_per_s']} |")


if __name__ == "__main__":
    main()
