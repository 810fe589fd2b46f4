"""What the per-question metrics read of a question: its gold answers, evidence and options.

A protocol, so that the metrics (a low floor) take any question that carries its gold, the
evaluation schema's :class:`~ragsieve.evaluate.schema.EvalQuestion` among them, without
importing the evaluation package above them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Gold(Protocol):
    """A question's gold, as :func:`~ragsieve.metrics.answer_metrics` and
    :func:`~ragsieve.metrics.context_metrics` read it."""

    @property
    def answers(self) -> tuple[str, ...]: ...

    @property
    def evidence(self) -> tuple[str, ...]: ...

    @property
    def options(self) -> tuple[str, ...]: ...

    @property
    def label(self) -> int | None: ...

    @property
    def meta(self) -> Mapping[str, Any]: ...

    @property
    def is_multiple_choice(self) -> bool: ...

    @property
    def answer_targets(self) -> tuple[str, ...]: ...
