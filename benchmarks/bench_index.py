"""Indexing throughput and search latency (issue: foundation).

1. Indexing: tokens/s of the whole ``Index.add`` pipeline (split, fixed chunking, embedding,
   Lance writes, BM25 index) against the raw embedder on the same chunk texts, in one process.
2. Search: p50/p95 latency of dense, BM25 and hybrid search on an index of >= 50k chunks.
   Embedding 50k chunks on 2 CPU cores takes ~25 minutes, so the bulk vectors of the large index
   are random unit vectors (brute-force cosine search costs the same whatever the values); the
   chunk texts are real (QASPER train papers, 100-token fixed chunks) so BM25 is realistic, and
   the query vectors come from the real model. Query latency includes embedding the query.

Usage: .venv/bin/python -m benchmarks bench_index [--papers 20] [--min-chunks 50000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from common import DATA, need_data, pct_ms, qasper_papers


class RandomUnitEmbedder:
    """Random 384-d unit vectors: stands in for the model when only search latency matters."""

    name = "random"
    dim = 384

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def embed(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        v = self.rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--papers", type=int, default=20)
    ap.add_argument("--min-chunks", type=int, default=50_000)
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    need_data()

    from ragsieve.embed import get_embedder
    from ragsieve.index import Index, IndexConfig
    from ragsieve.retrieve import get_retriever
    from ragsieve.segment import get_segmenter

    tmp = Path(tempfile.mkdtemp(prefix="ragsieve-bench-"))
    emb = get_embedder("minilm")
    emb.embed(["warm up"])

    # 1. indexing throughput vs the raw embedder
    docs = qasper_papers("validation_papers_fulltext.jsonl", args.papers)
    chunks = [c for cs in get_segmenter("fixed").segment(docs) for c in cs]
    n_tok = sum(c.n_tokens for c in chunks)
    texts = [c.text for c in chunks]
    t = time.perf_counter()
    emb.embed(texts)
    raw_a = time.perf_counter() - t
    idx = Index.create(tmp / "small", IndexConfig())
    rep = idx.add(docs)
    t = time.perf_counter()
    emb.embed(texts)
    raw_s = (raw_a + time.perf_counter() - t) / 2  # before and after: fair under CPU noise
    print(f"corpus: {len(docs)} QASPER validation papers, {len(chunks)} chunks, {n_tok} tokens")
    print(f"raw embedder:     {n_tok / raw_s:8.0f} tokens/s ({len(chunks) / raw_s:.1f} chunks/s)")
    print(
        f"index pipeline:   {rep.n_tokens / rep.seconds:8.0f} tokens/s "
        f"({rep.n_chunks / rep.seconds:.1f} chunks/s)"
    )
    print(f"pipeline / raw:   {(rep.n_tokens / rep.seconds) / (n_tok / raw_s):.3f}")

    # 2. search latency on >= min-chunks chunks
    big = Index.create(tmp / "big", IndexConfig(chunk_tokens=100))
    all_docs = qasper_papers("train_papers_fulltext.jsonl")
    t = time.perf_counter()
    big.add(all_docs, embedder=RandomUnitEmbedder())
    print(
        f"large index: {big.stats()['chunks']} chunks from {len(all_docs)} papers, "
        f"built in {time.perf_counter() - t:.1f}s (random bulk vectors)"
    )
    if big.stats()["chunks"] < args.min_chunks:
        print(f"warning: only {big.stats()['chunks']} chunks (< {args.min_chunks})")
    qs = json.loads((DATA / "qasper" / "questions_validation.json").read_text())
    questions = [q["question"] for q in (qs if isinstance(qs, list) else qs.values())]
    questions = [q for q in questions if isinstance(q, str)][: args.queries]
    for name in ("dense", "bm25", "hybrid"):
        r = get_retriever(name, big)
        r.retrieve(questions[:3], 10)  # warm caches
        lat = []
        for q in questions:
            t = time.perf_counter()
            r.retrieve([q], 10)
            lat.append(time.perf_counter() - t)
        print(
            f"search {name:6s} top-10 over {big.stats()['chunks']} chunks: "
            f"p50 {pct_ms(lat, 50):6.1f} ms  p95 {pct_ms(lat, 95):6.1f} ms  (n={len(lat)})"
        )
    t_e = []
    for q in questions[:50]:
        t = time.perf_counter()
        emb.embed([q])
        t_e.append(time.perf_counter() - t)
    print(f"query embedding alone: p50 {pct_ms(t_e, 50):.1f} ms")


if __name__ == "__main__":
    main()
