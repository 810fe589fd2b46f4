"""The trace every method records beside its answer: stage clocks, the scored candidates and
the selected context, in one JSON-ready shape (the viewer and ``--json`` read it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ragsieve.select.base import Selection
from ragsieve.types import Scored


def timed(timings: dict[str, float], stage: str) -> Callable[[], None]:
    """Start a stage clock; calling the result adds the elapsed seconds to ``timings[stage]``."""
    t0 = time.perf_counter()

    def stop() -> None:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0

    return stop


def selection_trace(sel: Selection) -> dict[str, Any]:
    """The trace keys every method records about its selected context."""
    return {
        "selection": sel.trace,
        "selected": [s.chunk.id for s in sel.context.chunks],
        "context_tokens": sel.context.n_tokens,
    }


def scored_trace(items: list[Scored], limit: int = 50) -> list[dict[str, Any]]:
    """The first ``limit`` scored candidates, scores rounded to six places."""
    return [
        {
            "chunk_id": s.chunk.id,
            "score": round(s.score, 6),
            "scores": {k: round(v, 6) for k, v in s.scores.items()},
            "tokens": s.chunk.n_tokens,
        }
        for s in items[:limit]
    ]
