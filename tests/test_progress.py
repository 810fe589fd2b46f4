"""Piped progress: a line per stage as it starts and ends, and one at least every ``every``
seconds while it runs even when no callback arrives (the heartbeat); the real CLI with its
stderr piped on a stage whose single unit of work is long (one big HTML page)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ragsieve.progress import EVERY_S, PipedProgress


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


def _until(cond: Callable[[], bool], guard: float = 60.0) -> None:
    """Wait for ``cond`` (the guard only stops a hang: no speed is asserted)."""
    deadline = time.monotonic() + guard
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.02)


class _Lines:
    """The lines a PipedProgress wrote, with the times it wrote them."""

    def __init__(self) -> None:
        self.out: list[tuple[float, str]] = []
        self._lock = threading.Lock()

    def write(self, line: str) -> None:
        with self._lock:
            self.out.append((time.monotonic(), line))

    def starting(self, prefix: str) -> list[float]:
        with self._lock:
            return [t for t, line in self.out if line.startswith(prefix)]

    @property
    def texts(self) -> list[str]:
        return [line for _, line in self.out]


def test_a_silent_stage_keeps_printing_at_its_interval() -> None:
    """No callback arrives while the stage runs: the heartbeat alone prints its state, never
    more often than the interval."""
    lines = _Lines()
    with PipedProgress(every=0.5, write=lines.write) as prog:
        prog("embed chunks", 0, 10)
        _until(lambda: len(lines.starting("embed chunks: 0/10 (")) >= 3)
        prog("embed chunks", 10, 10)
    texts = lines.texts
    assert texts[0] == "embed chunks: 0/10" and texts[-1].startswith("embed chunks: 10/10 done")
    beats = lines.starting("embed chunks: 0/10 (")
    assert len(beats) >= 3, texts
    assert all(b - a >= 0.45 for a, b in itertools.pairwise(beats)), lines.out


def test_a_finished_stage_goes_quiet_and_a_quiet_stage_starts_late() -> None:
    lines = _lines(0.4, [("a", 0, 1, 0.0), ("a", 1, 1, 1.2)])
    texts = [t for _, t in lines]
    # nothing after a's end: the heartbeat speaks only for a running stage
    assert texts[0] == "a: 0/1" and texts[1].startswith("a: 1/1 done in"), texts
    assert len(texts) == 2, texts
    # a read quicker than QUIET_START_S says nothing at all
    assert _lines(10.0, [("read files", 0, 2, 0.05), ("read files", 2, 2, 0)]) == []
    # a slow one announces itself, then ends like any stage
    slow = _Lines()
    with PipedProgress(every=0.4, write=slow.write) as prog:
        prog("read files", 0, 1)
        _until(lambda: bool(slow.out))
        prog("read files", 1, 1)
    assert slow.texts[0].startswith("read files: 0/1 ("), slow.texts
    assert slow.texts[-1].startswith("read files: 1/1 done"), slow.texts


def test_every_stage_quiet_speaks_only_once_it_has_run_quiet_start() -> None:
    """``ask``'s progress (``quiet=True``): a quick method stage, or a quick failure, prints
    nothing; one that runs past ``quiet_start`` announces itself and ends like any stage."""
    lines = _Lines()
    with PipedProgress(every=10.0, write=lines.write, quiet=True, quiet_start=10.0) as prog:
        prog("tagger: select", 0, 1)
        prog("tagger: select", 1, 1)
        prog("tagger: LLM answer", 0, 1)
    assert lines.texts == []
    slow = _Lines()
    with PipedProgress(every=0.4, write=slow.write, quiet=True, quiet_start=0.2) as prog:
        prog("sage: feedback call 1/3", 0, 1)
        _until(lambda: bool(slow.out))
        prog("sage: feedback call 1/3", 1, 1)
    assert slow.texts[0].startswith("sage: feedback call 1/3: 0/1 ("), slow.texts
    assert slow.texts[-1].startswith("sage: feedback call 1/3: 1/1 done"), slow.texts


def _durations(stamps: list[tuple[float, str]]) -> dict[str, float]:
    """``stage -> seconds`` from the ``STAGE: N/N done in 12.3s`` lines."""
    out = {}
    for _, line in stamps:
        stage, _, rest = line.partition(": ")
        if " done in " in rest and rest.endswith("s"):
            out[stage] = float(rest.rsplit(" done in ", 1)[1][:-1])
    return out


def test_the_cli_piped_reports_every_stage_and_speaks_during_a_long_one(tmp_path: Path) -> None:
    """A 1.1 MB HTML page (15,000 paragraphs): reading, chunking and embedding its ~1,100
    chunks take a while on 2 cores; each stage starts and ends on its own line, and one that
    runs past two intervals prints while it runs."""
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
    # A stage that ran for over two intervals printed between its start and its end (the
    # heartbeat, or a callback's line): how long a stage takes is the machine's business, so
    # only the stages that did run long are held to it.
    for stage, took in _durations(stamps).items():
        if took >= 2 * EVERY_S + 5:
            between = [ln for _, ln in stamps if ln.startswith(f"{stage}: ") and "(" in ln]
            assert between, (stage, took, stamps)
    stages = {line.split(":")[0] for _, line in stamps}
    assert {"chunk documents", "embed chunks"} <= stages, stamps  # reading: only if > 2 s
    assert any("embed chunks" in line and "done in" in line for _, line in stamps), stamps
