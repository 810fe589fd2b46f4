"""Indexing throughput: the local engine against the Ray engine with 1 and 2 workers.

Corpus: QASPER train paragraphs (>= 20 words, headings dropped), one passage per document in a
.jsonl file, fixed 200-token chunks (so nearly every passage is one chunk). Embedder:
``minilm-onnx`` (int8 ONNX), because embedding 20k passages with the torch model takes far too
long on the 2 shared cores this project runs on; both engines use the same model.

Every run is the real CLI in a subprocess, on a fresh index: ``ragsieve index CORPUS.jsonl
--index DIR [--engine ray --workers N] --embedder minilm-onnx --json``. The headline figure is
wall time of the whole command (process start, model loading, Ray start-up, the write and the
BM25 index), since that is what a user waits for; the engine's own ``seconds`` is shown beside
it. Without ``--address`` the Ray engine starts a local Ray instance with every core as CPUs,
and Ray gives each one-CPU worker ``OMP_NUM_THREADS=1``; the local engine uses every core in
one process. Ratios are against the local run of the same session, so the machine's load at
the time affects both sides alike (as far as it stays steady: see the load averages).

Usage: .venv/bin/python -m benchmarks bench_ray_index [--passages 20000]
       [--embedder minilm-onnx] [--out benchmarks/results/ray_index.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DATA, need_data


def write_passages(out: Path, limit: int) -> tuple[int, int]:
    """QASPER train paragraphs as ``{"id", "title", "text"}`` records; (passages, words)."""
    n = words = 0
    with (
        open(DATA / "qasper" / "train_papers_fulltext.jsonl", encoding="utf-8") as f,
        open(out, "w", encoding="utf-8") as w,
    ):
        for line in f:
            paper = json.loads(line)
            title = paper["text"].split("\n", 1)[0].lstrip("# ").strip()
            for k, para in enumerate(paper["text"].split("\n\n")):
                para = para.strip()
                if not para or para.startswith("#") or len(para.split()) < 20:
                    continue
                rec = {"id": f"{paper['paper_id']}:{k}", "title": title, "text": para}
                w.write(json.dumps(rec, ensure_ascii=False) + "\n")
                n += 1
                words += len(para.split())
                if n >= limit:
                    return n, words
    return n, words


def run_cli(args: list[str], env: dict[str, str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "ragsieve.cli", "index", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"run failed ({' '.join(args)}):\n{p.stderr[-3000:]}")
    return wall, json.loads(p.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passages", type=int, default=20_000)
    ap.add_argument("--embedder", default="minilm-onnx")
    ap.add_argument("--out", type=Path, default=None, help="Also write the results here (.md).")
    ap.add_argument(
        "--runs",
        default="local,ray2,ray1",
        help="Which runs, in order: local, ray2 (2 workers), ray1 (1 worker).",
    )
    ap.add_argument(
        "--local-wall",
        type=float,
        default=None,
        help="Wall seconds of a local run measured earlier on the same corpus, for the ratios "
        "when this invocation does not run `local` itself (say so when you report them).",
    )
    args = ap.parse_args()
    need_data()

    def stop(signum: int, _frame: object) -> None:
        # A long run on a shared machine can be stopped from outside: say so in the log, and
        # let the clean-up below remove the temporary corpus and indexes.
        raise SystemExit(f"stopped by signal {signal.Signals(signum).name}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)

    tmp = Path(tempfile.mkdtemp(prefix="rs-bench-ray-", dir="/tmp"))
    env = {**os.environ, "RAY_TMPDIR": str(tmp / "ray")}  # private Ray session files
    (tmp / "ray").mkdir()
    corpus = tmp / "passages.jsonl"
    n_passages, n_words = write_passages(corpus, args.passages)
    print(f"corpus: {n_passages} QASPER train passages, {n_words} words", flush=True)

    # Local first (the baseline of every ratio), then 2 workers, then 1: the report is rewritten
    # after each run, so a run cut short still leaves the finished ones on record.
    known_runs = {
        "local": ("local", []),
        "ray2": ("ray, 2 workers", ["--engine", "ray", "--workers", "2"]),
        "ray1": ("ray, 1 worker", ["--engine", "ray", "--workers", "1"]),
    }
    runs = [known_runs[r.strip()] for r in args.runs.split(",")]
    if runs[0][0] != "local" and args.local_wall is None:
        sys.exit("without a local run first, pass --local-wall for the ratios")
    rows: list[tuple[str, float, dict]] = []
    load_before = os.getloadavg()
    try:
        for i, (name, extra) in enumerate(runs):
            index = tmp / f"index-{i}"
            wall, out = run_cli(
                [str(corpus), "--index", str(index), "--embedder", args.embedder, *extra], env
            )
            out["load"] = os.getloadavg()[0]  # 1-minute load average as the run ended
            rows.append((name, wall, out))
            print(
                f"{name}: {wall:.1f}s wall, {out['seconds']:.1f}s engine, "
                f"{out['chunks_written']} chunks, {out['tokens_written']} tokens",
                flush=True,
            )
            shutil.rmtree(index, ignore_errors=True)
            assert out["chunks_written"] == rows[0][2]["chunks_written"], rows  # same content
            report(args, rows, n_passages, n_words, load_before, os.getloadavg())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report(
    args: argparse.Namespace,
    rows: list[tuple[str, float, dict]],
    n_passages: int,
    n_words: int,
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
) -> None:
    """Print the table and, with ``--out``, (re)write the results file."""
    import lance_ray
    import ray

    base = rows[0]
    base_wall = base[1] if base[0] == "local" else args.local_wall
    lines = [
        "| engine | wall s | engine s | passages/s | tokens/s | vs local (wall) | load at end |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, wall, out in rows:
        lines.append(
            f"| {name} | {wall:.1f} | {out['seconds']:.1f} | {out['added'] / wall:.1f} "
            f"| {out['tokens_written'] / wall:.0f} | {base_wall / wall:.2f}x | {out['load']:.1f} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        cmd = " ".join(sys.argv[1:])
        cmd = f".venv/bin/python -m benchmarks bench_ray_index {cmd}"
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            "# Indexing throughput: local engine vs Ray engine\n\n"
            f"Command: `{cmd}`\n\n"
            f"Corpus: {n_passages} QASPER train paragraphs ({n_words} words, "
            f"{base[2]['tokens_written']} cl100k tokens in {base[2]['chunks_written']} "
            "fixed 200-token chunks), embedder "
            f"`{args.embedder}`. Machine: {os.cpu_count()} cores shared with other jobs, "
            f"load average {load_before[0]:.1f} before and {load_after[0]:.1f} after; "
            f"Python {platform.python_version()}, ray {ray.__version__}, "
            f"lance-ray {lance_ray.__version__}. Wall time is the whole `ragsieve index` "
            "command; engine time is its reported `seconds` (for Ray, including Ray start-up "
            "and the workers loading the model).\n\n"
            f"{table}\n"
        )
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
