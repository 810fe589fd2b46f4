"""How large does SAGE's gradient cut make the context, for each min_k and score scale?

For each question of a dataset: N = 30 dense candidates from the evaluation index, scored once
by the ``ensemble`` reranker (its features give the cross-encoder logits too); then the cut is
replayed on those scores for several ``min_k`` and on two scales (the calibrated [0, 1] score,
and the cross-encoder logit shifted so the list's minimum is 0, like the paper's raw logits).
Per setting: chunks kept, context tokens, and the share of the candidates' gold evidence kept.

    .venv/bin/python benchmarks/bench_cut.py --dataset qasper --n 60
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ragsieve.evaluate.runner import EvalConfig, eval_index, parse_methods, select_dataset
from ragsieve.metrics import recall_at_k
from ragsieve.rerank import get_reranker
from ragsieve.retrieve import get_retriever
from ragsieve.select import GradientCutSelector
from ragsieve.types import Chunk, Scored


def _cut(scores: np.ndarray, min_k: int, g: float) -> int:
    ranked = [
        Scored(Chunk(str(i), "d", i, "", 0, 1, i, i + 1, 1), float(s)) for i, s in enumerate(scores)
    ]
    return len(GradientCutSelector(min_k=min_k, g=g).select("q", ranked).context.chunks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="qasper")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--N", type=int, default=30)
    ap.add_argument("--g", type=float, default=0.3)
    args = ap.parse_args()
    ds = select_dataset(args.dataset, None, None, args.n, False)
    index, _ = eval_index(ds, EvalConfig(methods=parse_methods("naive"), no_llm=True))
    retriever = get_retriever("dense", index)
    reranker = get_reranker("ensemble")
    rows: dict[tuple[str, int], list[tuple[int, int, float]]] = {}
    t0 = time.perf_counter()
    for q in ds.questions:
        if not q.evidence:
            continue
        pool = [d.id for d in q.documents] if q.documents else None
        cands = retriever.retrieve([q.question], args.N, [pool])[0]
        if not cands:
            continue
        texts = [c.chunk.text for c in cands]
        tokens = np.array([c.chunk.n_tokens for c in cands])
        gold = np.array([recall_at_k([t], q.evidence, 1) or 0.0 for t in texts])
        total = gold.sum()
        if total == 0:
            continue
        feats = reranker.features(q.question, texts)
        prob = reranker.score(q.question, texts).astype(np.float64)
        ce = np.asarray(feats["ce_logit"], dtype=np.float64)
        for scale, s in (("ensemble score", prob), ("ce logit - min", ce - ce.min())):
            order = np.argsort(-s, kind="stable")
            for min_k in (1, 3, 7):
                k = _cut(s[order], min_k, args.g)
                sel = order[:k]
                rows.setdefault((scale, min_k), []).append(
                    (k, int(tokens[sel].sum()), float(gold[sel].sum() / total))
                )
        rows.setdefault(("dense top 10", 0), []).append(
            (10, int(tokens[:10].sum()), float(gold[:10].sum() / total))
        )
    print(
        f"{args.dataset}: {len(rows.get(('dense top 10', 0), []))} questions with evidence "
        f"among the candidates, {time.perf_counter() - t0:.0f}s"
    )
    print("| cut on | min_k | chunks kept, mean (median) | context tokens | evidence kept |")
    print("|---|---:|---:|---:|---:|")
    for (scale, min_k), v in rows.items():
        a = np.array(v, dtype=np.float64)
        print(
            f"| {scale} | {min_k or '-'} | {a[:, 0].mean():.1f} ({np.median(a[:, 0]):.0f}) | "
            f"{a[:, 1].mean():,.0f} | {a[:, 2].mean():.2f} |"
        )


if __name__ == "__main__":
    main()
