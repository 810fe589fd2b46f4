"""The agent's input (Sec. VI-A (1)): query embedding concatenated with the mean-pooled
embedding of the retrieved chunks, ``x (+) c``.

The paper embeds with BGE-M3 (1024-d); we use the index's embedder (MiniLM, 384-d), which is
shipped and offline, so the input has ``2 x 384 = 768`` dimensions. The vectors come from the
index's query-time build (:func:`~ragsieve.embed.index_embedder`: the int8 ONNX MiniLM, cosine
> 0.99 with the fp32 vectors the shipped agent was trained on), so ``carrot[agent=true]``
loads no torch.
"""

from __future__ import annotations

import numpy as np

from ragsieve.embed import index_embedder


def agent_features(query: str, chunk_texts: list[str], embedder: str = "minilm") -> np.ndarray:
    """``query_vec (+) mean(chunk_vecs)`` as float32; zeros for the chunk half when none."""
    emb = index_embedder(embedder)
    vecs = np.asarray(emb.embed([query, *chunk_texts]), dtype=np.float32)
    mean = vecs[1:].mean(axis=0) if len(chunk_texts) else np.zeros_like(vecs[0])
    return np.concatenate([vecs[0], mean]).astype(np.float32)
