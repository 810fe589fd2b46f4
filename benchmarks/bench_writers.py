"""Two concurrent writers on one index: does either set of documents get lost?

Each trial starts two ``ragsieve index`` processes at the same moment on the same index, each
with its own small set of documents (the first trial also races to create the index). The
second one to reach the write lock waits for it (``--wait``, default 60 s). Counts the
documents that are missing afterwards and how many writers printed the waiting message.

    .venv/bin/python -m benchmarks bench_writers --trials 10
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ragsieve.index import Index

EMBEDDER = "minilm-onnx"


def docs(folder: Path, tag: str, n: int) -> set[str]:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"{tag}{i}.txt").write_text(f"Note {tag} {i}: the {tag} fact number {i}.\n")
    return {str(p.resolve()) for p in folder.iterdir()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--docs", type=int, default=5, help="Documents per writer per trial.")
    args = ap.parse_args()
    lost = waited = failed = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-writers-") as tmp:
        root = Path(tmp)
        index = root / "index"
        expected: set[str] = set()
        for trial in range(args.trials):
            sets = {w: docs(root / f"{w}{trial}", f"{w}{trial}x", args.docs) for w in "ab"}
            procs = [
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "ragsieve.cli",
                        "index",
                        str(root / f"{w}{trial}"),
                        "--index",
                        str(index),
                        "--embedder",
                        EMBEDDER,
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for w in sets
            ]
            for p in procs:
                _, err = p.communicate(timeout=600)
                failed += p.returncode != 0
                waited += "waiting up to" in err
            expected |= sets["a"] | sets["b"]
            have = set(Index.open(index).document_hashes())
            lost += len(expected - have)
            print(
                f"trial {trial}: {len(have)} documents, {len(expected - have)} lost",
                file=sys.stderr,
            )
    secs = time.perf_counter() - t0
    print("| trials | writers per trial | documents per writer | failed | waited | lost |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.trials} | 2 | {args.docs} | {failed} | {waited} | {lost} |")
    print(f"\n{args.trials} trials in {secs:.0f} s")


if __name__ == "__main__":
    main()
