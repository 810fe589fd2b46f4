"""SAGE's segmentation model (Section IV-B): sentence embedder + MLP on [x1, x2, x1-x2, x1*x2].

The embedder is the packaged all-MiniLM-L6-v2 in its int8 ONNX build (``minilm-onnx``): the
same model as the default embedder with cosines equal to three decimals, about five times
faster on CPU, which matters because segmentation embeds every sentence of the corpus. It is
frozen by default (the head alone is trained; ``--finetune-embedder`` in ``train-segmenter``
trains both, as Algorithm 1 does, at a much higher cost).

The head is stored as a small ``.npz`` (weights of each linear layer) and runs in numpy, so
inference needs neither torch nor a GPU: scoring all pairs of a corpus is a few matrix
products over one big batch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.numeric import sigmoid

#: The feature sets of Table X, by name.
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "x1,x2": ("x1", "x2"),
    "x1,x2,diff": ("x1", "x2", "diff"),
    "x1,x2,prod": ("x1", "x2", "prod"),
    "all": ("x1", "x2", "diff", "prod"),
}
SEGMENTER_EMBEDDER = "minilm-onnx"


def shipped_segmenter_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "models" / "segmenter"


def pair_features(x1: np.ndarray, x2: np.ndarray, features: tuple[str, ...]) -> np.ndarray:
    """Concatenate the chosen features of sentence-vector pairs (rows of ``x1``, ``x2``)."""
    parts = {"x1": x1, "x2": x2}
    if "diff" in features:
        parts["diff"] = x1 - x2
    if "prod" in features:
        parts["prod"] = x1 * x2
    return np.concatenate([parts[f] for f in features], axis=1).astype(np.float32)


@dataclass(frozen=True)
class SegmenterHead:
    """ReLU MLP with a sigmoid output: P(two adjacent sentences belong to one chunk)."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    features: tuple[str, ...]
    embedder: str = SEGMENTER_EMBEDDER

    def score_features(self, x: np.ndarray, batch: int = 8192) -> np.ndarray:
        out = np.zeros(len(x), dtype=np.float32)
        for s in range(0, len(x), batch):
            h = x[s : s + batch]
            for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
                h = h @ w + b
                if i < len(self.weights) - 1:
                    h = np.maximum(h, 0.0)
            out[s : s + batch] = sigmoid(h[:, 0])
        return out

    def score(self, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
        """Scores of pairs (row i of ``x1`` with row i of ``x2``), in [0, 1]."""
        if len(x1) == 0:
            return np.zeros(0, dtype=np.float32)
        return self.score_features(pair_features(x1, x2, self.features))

    def save(self, folder: Path, meta: dict | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        arrays = {f"w{i}": w for i, w in enumerate(self.weights)}
        arrays.update({f"b{i}": b for i, b in enumerate(self.biases)})
        np.savez(folder / "head.npz", **arrays)
        cfg = {"features": list(self.features), "embedder": self.embedder, **(meta or {})}
        (folder / "segmenter_config.json").write_text(json.dumps(cfg, indent=2) + "\n")

    @classmethod
    def load(cls, folder: Path | None = None) -> SegmenterHead:
        folder = folder or shipped_segmenter_dir()
        head, cfg = folder / "head.npz", folder / "segmenter_config.json"
        if not head.is_file() or not cfg.is_file():
            raise ConfigError(
                f"segmentation model missing in {folder}: reinstall ragsieve or run "
                "`ragsieve train-segmenter --out DIR`"
            )
        meta = json.loads(cfg.read_text(encoding="utf-8"))
        embedder = meta.get("embedder", SEGMENTER_EMBEDDER)
        if (folder / embedder).is_dir():  # a fine-tuned embedder saved beside the head
            embedder = str(folder / embedder)
        z = np.load(head)
        n = len([k for k in z.files if k.startswith("w")])
        return cls(
            tuple(z[f"w{i}"].astype(np.float32) for i in range(n)),
            tuple(z[f"b{i}"].astype(np.float32) for i in range(n)),
            tuple(meta["features"]),
            embedder,
        )


@lru_cache(maxsize=4)
def load_head(folder: str | None = None) -> SegmenterHead:
    """The shipped head (or one in ``folder``), loaded once per process."""
    return SegmenterHead.load(Path(folder) if folder else None)


def build_mlp(dims: list[int]) -> Any:
    """The head's torch MLP: Linear layers of ``dims`` with ReLU between (sigmoid applied by the
    loss and by :class:`SegmenterHead`)."""
    import torch

    layers: list[Any] = []
    for i in range(len(dims) - 1):
        layers.append(torch.nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def head_from_mlp(
    mlp: Any, features: tuple[str, ...], embedder: str = SEGMENTER_EMBEDDER
) -> SegmenterHead:
    """The numpy :class:`SegmenterHead` of a trained :func:`build_mlp` network (on any device)."""
    import torch

    lin = [m for m in mlp if isinstance(m, torch.nn.Linear)]
    return SegmenterHead(
        tuple(m.weight.detach().cpu().numpy().T.copy() for m in lin),
        tuple(m.bias.detach().cpu().numpy().copy() for m in lin),
        features,
        embedder,
    )
