"""The answer floor's dev study: the tagger's span score and keep probabilities on answerable
pools and on unanswerable ones, so that the abstention point is chosen on dev.

    .venv/bin/python -m benchmarks floor_study --split dev --out rows.jsonl [--limit 150] \
        [--model TAGGER_DIR]

Each question of the split (``ragsieve.tag.fit.pools.load_split``: HotpotQA and SQuAD pools, dev =
questions held out of training) is read three times through :func:`ragsieve.prune`:
``answerable`` (its own pool), ``gold_removed`` (its pool without the passages that hold gold
sentences: a real question whose evidence is gone) and ``foreign`` (the next question's pool
without its gold: a question no document answers). One row per reading: the span, its score,
its F1 against the answers, the kept sentences' top probability, how many were kept, and
whether an answer string still occurs in the pool (such a reading is not unanswerable).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from ragsieve import prune
from ragsieve.data import find_data_dir
from ragsieve.metrics.answer import f1
from ragsieve.tag.fit.pools import load_split


def passages(pool: list[Any], drop_gold: bool) -> list[tuple[str, str]]:
    """A pool's passages as ``(title, text)``, without those holding gold when ``drop_gold``."""
    return [
        (title, " ".join(sents)) for title, sents, labels in pool if not (drop_gold and any(labels))
    ]


def reading(
    question: str, answers: list[str], items: list[tuple[str, str]], model: Path | None = None
) -> dict[str, Any]:
    """One :func:`ragsieve.prune` reading of ``items`` for ``question`` (``model``: a tagger
    folder; None: the shipped one)."""
    kept = prune(question, items, model=model) if items else []
    span = getattr(kept, "span", None)
    return {
        "span": span.text if span is not None else None,
        "span_score": span.score if span is not None else None,
        "span_f1": f1(span.text, answers) if span is not None else 0.0,
        "max_prob": max((k.prob for k in kept), default=0.0),
        "n_kept": len(kept),
        "kept": [k.text for k in kept],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=["dev", "test"], default="dev")
    ap.add_argument("--limit", type=int, default=150)
    ap.add_argument("--squad", type=int, default=50)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--model", type=Path, default=None, help="a tagger folder (default: shipped)")
    args = ap.parse_args()
    sets = load_split(args.split, find_data_dir(), limit=args.limit, squad=args.squad)
    t0 = time.perf_counter()
    with args.out.open("w", encoding="utf-8") as fh:
        for name, pools in sets.items():
            for k, q in enumerate(pools):
                other = pools[(k + 1) % len(pools)]
                kinds = {
                    "answerable": passages(q["pool"], drop_gold=False),
                    "gold_removed": passages(q["pool"], drop_gold=True),
                    "foreign": passages(other["pool"], drop_gold=True),
                }
                for kind, items in kinds.items():
                    row = {
                        "id": f"{name}-{k}",
                        "set": name,
                        "kind": kind,
                        "question": q["question"],
                    }
                    row.update(reading(q["question"], list(q["answers"]), items, args.model))
                    text = " ".join(t for _, t in items).lower()
                    row["answer_in_pool"] = any(a.lower() in text for a in q["answers"] if a)
                    fh.write(json.dumps(row) + "\n")
                fh.flush()
    print(f"wrote {args.out} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
