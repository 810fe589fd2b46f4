"""What a method spec may set over HTTP: deny by default, every allowed option bounded.

A spec from a remote client (``"method": "full[unit=passage]"``) reaches the same parser as the
CLI's, whose options can name models and folders (``tagger_model``, ``agent_dir``, ``model``,
a scorer path, an ``llm`` endpoint) and take any number (``naive[k=100000]``). Over HTTP only
the options listed here are accepted, each within the same limits as the request fields
(``k`` at most ``MAX_K``, a budget at most ``MAX_BUDGET``) or a small cap of its own; anything
else is a 400 naming the option. Which *models* a request may load is decided from the
resolved config, defaults included (``sage`` loads the ensemble even when no ``reranker=`` is
given): :class:`ragsieve.serve.gate.ModelGate` against ``serve --rerankers``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ragsieve.errors import ConfigError
from ragsieve.tag.settings import HOPS, MIN_KEEP_MIN, THRESHOLD_MAX

#: Most results / chunks a request may ask for (``k`` of the request body too).
MAX_K = 100
#: Largest context budget in tokens.
MAX_BUDGET = 100_000
#: Most candidates a method may rerank or search over for one request.
MAX_CANDIDATES = 200
#: Longest SAGE feedback reply, in tokens (the default is 48).
MAX_FEEDBACK_TOKENS = 256


@dataclass(frozen=True)
class Bound:
    """An allowed option: a number in ``[lo, hi]``, a bool, or one of ``choices``."""

    kind: str  # "int", "float", "bool", "choice", "reranker"
    lo: float = 0
    hi: float = 0
    choices: tuple[str, ...] = ()


def _int(lo: int, hi: int) -> Bound:
    return Bound("int", lo, hi)


def _float(lo: float, hi: float) -> Bound:
    return Bound("float", lo, hi)


BOOL = Bound("bool")
RERANKER = Bound("reranker")
RETRIEVER = Bound("choice", choices=("dense", "bm25", "hybrid"))

#: Options every method may take (under the config's field names, aliases resolved).
COMMON: dict[str, Bound] = {
    "k": _int(1, MAX_K),
    "budget": _int(1, MAX_BUDGET),
    "retriever": RETRIEVER,
    "reranker": RERANKER,
}
_SAGE: dict[str, Bound] = {
    "N": _int(1, MAX_CANDIDATES),
    "min_k": _int(1, MAX_K),
    "g": _float(0.0, 10.0),
    "fs": _int(1, MAX_K),
    "max_rounds": _int(0, 5),
    "feedback": BOOL,
    "selection": Bound("choice", choices=("gradient", "top-k")),
    "feedback_step": Bound("choice", choices=("context", "min_k")),
    "feedback_max_tokens": _int(1, MAX_FEEDBACK_TOKENS),
}
#: The tagger's settings, within the bounds :class:`~ragsieve.tag.settings.TaggerSettings`
#: checks (which then refuses what its own check refuses, such as a threshold of 0).
_TAGGER_COMMON: dict[str, Bound] = {
    "threshold": _float(0.0, THRESHOLD_MAX),
    "passage_threshold": _float(0.0, THRESHOLD_MAX),
    "stack": BOOL,
    "open_point": BOOL,
    "hops": _int(HOPS[0], HOPS[-1]),
    "unit": Bound("choice", choices=("sentence", "passage")),
}
#: Per method: the options it may take over HTTP beyond :data:`COMMON`. Not listed (so
#: refused): ``carrot.agent_dir``, ``saki.llm``, ``full.tagger_model``, ``tagger.model`` and any
#: option a method gains later until it is declared here.
SAFE: dict[str, dict[str, Bound]] = {
    "naive": {"candidates": _int(1, MAX_CANDIDATES)},
    "sage": _SAGE,
    "carrot": {
        "N": _int(1, 20),
        "iterations": _int(1, 200),
        "c": _float(0.0, 100.0),
        "lambda_": _float(0.0, 10.0),
        "agent": BOOL,
        "search": Bound("choice", choices=("mcts", "upper", "beam")),
        "beam_width": _int(1, 20),
        "seed": _int(0, 2**31 - 1),
        "combination_cosine": Bound("choice", choices=("exact", "int8", "pooled")),
    },
    "saki": {
        "links": _int(0, 20),
        "judge": Bound("choice", choices=("cross-encoder", "llm", "none")),
        "threshold": _float(0.0, 1.0),
        "per_chunk": _int(1, 20),
    },
    "pareto": {
        "alpha": _float(0.0, 1.0),
        "context": Bound("choice", choices=("late", "exact", "mean")),
        "depth": _int(1, 1000),
    },
    "full": {
        **_SAGE,
        **_TAGGER_COMMON,
        "pareto": BOOL,
        "chunks": _int(0, 20),
        "expand": _int(0, 5),
        "links": _int(0, 20),
        "title": BOOL,
        "order": Bound("choice", choices=("source", "mcts")),
        "mcts_n": _int(1, 20),
        "floor": _float(0.0, 1.0),
        "passage_cut": BOOL,
        "scorer": Bound("reranker", choices=("tagger", "reranker")),
    },
    "tagger": {**_TAGGER_COMMON, "min_keep": _int(MIN_KEEP_MIN, MAX_K)},
}


def _number(key: str, value: Any, b: Bound) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"option {key} must be a number over HTTP, got {value!r}")
    if b.kind == "int" and not isinstance(value, int):
        raise ConfigError(f"option {key} must be a whole number, got {value!r}")
    if not math.isfinite(value) or not b.lo <= value <= b.hi:
        lo, hi = (int(b.lo), int(b.hi)) if b.kind == "int" else (b.lo, b.hi)
        raise ConfigError(f"option {key} must be between {lo} and {hi} over HTTP, got {value!r}")


def check_http_options(
    method: str,
    options: Mapping[str, Any],
    check_reranker: Callable[[str], None] | None = None,
) -> None:
    """Refuse (:class:`ConfigError`, a 400) any option of a client's spec for ``method`` that is
    not declared safe for the network or is outside its bound. ``options`` use the config's
    field names; ``check_reranker``, if given, applies an allow-list to a named reranker (the
    server checks every model of the resolved config instead, defaults included:
    :func:`ragsieve.methods.models.models_of`)."""
    allowed = {**COMMON, **SAFE.get(method, {})}
    for key, value in options.items():
        b = allowed.get(key)
        if b is None:
            raise ConfigError(
                f"option {key} cannot be set over HTTP ({method} takes "
                f"{', '.join(sorted(allowed))} there)"
            )
        if value is None:
            continue  # the method's default
        if b.kind in ("int", "float"):
            _number(key, value, b)
        elif b.kind == "bool":
            if not isinstance(value, bool):
                raise ConfigError(f"option {key} must be true or false, got {value!r}")
        elif not isinstance(value, str):
            raise ConfigError(f"option {key} must be a name, got {value!r}")
        elif b.kind == "choice":
            if value not in b.choices:
                raise ConfigError(f"option {key} must be one of {', '.join(b.choices)}")
        elif value not in b.choices and check_reranker is not None:  # a reranker's name
            check_reranker(value)
