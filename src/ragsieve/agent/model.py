"""The agent network (Sec. VI-A (2)) for numpy inference, and its on-disk format.

Encoder ``f``: Linear(2d, 512) -> ReLU -> Linear(512, 256) -> ReLU -> Linear(256, 128) (shared by
both Siamese branches; at inference there is one branch). Heads on the 128-d feature map: ``g``,
a linear classifier over :data:`SCORERS`; ``h``, a linear regression of the three MCTS
hyper-parameters, each squashed by a sigmoid into ``[0, 1]`` and scaled to its grid range
(:data:`PARAM_RANGES`), so that a prediction always lies inside the range that was searched.

Files: ``agent.npz`` (weights, float32) and ``agent.json`` (dimensions, classes, ranges and how
it was trained).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.numeric import sigmoid, softmax

#: Scorer classes, in label order.
SCORERS = ("ensemble", "cross-encoder", "bi-encoder", "bm25")
#: Regression targets and the (low, high) of the grid they were searched over.
PARAMS = ("iterations", "c", "lambda_")
PARAM_RANGES = {"iterations": (5.0, 50.0), "c": (1.0, 4.0), "lambda_": (0.0, 1.0)}
LAYERS = ("enc0", "enc1", "enc2", "cls", "reg")
WEIGHTS_FILE = "agent.npz"
META_FILE = "agent.json"


def shipped_agent_dir() -> Path:
    return Path(str(resources.files("ragsieve") / "models" / "agent"))


def scale_params(unit: np.ndarray) -> np.ndarray:
    """``[0, 1]`` -> grid range, per column of :data:`PARAMS`."""
    lo = np.asarray([PARAM_RANGES[p][0] for p in PARAMS])
    hi = np.asarray([PARAM_RANGES[p][1] for p in PARAMS])
    return lo + np.asarray(unit) * (hi - lo)


def unit_params(values: np.ndarray) -> np.ndarray:
    """Grid range -> ``[0, 1]`` (the regression target)."""
    lo = np.asarray([PARAM_RANGES[p][0] for p in PARAMS])
    hi = np.asarray([PARAM_RANGES[p][1] for p in PARAMS])
    return (np.asarray(values, dtype=np.float64) - lo) / (hi - lo)


@dataclass
class AgentModel:
    """Weights ``{layer: (W, b)}`` with ``W`` shaped (in, out)."""

    weights: dict[str, tuple[np.ndarray, np.ndarray]]
    meta: dict[str, Any]

    def encode(self, x: np.ndarray) -> np.ndarray:
        h = np.atleast_2d(np.asarray(x, dtype=np.float32))
        for i, name in enumerate(("enc0", "enc1", "enc2")):
            w, b = self.weights[name]
            h = h @ w + b
            if i < 2:
                h = np.maximum(h, 0.0)
        return h

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class probabilities (n, len(SCORERS)) and hyper-parameters in grid units (n, 3)."""
        z = self.encode(x)
        w, b = self.weights["cls"]
        logits = z @ w + b
        probs = softmax(logits, axis=1)
        w, b = self.weights["reg"]
        unit = sigmoid(z @ w + b)
        return probs, scale_params(unit)

    def save(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        arrays = {}
        for name, (w, b) in self.weights.items():
            arrays[f"{name}.W"] = w.astype(np.float32)
            arrays[f"{name}.b"] = b.astype(np.float32)
        np.savez_compressed(out / WEIGHTS_FILE, **arrays)
        (out / META_FILE).write_text(json.dumps(self.meta, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path | None = None) -> AgentModel:
        folder = Path(path) if path is not None else shipped_agent_dir()
        wfile, mfile = folder / WEIGHTS_FILE, folder / META_FILE
        if not wfile.is_file() or not mfile.is_file():
            raise ConfigError(
                f"no configuration agent in {folder} (expected {WEIGHTS_FILE} and {META_FILE}): "
                "run `ragsieve train-agent --out DIR`"
            )
        meta = json.loads(mfile.read_text(encoding="utf-8"))
        with np.load(wfile) as z:
            weights = {n: (z[f"{n}.W"], z[f"{n}.b"]) for n in LAYERS}
        if tuple(meta.get("scorers", ())) != SCORERS:
            raise ConfigError(f"agent in {folder} was trained for other scorers")
        return cls(weights, meta)
