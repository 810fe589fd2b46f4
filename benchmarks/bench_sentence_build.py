"""The cost of the sentence table (issue 46 item 1): plain build against ``--sentences``.

One process, one folder read once: (1) a plain index, (2) an index built with the sentence
table, (3) the sentence table added to a copy of the plain index (``Index.add_sentences``, what
``ragsieve index FOLDER --sentences`` does on an existing plain index). Prints wall and CPU
seconds per build (CPU: every thread of this process, the fairer figure on a shared machine),
their ratios to the plain build, the sentence stages' wall seconds, the longest gap between
progress calls, and with ``--profile N`` the N costliest functions of build (2) by CPU time.

Usage: nice -n 10 .venv/bin/python benchmarks/bench_sentence_build.py FOLDER [--profile 25]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    from ragsieve.index import Index, IndexConfig
    from ragsieve.io import load_paths

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", type=Path, help="files or folders to index")
    ap.add_argument("--profile", type=int, default=0, help="print the N costliest functions")
    ap.add_argument("--context", default="late", help="Pareto context form (late, exact, mean)")
    args = ap.parse_args()

    loaded = load_paths(args.paths)
    docs = loaded.documents
    cfg = IndexConfig(sentences=True, pareto_context=args.context)
    with tempfile.TemporaryDirectory() as tmp:  # load every model outside the timings
        Index.create(f"{tmp}/warm", cfg).add(docs[:1])
    heard: list[float] = []
    rows = []
    prof = cProfile.Profile(time.process_time)

    def timed(name: str, build, n_chunks=lambda r: r.n_chunks) -> None:  # type: ignore[no-untyped-def]
        heard.clear()
        w, c = time.perf_counter(), time.process_time()
        report = build()
        w, c = time.perf_counter() - w, time.process_time() - c
        heard.append(time.perf_counter())
        gap = max((b - a for a, b in itertools.pairwise(heard)), default=0.0)
        rows.append((name, w, c, n_chunks(report), report.sentences, gap))

    def tick(stage: str, done: int, total: int) -> None:
        heard.append(time.perf_counter())

    with tempfile.TemporaryDirectory() as tmp:
        plain_dir, sent_dir, added_dir = (f"{tmp}/{n}" for n in ("plain", "sent", "added"))
        timed("plain", lambda: Index.create(plain_dir).add(docs, progress=tick))
        shutil.copytree(plain_dir, added_dir)

        def with_table():  # type: ignore[no-untyped-def]
            idx = Index.create(sent_dir, cfg)
            prof.enable()
            try:
                return idx.add(docs, progress=tick)
            finally:
                prof.disable()

        timed("--sentences", with_table)
        timed("add_sentences", lambda: Index.open(added_dir).add_sentences(cfg, progress=tick))

    plain_w, plain_c = rows[0][1], rows[0][2]
    n_chars = sum(len(d.text) for d in docs)
    print(f"{len(docs)} documents, {n_chars / 1e6:.2f}M characters, context={args.context}")
    print(
        f"{'build':<14} {'wall s':>7} {'x plain':>7} {'CPU s':>7} {'x plain':>7} "
        f"{'chunks':>6} {'sentences':>9} {'max gap s':>9}"
    )
    for name, w, c, n_chunks, tm, gap in rows:
        n_sent = tm.n_sentences if tm else 0
        print(
            f"{name:<14} {w:>7.1f} {w / plain_w:>7.2f} {c:>7.1f} {c / plain_c:>7.2f} "
            f"{n_chunks:>6} {n_sent:>9} {gap:>9.1f}"
        )
    for name, *_, tm, _ in rows[1:]:
        print(
            f"{name} stages (wall): split {tm.split:.1f}s, core vectors {tm.core:.1f}s, "
            f"context {tm.context:.1f}s, links {tm.links:.1f}s"
        )
    if args.profile:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.profile)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
