"""techdocs questions in parts (two-part, list, how-to) scored by their parts: whether the answer
line holds one acceptable string of every part, beside its F1 against the joined gold.

    .venv/bin/python -m benchmarks techdocs/parts ROWS_DIR [--dataset techdocs-test] [--words 40]

``ROWS_DIR``: a ``reader_eval`` folder (``local/``, ``qwen-0.5b/``, ``span/`` with
``per_question.jsonl``) or one ``per_question.jsonl``. The gold of such a question is one joined
sentence ("50, and the maximum is 100"), so a line that says both parts in other words scores
F1 about 0.5; holding every part is the fairer test of a whole answer. A line of more than
``--words`` words is not counted as holding anything (a reply that pastes the context would).
Not :func:`ragsieve.metrics.context.answer_recall`'s test of a part: it leaves a "No" part out
(a context never spells it), and a line must say it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import read_rows

from ragsieve.evaluate.datasets import load_dataset
from ragsieve.metrics.answer import normalize_answer


def holds(line: str, part: list[str]) -> bool:
    """Whether ``line`` holds one of ``part``'s strings, both normalised as answers are."""
    text = f" {normalize_answer(line)} "
    return any(f" {normalize_answer(s)} " in text for s in part if normalize_answer(s))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", type=Path)
    ap.add_argument("--dataset", default="techdocs-test")
    ap.add_argument("--words", type=int, default=40)
    args = ap.parse_args()
    parts = {
        q.id: q.meta["parts"]
        for q in load_dataset(args.dataset).questions
        if q.meta and q.meta.get("parts")
    }
    folders = sorted(d for d in args.rows.iterdir() if d.is_dir()) if args.rows.is_dir() else []
    sources = [(d.name, d) for d in folders] or [(args.rows.stem, args.rows)]
    print(f"{args.dataset}: {len(parts)} questions in parts; a line over {args.words} words: none")
    print("| rows | method | n | every part held | some part held | F1 >= 0.8 | mean F1 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, path in sources:
        by_method: dict[str, list[dict]] = {}
        for r in read_rows(path):
            if r["id"] in parts:
                by_method.setdefault(r.get("method", ""), []).append(r)
        for method, rows in by_method.items():
            every = some = right = 0
            for r in rows:
                line = r.get("prediction") or ""
                if len(line.split()) > args.words:
                    line = ""
                held = [holds(line, p) for p in parts[r["id"]]]
                every += all(held)
                some += any(held)
                right += (r.get("f1") or 0.0) >= 0.8
            f1 = sum(r.get("f1") or 0.0 for r in rows) / len(rows)
            print(f"| {name} | {method} | {len(rows)} | {every} | {some} | {right} | {f1:.3f} |")


if __name__ == "__main__":
    main()
