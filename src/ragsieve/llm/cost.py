"""Inference cost (SAGE's Eq. 1), cost efficiency (SAGE's Eq. 2) and latency percentiles.

SAGE (Sec. II-B) prices an LLM call by its input and output tokens::

    Cost = I_t * c_i + O_t * c_o                                  (Eq. 1)

with the example prices "GPT-4 might charge 10 dollars for every one million input tokens and 30
dollars for the same quantity of output tokens"; those are the defaults here because they are the
only prices the paper states. Its experiments use GPT-4o-mini (Table XI) but report only *relative*
cost efficiency, where prices cancel. ``PRICES`` adds GPT-4o-mini's list price at release
($0.15 / $0.60 per 1M tokens, OpenAI's announcement, not the paper) for convenience.

An answer is charged at the prices its caller gives. A price not given is 0 for a local model
(``local``, ``local:PATH``, ``qwen-0.5b``, ``qwen-1.5b``, any in-process llama.cpp model: it
costs nothing, so ``Answer.cost`` is 0 and no cost is shown) and SAGE's example price for any other
(:func:`answer_prices`). The benchmark runner always gives prices (``eval --price-in``).

Cost efficiency (Eq. 2) is ``quality / cost`` with quality any answer metric (accuracy, F1,
BLEU-1). SAGE computes it on dataset totals; :func:`cost_efficiency` takes whatever pair it is
given, and the runner passes mean quality and mean cost per question, which differs from SAGE's
quality / total cost only by the constant number of questions, so relative values (SAGE's Table
XI) are the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np

DEFAULT_PRICE_IN_PER_M = 10.0
DEFAULT_PRICE_OUT_PER_M = 30.0

PRICES: dict[str, tuple[float, float]] = {
    # name: (dollars per 1M input tokens, dollars per 1M output tokens)
    "gpt-4-sage": (10.0, 30.0),  # SAGE Sec. II-B, the defaults
    "gpt-4o-mini": (0.15, 0.60),  # OpenAI list price at release (July 2024), not from the paper
    "local": (0.0, 0.0),  # a local model: cost efficiency is undefined
}


#: The ``get_llm`` specs of in-process models (``local:PATH`` too): they cost nothing.
LOCAL_SPECS = ("local", "qwen-0.5b", "qwen-1.5b")
#: The module of the in-process backend (llama.cpp); any model it runs is local.
LOCAL_BACKEND = "ragsieve.llm.local"


def is_local_llm(llm: object) -> bool:
    """Whether ``llm`` (an LLM object or a spec string) runs in this process, at no cost: the
    llama.cpp backend, or a spec ``local``, ``local:PATH``, ``qwen-0.5b`` or ``qwen-1.5b``."""
    if type(llm).__module__ == LOCAL_BACKEND:
        return True
    name = llm if isinstance(llm, str) else getattr(llm, "name", "")
    return isinstance(name, str) and (name in LOCAL_SPECS or name.startswith("local:"))


class Prices(NamedTuple):
    """What an answer is charged, dollars per 1M input and output tokens (None: the default
    of :func:`answer_prices`)."""

    in_per_m: float | None = None
    out_per_m: float | None = None


def answer_prices(
    llm: object, price_in_per_m: float | None = None, price_out_per_m: float | None = None
) -> tuple[float, float]:
    """The prices (dollars per 1M input and output tokens) an answer of ``llm`` is charged at:
    each one given, else 0 for a local model (:func:`is_local_llm`: no cost to report) and
    SAGE's example prices for any other."""
    local = is_local_llm(llm)
    if price_in_per_m is None:
        price_in_per_m = 0.0 if local else DEFAULT_PRICE_IN_PER_M
    if price_out_per_m is None:
        price_out_per_m = 0.0 if local else DEFAULT_PRICE_OUT_PER_M
    return price_in_per_m, price_out_per_m


def llm_cost(
    input_tokens: float,
    output_tokens: float,
    price_in_per_m: float = DEFAULT_PRICE_IN_PER_M,
    price_out_per_m: float = DEFAULT_PRICE_OUT_PER_M,
) -> float:
    """Dollars for one or more LLM calls, SAGE Eq. 1: ``I_t * c_i + O_t * c_o`` with the prices
    given per million tokens (``c = price_per_m / 1e6``)."""
    if input_tokens < 0 or output_tokens < 0:
        raise ValueError("token counts must be >= 0")
    if price_in_per_m < 0 or price_out_per_m < 0:
        raise ValueError("prices must be >= 0")
    return input_tokens * price_in_per_m / 1e6 + output_tokens * price_out_per_m / 1e6


def cost_efficiency(quality: float, cost: float) -> float | None:
    """SAGE Eq. 2: quality per dollar, ``quality / cost``. ``None`` when the cost is zero (a local
    model): the ratio is undefined, and an infinity would break JSON reports."""
    if cost < 0:
        raise ValueError("cost must be >= 0")
    if cost == 0:
        return None
    return quality / cost


def relative_cost_efficiency(
    efficiencies: Mapping[str, float | None], reference: str
) -> dict[str, float | None]:
    """Each method's cost efficiency divided by ``reference``'s, as SAGE's Table XI reports it
    (SAGE = 1.0). Prices cancel, so this is comparable across price settings."""
    ref = efficiencies.get(reference)
    if ref is None or ref == 0:
        raise ValueError(f"reference {reference!r} has no positive cost efficiency")
    return {k: (None if v is None else v / ref) for k, v in efficiencies.items()}


def latency_summary(timings: Iterable[Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Per-stage latency percentiles over many questions: ``{stage: {p50, p95, mean, n}}``.

    ``timings`` are per-question ``{stage: seconds}`` dicts (``Answer.timings``). A stage missing
    from some questions (a stage that only some methods run) is summarised over the questions that
    have it. Percentiles use linear interpolation between order statistics (numpy's default).
    """
    by_stage: dict[str, list[float]] = {}
    for row in timings:
        for stage, seconds in row.items():
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
                continue
            by_stage.setdefault(stage, []).append(float(seconds))
    out: dict[str, dict[str, float]] = {}
    for stage, values in by_stage.items():
        arr = np.asarray(values, dtype=float)
        out[stage] = {
            "p50": float(np.percentile(arr, 50)),
            "p95": float(np.percentile(arr, 95)),
            "mean": float(arr.mean()),
            "n": float(arr.size),
        }
    return out
