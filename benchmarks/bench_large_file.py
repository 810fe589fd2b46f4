"""Large single files: time and peak memory of ``ragsieve index`` grow in proportion to size.

Writes synthetic text files of several sizes and three shapes, then indexes each with the CLI in
its own process (the default ``fixed`` chunker and embedder) and reads that process's peak RSS
from ``os.wait4``. Shapes:

* ``lines``: ordinary prose, one sentence per line;
* ``one-line``: the same prose on a single line (no newline at all);
* ``no-punct``: one line of words with no sentence end (every chunk is a cut of a run-on
  sentence), the case that used to be quadratic.

Each row also times segmentation alone (in this process) to separate it from embedding. The
ratio columns divide seconds and megabytes per MB of input by the smallest size's: near 1.0
means linear time and bounded memory.

    .venv/bin/python -m benchmarks bench_large_file --sizes 0.5,1,2
    .venv/bin/python -m benchmarks bench_large_file --sizes 20 --shapes no-punct
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from common import run_measured

from ragsieve.io import load_paths
from ragsieve.segment import get_segmenter

WORDS = (
    *("the", "river", "stone", "tower", "light", "city", "engine", "garden", "north", "old"),
    *("new", "market", "bridge", "king", "army", "letter", "scholar", "temple", "record"),
    *("museum", "script", "paper", "year", "decade", "founded", "built", "announced"),
    *("translated", "published", "studied", "discovered"),
)
SHAPES = ("lines", "one-line", "no-punct")


def make_file(path: Path, mb: float, shape: str, seed: int = 0) -> None:
    """``mb`` megabytes of synthetic text of the given shape."""
    rng = random.Random(seed)
    target = int(mb * 1_000_000)
    parts: list[str] = []
    size = 0
    sep = "\n" if shape == "lines" else " "
    while size < target:
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 24))]
        s = " ".join(words)
        s = s if shape == "no-punct" else s.capitalize() + "."
        parts.append(s)
        size += len(s) + 1
    path.write_text(sep.join(parts), encoding="utf-8")


def run_index(path: Path, index: Path) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) and exit code of ``ragsieve index PATH``."""
    cmd = [sys.executable, "-m", "ragsieve.cli", "index", str(path), "--index", str(index)]
    code, secs, rss, out = run_measured(cmd)
    if code:
        print(f"  failed: {out.strip()[-300:]}", file=sys.stderr)
    return secs, rss, code


def segment_seconds(path: Path) -> tuple[float, int]:
    docs = load_paths([path]).documents
    t0 = time.perf_counter()
    chunks = get_segmenter("fixed").segment(docs)
    return time.perf_counter() - t0, len(chunks[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="0.5,1,2", help="File sizes in MB, comma-separated.")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    sizes = [float(x) for x in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="ragsieve-large-"))
    work.mkdir(parents=True, exist_ok=True)
    print("| shape | MB | chunks | segment s | index s | peak RSS MB | s/MB | s/MB ratio | exit |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for shape in shapes:
        base: float | None = None
        for mb in sizes:
            f = work / f"{shape}-{mb}.txt"
            make_file(f, mb, shape)
            seg_s, n_chunks = segment_seconds(f)
            secs, rss, rc = run_index(f, work / f"idx-{shape}-{mb}")
            per_mb = secs / mb
            base = base or per_mb
            print(
                f"| {shape} | {mb:g} | {n_chunks} | {seg_s:.1f} | {secs:.1f} | {rss:.0f} | "
                f"{per_mb:.1f} | {per_mb / base:.2f} | {rc} |",
                flush=True,
            )
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n(this process, segmentation only: peak RSS {own:.0f} MB; files in {work})")


if __name__ == "__main__":
    main()
