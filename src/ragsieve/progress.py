"""Progress as plain lines, for a stderr that is piped or a file (a CI log, ``2> log``).

One line when a stage starts, one when it ends (``embed chunks: 549/549 done in 41.0s``), and
while a stage runs, one at least every :data:`EVERY_S` seconds, even when no callback arrives
meanwhile: a heartbeat thread re-prints the running stage's state, so a stage whose unit of
work is long (one huge HTML page to read, a slice of 256 chunks to embed) is never silent.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType

#: A progress callback, ``(stage, done, total)``: what ``ragsieve index``, a method's stages
#: and an evaluation report to, and what :class:`PipedProgress` and the CLI's bars print.
Progress = Callable[[str, int, int], None]

#: A line at least this often while a stage runs (seconds).
EVERY_S = 10.0
#: A quiet stage (reading the input files) prints nothing unless it runs this long (then its
#: state, the heartbeat and its end, like any stage): a quick read stays silent, as it always
#: was, and a file named on the command line that cannot be read stays one ``error:`` line.
QUIET_START_S = 2.0


@contextmanager
def reported(progress: Progress | None, stage: str) -> Iterator[None]:
    """Report ``stage`` as started (0/1) and, once the block ends, done (1/1): a long step (a
    reranker pass, an LLM call, a batch of sentence vectors) is never silent. Nothing without a
    callback."""
    if progress is None:
        yield
        return
    progress(stage, 0, 1)
    try:
        yield
    finally:
        progress(stage, 1, 1)


def _stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class PipedProgress:
    """A ``progress(stage, done, total)`` callback that prints lines, and the context manager
    that runs its heartbeat (``with prog: ... prog("embed chunks", 0, 549)``)."""

    def __init__(
        self,
        every: float = EVERY_S,
        write: Callable[[str], None] = _stderr_line,
        quiet: tuple[str, ...] | bool = ("read files",),
        quiet_start: float = QUIET_START_S,
    ) -> None:
        self.every = every
        self.quiet_start = quiet_start  # a quiet stage speaks once it has run this long
        self.quiet = quiet  # True: every stage is quiet (a method's stages in ``ask``)
        self._write = write
        self._lock = threading.Lock()
        self._started: dict[str, float] = {}
        self._last: dict[str, float] = {}  # when the stage last printed; -1: its end printed
        self._state: dict[str, tuple[int, int]] = {}
        self._running: str | None = None  # the stage the heartbeat speaks for
        self._spoke: set[str] = set()  # the stages that printed a line
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        with self._lock:
            now = time.monotonic()
            self._state[stage] = (done, total)
            if stage not in self._started:
                self._started[stage] = self._last[stage] = now
                if done < total:
                    self._running = stage
                    if self._quiet(stage):  # the heartbeat announces it after QUIET_START_S
                        self._last[stage] = now - self.every + min(self.quiet_start, self.every)
                    else:
                        self._write(f"{stage}: {done}/{total}")
                        self._spoke.add(stage)
                    return
            if done >= total:
                if self._last.get(stage) != -1.0 and (
                    not self._quiet(stage) or stage in self._spoke
                ):
                    self._write(
                        f"{stage}: {done}/{total} done in {now - self._started[stage]:.1f}s"
                    )
                    self._last[stage] = -1.0  # a later call with the same total stays quiet
                if self._running == stage:
                    self._running = None
                return
            self._running = stage
            if now - self._last[stage] >= self.every:
                self._print_state(stage, now)

    def _quiet(self, stage: str) -> bool:
        return self.quiet if isinstance(self.quiet, bool) else stage in self.quiet

    def _print_state(self, stage: str, now: float) -> None:
        done, total = self._state[stage]
        self._write(f"{stage}: {done}/{total} ({now - self._started[stage]:.0f}s)")
        self._last[stage] = now
        self._spoke.add(stage)

    def _beat(self) -> None:
        while not self._stop.wait(min(1.0, self.every / 4)):
            with self._lock:
                stage, now = self._running, time.monotonic()
                if stage is not None and now - max(self._last[stage], 0.0) >= self.every:
                    self._print_state(stage, now)

    def __enter__(self) -> PipedProgress:
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat, name="progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
