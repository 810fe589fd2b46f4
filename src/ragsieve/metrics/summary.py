"""Averages of per-question metrics over a dataset (:func:`aggregate`), as SAKI-RAG reports
them."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragsieve.metrics.context import KS

__all__ = ["aggregate"]


_AT_K = re.compile(r"^(recall|precision|ie)@(\d+)$")


def _numeric(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and value == value:  # NaN != NaN
        return float(value)
    return None


def aggregate(per_question: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Average every numeric metric over the questions where it is not ``None``.

    Returned keys: ``n`` (questions); each metric's mean; ``n_<metric>`` where fewer questions
    than ``n`` had that metric; and, following SAKI-RAG's reporting:

    * ``ie`` and ``ie@k`` are recomputed at dataset level as mean(recall) x mean(precision), which
      is how SAKI-RAG's tables are built (e.g. Dragonball Top-1: 22.14% x 74.84% = 16.57%); the
      per-question mean of the product is kept as ``ie_pq`` / ``ie@k_pq``;
    * ``recall@sum``, ``precision@sum``, ``ie@sum``: Metric@1 + Metric@3 + Metric@5 (Formula 9),
      in [0, 3] (SAKI prints percentages, i.e. x100).

    Non-numeric values (ids, texts, nested dicts such as timings) are ignored.
    """
    n = len(per_question)
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for row in per_question:
        for key, value in row.items():
            x = _numeric(value)
            if x is None:
                continue
            sums[key] = sums.get(key, 0.0) + x
            counts[key] = counts.get(key, 0) + 1
    out: dict[str, float] = {"n": float(n)}
    for key in sums:
        out[key] = sums[key] / counts[key]
    for key, c in counts.items():
        if c < n:
            out[f"n_{key}"] = float(c)

    if "evidence_recall" in out and "evidence_precision" in out:
        if "ie" in out:
            out["ie_pq"] = out["ie"]
        out["ie"] = out["evidence_recall"] * out["evidence_precision"]
    ks = sorted({int(m.group(2)) for key in out if (m := _AT_K.match(key))})
    for k in ks:
        r, p = out.get(f"recall@{k}"), out.get(f"precision@{k}")
        if r is not None and p is not None:
            if f"ie@{k}" in out:
                out[f"ie@{k}_pq"] = out[f"ie@{k}"]
            out[f"ie@{k}"] = r * p
    if ks:
        for metric in ("recall", "precision", "ie"):
            present = [out[f"{metric}@{k}"] for k in KS if f"{metric}@{k}" in out]
            if len(present) == len(KS):
                out[f"{metric}@sum"] = sum(present)
    return out
