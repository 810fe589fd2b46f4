"""Piped progress: a line per stage as it starts and ends, and one at least every ``every``
seconds while it runs even when no callback arrives (the heartbeat); the real CLI with its
stderr piped on a stage whose single unit of work is long (one big HTML page)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from pathlib import Path

from ragsieve.progress import PipedProgress


def _lines(every: float, script: list[tuple[str, int, int, float]]) -> list[tuple[float, str]]:
    """Drive a PipedProgress through ``script`` (stage, done, total, then sleep) and return the
    lines it wrote with their times."""
    out: list[tuple[float, str]] = []
    t0 = time.monotonic()
    lock = threading.Lock()

    def write(line: str) -> None:
        with lock:
            out.append((time.monotonic() - t0, line))

    with PipedProgress(every=every, write=write) as prog:
        for stage, done, total, pause in script:
            prog(stage, done, total)
            time.sleep(pause)
    return out


def test_a_silent_stage_still_prints_every_interval() -> None:
    lines = _lines(0.5, [("embed chunks", 0, 10, 2.6), ("embed chunks", 10, 10, 0.0)])
    texts = [t for _, t in lines]
    assert texts[0] == "embed chunks: 0/10" and texts[-1].startswith("embed chunks: 10/10 done")
    beats = [t for t in texts if t.startswith("embed chunks: 0/10 (")]
    assert len(beats) >= 3, texts
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(lines)]
    assert max(gaps) < 0.5 + 0.5, lines  # the interval plus one heartbeat tick


def test_a_finished_stage_goes_quiet_and_a_quiet_stage_starts_late() -> None:
    lines = _lines(
        0.4,
        [("a", 0, 1, 0.0), ("a", 1, 1, 1.2), ("read files", 0, 2, 0.05), ("read files", 2, 2, 0)],
    )
    texts = [t for _, t in lines]
    # nothing between a's end and the next stage; a fast read says nothing at all
    assert texts[:2] == ["a: 0/1", texts[1]] and texts[1].startswith("a: 1/1 done in")
    assert len(texts) == 2, texts
    slow = [t for _, t in _lines(0.4, [("read files", 0, 1, 0.9), ("read files", 1, 1, 0)])]
    assert slow[0].startswith("read files: 0/1 (") and slow[-1].startswith("read files: 1/1 done")


def test_the_cli_piped_reports_at_least_every_12_seconds(tmp_path: Path) -> None:
    """A 1.1 MB HTML page (15,000 paragraphs): reading, chunking and embedding its ~1,100
    chunks take a while on 2 cores; no gap between stderr lines may pass 12 s."""
    words = [
        "harbour",
        "lighthouse",
        "stone",
        "river",
        "budget",
        "report",
        "signal",
        "keeper",
        "tide",
        "north",
    ]
    paras = "".join(
        f"<p>{' '.join(words[(i + j) % 10] for j in range(9))} {i}.</p>\n" for i in range(15_000)
    )
    page = tmp_path / "big.html"
    page.write_text(
        f"<html><head><title>Big</title></head><body><article>{paras}</article></body></html>"
    )
    t0 = time.monotonic()
    p = subprocess.Popen(
        [sys.executable, "-m", "ragsieve.cli", "index", str(page), "--index", str(tmp_path / "i")],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stderr is not None
    stamps: list[tuple[float, str]] = []
    for line in p.stderr:
        stamps.append((time.monotonic() - t0, line.rstrip()))
    assert p.wait(timeout=300) == 0, stamps
    end = time.monotonic() - t0
    times = [0.0, *(t for t, _ in stamps), end]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # the first gap holds the interpreter start and the imports, before any stage
    assert max(gaps[1:-1]) <= 12.0, stamps
    stages = {line.split(":")[0] for _, line in stamps}
    assert {"chunk documents", "embed chunks"} <= stages, stamps  # reading: only if > 2 s
    assert any("embed chunks" in line and "done in" in line for _, line in stamps), stamps
