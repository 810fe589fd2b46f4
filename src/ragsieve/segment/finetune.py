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

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.segment.model import FEATURE_SETS, SegmenterHead
from ragsieve.segment.pairs import PairSet

#: The folder name of the fine-tuned embedder inside a segmenter folder.
EMBEDDER_DIR = "embedder"


@dataclass
class FinetuneConfig:
    pairs: int = 20000
    epochs: int = 1
    batch_size: int = 32
    lr_embedder: float = 2e-5
    lr_head: float = 1e-3
    max_seq: int = 64
    hidden: tuple[int, ...] = (256, 64)
    seed: int = 13
    threads: int = 2


def _features(x1: Any, x2: Any, names: tuple[str, ...]) -> Any:
    import torch

    parts = {"x1": x1, "x2": x2, "diff": x1 - x2, "prod": x1 * x2}
    return torch.cat([parts[n] for n in names], dim=1)


def finetune(
    train: PairSet,
    cfg: FinetuneConfig,
    log: Callable[[str], None],
    features: tuple[str, ...] = FEATURE_SETS["all"],
) -> tuple[Any, SegmenterHead]:
    """Jointly train MiniLM and the head on ``cfg.pairs`` sampled pairs; return both."""
    import torch
    from sentence_transformers import SentenceTransformer

    from ragsieve.embed.base import _minilm_dir
    from ragsieve.segment.model import build_mlp

    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    model = SentenceTransformer(str(_minilm_dir()), device="cpu")
    model.max_seq_length = cfg.max_seq
    dim = int(model.get_embedding_dimension() or 384)
    head = build_mlp([dim * len(features), *cfg.hidden, 1])
    opt = torch.optim.Adam(
        [
            {"params": model.parameters(), "lr": cfg.lr_embedder},
            {"params": head.parameters(), "lr": cfg.lr_head},
        ]
    )
    rng = np.random.default_rng(cfg.seed)
    n = min(cfg.pairs, len(train.labels))
    sample = rng.choice(len(train.labels), size=n, replace=False)
    left = np.asarray(train.left)[sample]
    right = np.asarray(train.right)[sample]
    labels = torch.tensor(np.asarray(train.labels)[sample], dtype=torch.float32)
    # sentence-transformers 5 renamed tokenize() to preprocess(); older releases lack it.
    prep = getattr(model, "preprocess", None) or model.tokenize
    model.train()
    t0 = time.perf_counter()
    steps = 0
    for epoch in range(cfg.epochs):
        order = rng.permutation(n)
        for s in range(0, n, cfg.batch_size):
            idx = order[s : s + cfg.batch_size]
            texts = [train.sentences[i] for i in left[idx]] + [
                train.sentences[i] for i in right[idx]
            ]
            feats = prep(texts)
            emb = model(feats)["sentence_embedding"]  # the model's own Normalize layer applies
            x1, x2 = emb[: len(idx)], emb[len(idx) :]
            score = torch.sigmoid(head(_features(x1, x2, features)).squeeze(1))
            loss = torch.nn.functional.mse_loss(score, labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
            if steps % 50 == 0:
                done = min(s + cfg.batch_size, n)
                log(
                    f"fine-tune epoch {epoch + 1}: {done}/{n} pairs, loss {loss.item():.4f} "
                    f"({time.perf_counter() - t0:.0f}s)"
                )
    model.eval()
    lin = [m for m in head if isinstance(m, torch.nn.Linear)]
    trained = SegmenterHead(
        tuple(m.weight.detach().numpy().T.copy() for m in lin),
        tuple(m.bias.detach().numpy().copy() for m in lin),
        features,
        EMBEDDER_DIR,
    )
    return model, trained


def embed_with(model: Any, sentences: list[str], batch_size: int = 128) -> np.ndarray:
    """Unit vectors of ``sentences`` from a (fine-tuned) sentence-transformers model."""
    vecs = model.encode(
        sentences,
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )
    return np.asarray(vecs, dtype=np.float32)


def save(model: Any, head: SegmenterHead, out: Path, meta: dict[str, Any]) -> None:
    """Write ``embedder/`` and the head (whose config names ``embedder`` relative to ``out``)."""
    model.save(str(out / EMBEDDER_DIR))
    head.save(out, meta)
