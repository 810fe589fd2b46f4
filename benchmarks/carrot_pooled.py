"""How far CARROT's pooled combination cosines stray from embedding the concatenation, and the
linear calibration that maps one onto the other, fitted on training questions only.

Pools: the tagger's dev split (held-out HotpotQA *train* questions and SQuAD-train dev
articles; ``ragsieve.tag.pools.load_split("dev")``), never an evaluation file. Per question,
the five passages with the best MiniLM cosine (CARROT's N = 5) give every ordered pair and the
orders of the best three: the combinations an MCTS expands first. Each is embedded exactly
(the joined text) and pooled from its parts (:mod:`ragsieve.rerank.pooled`).

    python benchmarks/carrot_pooled.py fit [--squad 100] [--out FILE.json]

Prints the fit (exact ~ a * pooled + b, on the uncalibrated pooled cosines) and its residuals;
the shipped constants in ``ragsieve.rerank.pooled.CALIBRATION`` are this script's output.

    python benchmarks/carrot_pooled.py dev-file --out FILE.jsonl [--limit 200]
    ragsieve eval --dataset FILE.jsonl --no-llm --budget 450 \
        --methods "carrot,carrot[combination_cosine=exact]"

writes the split the default was decided on, as a generic questions file (per-question pools,
sentence gold): HotpotQA *train* questions of the ``train_extra`` distractor files outside the
tagger's dev split (which fitted the calibration). CARROT was never tuned on HotpotQA.
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import permutations
from pathlib import Path

import numpy as np

from ragsieve.data import find_data_dir
from ragsieve.embed import index_embedder
from ragsieve.rerank.base import CachedCosines
from ragsieve.rerank.pooled import PooledCosines
from ragsieve.select.benefit import SEPARATOR
from ragsieve.tag.pools import load_split


def pairs(squad: int) -> dict[str, list[tuple[float, float, int]]]:
    """(pooled, exact, parts) of every measured combination, per set."""
    emb = index_embedder("minilm")
    sets = load_split("dev", find_data_dir(), squad=squad)
    out: dict[str, list[tuple[float, float, int]]] = {}
    for name, pools in sets.items():
        rows: list[tuple[float, float, int]] = []
        for q in pools:
            texts = [f"{t}: {' '.join(s)}" for t, s, _ in q["pool"]]
            exact = CachedCosines(emb, q["question"])
            pooled = PooledCosines(CachedCosines(emb, q["question"]), calibration=(1.0, 0.0))
            single, _ = exact.cosines(texts)
            top = [int(i) for i in np.argsort(-single, kind="stable")[:5]]
            combos = [*permutations(top, 2), *permutations(top[:3], 3)]
            parts = [tuple(texts[i] for i in c) for c in combos]
            got, _ = pooled.cosines_parts(parts, SEPARATOR)
            want, _ = exact.cosines([SEPARATOR.join(p) for p in parts])
            for g, w, c in zip(got, want, combos, strict=True):
                rows.append((float(g), float(w), len(c)))
        out[name] = rows
    return out


def fit(rows: list[tuple[float, float, int]]) -> tuple[float, float]:
    x = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    a, b = np.polyfit(x, y, 1)
    return float(a), float(b)


def summary(rows: list[tuple[float, float, int]], a: float, b: float) -> dict[str, float]:
    x = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    return {
        "n": len(rows),
        "mean_pooled_minus_exact": float(np.mean(x - y)),
        "mae_raw": float(np.mean(np.abs(x - y))),
        "mae_calibrated": float(np.mean(np.abs(a * x + b - y))),
        "pearson": float(np.corrcoef(x, y)[0, 1]),
    }


def dev_file(out: Path, limit: int) -> None:
    """The first ``limit`` HotpotQA train questions outside the tagger's dev split, written as
    a generic questions JSONL (``ragsieve eval --dataset FILE``)."""
    from ragsieve.data import read_training_json
    from ragsieve.evaluate.datasets import hotpot_sentence_dataset
    from ragsieve.tag.data import (
        HOTPOT_495_DEV_QUESTIONS,
        HOTPOT_DEV_QUESTIONS,
        HOTPOT_DISTRACTOR,
        HOTPOT_DISTRACTOR_495,
    )

    data = find_data_dir()
    records = []
    for rel, held in (
        (HOTPOT_DISTRACTOR, HOTPOT_DEV_QUESTIONS),
        (HOTPOT_DISTRACTOR_495, HOTPOT_495_DEV_QUESTIONS),
    ):
        rows = read_training_json(data / rel)
        records += [(i, r) for i, r in enumerate(rows) if i not in held]
    ds = hotpot_sentence_dataset(data / HOTPOT_DISTRACTOR, "hotpotqa-train", records[:limit])
    with out.open("w", encoding="utf-8") as fh:
        for q in ds.questions:
            row = {
                "id": q.id,
                "question": q.question,
                "answers": list(q.answers),
                "evidence": list(q.evidence),
                "evidence_level": "sentence",
                "documents": [{"id": d.id, "title": d.title, "text": d.text} for d in q.documents],
            }
            fh.write(json.dumps(row) + "\n")
    print(f"wrote {len(ds.questions)} questions to {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit", help="pooled vs exact cosines on the dev split, and the fit")
    f.add_argument("--squad", type=int, default=100)
    f.add_argument("--out", type=Path, default=Path("benchmarks/results/carrot_pooled.json"))
    d = sub.add_parser("dev-file", help="the HotpotQA train questions the default was decided on")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--limit", type=int, default=200)
    args = ap.parse_args()
    if args.cmd == "dev-file":
        dev_file(args.out, args.limit)
        return
    t0 = time.perf_counter()
    by_set = pairs(args.squad)
    rows = [r for rs in by_set.values() for r in rs]
    a, b = fit(rows)
    res = {
        "split": "dev (held-out HotpotQA train questions, SQuAD-train dev articles)",
        "fit": {"a": round(a, 4), "b": round(b, 4)},
        "all": summary(rows, a, b),
        **{name: summary(rs, a, b) for name, rs in by_set.items()},
        **{f"parts={k}": summary([r for r in rows if r[2] == k], a, b) for k in (2, 3)},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(res, indent=2))
    args.out.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
