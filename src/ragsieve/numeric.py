"""Numerics every scorer shares: the logistic function without overflow.

``1 / (1 + exp(-x))`` overflows ``exp`` for ``x`` below about -709 and numpy says so on stderr
("overflow encountered in exp"): a prune over 10,000 passages reached such logits. Here each
side of zero takes the form whose ``exp`` stays at most 1, so no finite input warns, and the
values are those of the plain form (to the last bit for ``x >= 0``).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def sigmoid(x: Any) -> np.ndarray:
    """The logistic function of ``x`` (any shape; float64), without overflow."""
    x = np.asarray(x, dtype=np.float64)
    flat = np.atleast_1d(x)
    out = np.empty_like(flat)
    pos = flat >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-flat[pos]))
    e = np.exp(flat[~pos])
    out[~pos] = e / (1.0 + e)
    return out.reshape(x.shape)


def softmax(x: Any, axis: int = -1) -> np.ndarray:
    """Softmax of ``x`` along ``axis``, shifted by its maximum so that ``exp`` cannot overflow."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
