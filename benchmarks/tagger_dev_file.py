"""Write the tagger's dev split as a questions file for ``ragsieve eval --dataset FILE``.

    .venv/bin/python -m benchmarks tagger_dev_file --out DEV.jsonl [--squad 200]
    ragsieve eval --dataset DEV.jsonl --llm local --methods "tagger,tagger[open=true]" --out DIR

The pools are :func:`ragsieve.tag.fit.pools.load_split`'s ``dev`` (the HotpotQA train questions
held out of training, and ``--squad`` SQuAD-train questions of the dev articles, seed 5), one
line per question with its passages and sentence gold: what a decision about the tagger's
defaults that needs an LLM reader is measured on (no test question is read).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragsieve.data import find_data_dir
from ragsieve.tag.fit.pools import load_split


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--squad", type=int, default=200, help="SQuAD-train dev-article questions")
    args = ap.parse_args()
    sets = load_split("dev", find_data_dir(), squad=args.squad)
    with args.out.open("w", encoding="utf-8") as fh:
        for name, pools in sets.items():
            for k, q in enumerate(pools):
                docs, evidence = [], []
                for j, (title, sents, labels) in enumerate(q["pool"]):
                    text = " ".join(sents)
                    docs.append({"id": f"{name}{k}-{j}-{title}", "title": title, "text": text})
                    evidence += [s for s, y in zip(sents, labels, strict=True) if y]
                row = {
                    "id": f"{name}-{k}",
                    "question": q["question"],
                    "answers": q["answers"],
                    "evidence": evidence,
                    "evidence_level": "sentence",
                    "documents": docs,
                }
                fh.write(json.dumps(row) + "\n")
    print(f"wrote {args.out}: " + ", ".join(f"{len(v)} {k}" for k, v in sets.items()))


if __name__ == "__main__":
    main()
