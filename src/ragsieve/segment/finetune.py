"""Algorithm 1 in full: train the sentence embedder *and* the MLP head together.

The shipped segmenter keeps the embedder frozen (``minilm-onnx``) so that one embedding pass
feeds segmentation and the index alike, and only the small head is trained. SAGE's Algorithm 1
updates both ("learn the parameters of the embedding model and MLP model"); this module does
that with the packaged all-MiniLM-L6-v2 torch weights, for ``ragsieve train-segmenter
--finetune-embedder``.

Why it is opt-in: a fine-tuned embedder is a second model (90 MB of fp32 weights, too large to
ship in the package), segmentation then embeds every sentence with it as well as with the index
embedder, and on 2 CPU cores a pass over the pairs takes tens of minutes. The result is saved
as a sentence-transformers folder ``embedder/`` beside ``head.npz``; the head's config names it
by that relative path, so ``--chunker sage`` with ``RAGSIEVE_SEGMENTER=DIR`` (or
``SageSegmenter(model_dir=DIR)``) uses the pair of them.

Training choices (the paper gives none beyond MSE): a seeded sample of ``pairs`` adjacent
pairs from the training sources in their natural label mix, sentences truncated at
``max_seq`` word pieces (a sentence rarely needs more), Adam with a small learning rate for the
transformer (2e-5, the usual fine-tuning rate) and the head's 1e-3, MSE on the sigmoid score.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.embed.base import unit_vectors
from ragsieve.segment.model import FEATURE_SETS, SegmenterHead
from ragsieve.segment.pairs import PairSet
from ragsieve.training import Loop, RunOptions, Tracking, begin

#: The folder name of the fine-tuned embedder inside a segmenter folder.
EMBEDDER_DIR = "embedder"


@dataclass
class FinetuneConfig:
    """The recipe; seed, device, threads and time limit come from the harness's
    ``RunOptions``."""

    pairs: int = 20000
    epochs: int = 1
    batch_size: int = 32
    lr_embedder: float = 2e-5
    lr_head: float = 1e-3
    max_seq: int = 64
    hidden: tuple[int, ...] = (256, 64)


def _features(x1: Any, x2: Any, names: tuple[str, ...]) -> Any:
    import torch

    parts = {"x1": x1, "x2": x2, "diff": x1 - x2, "prod": x1 * x2}
    return torch.cat([parts[n] for n in names], dim=1)


def finetune(
    train: PairSet,
    cfg: FinetuneConfig,
    out: Path,
    opts: RunOptions,
    log: Callable[[str], None],
    features: tuple[str, ...] = FEATURE_SETS["all"],
) -> tuple[Any, SegmenterHead, dict[str, Any]]:
    """Jointly train MiniLM and the head on ``cfg.pairs`` sampled pairs through the harness's
    loop (resumable from ``out``); returns both and the loop's stats."""
    import torch
    from sentence_transformers import SentenceTransformer

    from ragsieve.embed.base import minilm_dir
    from ragsieve.segment.model import build_mlp, head_from_mlp

    device = begin(opts)
    model = SentenceTransformer(str(minilm_dir()), device=str(device))
    model.max_seq_length = cfg.max_seq
    dim = int(model.get_embedding_dimension() or 384)
    head = build_mlp([dim * len(features), *cfg.hidden, 1])
    opt = torch.optim.Adam(
        [
            {"params": model.parameters(), "lr": cfg.lr_embedder},
            {"params": head.parameters(), "lr": cfg.lr_head},
        ]
    )
    rng = np.random.default_rng(opts.seed)
    n = min(cfg.pairs, len(train.labels))
    sample = rng.choice(len(train.labels), size=n, replace=False)
    left = np.asarray(train.left)[sample]
    right = np.asarray(train.right)[sample]
    labels = torch.tensor(np.asarray(train.labels)[sample], dtype=torch.float32).to(device)
    orders = [rng.permutation(n) for _ in range(cfg.epochs)]
    per_epoch = -(-n // cfg.batch_size)
    # sentence-transformers 5 renamed tokenize() to preprocess(); older releases lack it.
    prep = getattr(model, "preprocess", None) or model.tokenize
    both = torch.nn.ModuleDict({"embedder": model, "head": head})
    config = {**asdict(cfg), "features": list(features), "train_pairs": len(train.labels)}
    loop = Loop(
        out, both, opt, cfg.epochs * per_epoch, opts, config, log, tracking=Tracking(log_every=50)
    )

    def loss_fn(step: int) -> Any:
        epoch, start = divmod(step, per_epoch)
        idx = orders[epoch][start * cfg.batch_size : (start + 1) * cfg.batch_size]
        texts = [train.sentences[i] for i in left[idx]] + [train.sentences[i] for i in right[idx]]
        # Tensors go to the device; sentence-transformers 6 adds a "modality" string too.
        feats = {k: v.to(device) if hasattr(v, "to") else v for k, v in prep(texts).items()}
        emb = model(feats)["sentence_embedding"]  # the model's own Normalize layer applies
        x1, x2 = emb[: len(idx)], emb[len(idx) :]
        score = torch.sigmoid(head(_features(x1, x2, features)).squeeze(1))
        return torch.nn.functional.mse_loss(score, labels[idx])

    stats = loop.run(loss_fn)
    return model, head_from_mlp(head, features, EMBEDDER_DIR), stats


def embed_with(model: Any, sentences: list[str], batch_size: int = 128) -> np.ndarray:
    """Unit vectors of ``sentences`` from a (fine-tuned) sentence-transformers model."""
    return unit_vectors(model, sentences, batch_size)


def save(model: Any, head: SegmenterHead, out: Path, meta: dict[str, Any]) -> None:
    """Write ``embedder/`` and the head (whose config names ``embedder`` relative to ``out``)."""
    model.save(str(out / EMBEDDER_DIR))
    head.save(out, meta)
