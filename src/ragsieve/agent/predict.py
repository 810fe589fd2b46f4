"""Per-query configuration from the trained agent (the "CARROT" row vs "w/o agent")."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.agent.features import agent_features
from ragsieve.agent.model import SCORERS, AgentModel


@dataclass(frozen=True)
class AgentConfig:
    """A predicted configuration: scorer, iterations, ``c``, ``lambda_`` (+ class confidence)."""

    reranker: str
    iterations: int
    c: float
    lambda_: float
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


class ConfigAgent:
    """Loads the agent once; :meth:`predict` maps (query, retrieved chunks) to a config."""

    def __init__(self, model: AgentModel, embedder: str = "minilm") -> None:
        self.model = model
        self.embedder = model.meta.get("embedder", embedder)

    @classmethod
    def load(cls, path: str | Path | None = None, embedder: str = "minilm") -> ConfigAgent:
        return cls(AgentModel.load(path), embedder)

    def predict(self, query: str, chunk_texts: list[str]) -> AgentConfig:
        x = agent_features(query, chunk_texts, self.embedder)
        probs, params = self.model.predict(x)
        k = int(np.argmax(probs[0]))
        it, c, lam = (float(v) for v in params[0])
        return AgentConfig(SCORERS[k], max(1, round(it)), c, lam, float(probs[0, k]))
