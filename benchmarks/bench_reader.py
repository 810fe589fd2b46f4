"""The answer prompt as a reader: each question gets its gold paragraphs (the answer is in the
context), so the score is the wording's and the model's, not retrieval's.

    .venv/bin/python -m benchmarks bench_reader --llm qwen-0.5b --split test
    .venv/bin/python -m benchmarks bench_reader --llm local --split test      # SmolLM2

Compares ``prompts.ANSWER_SYSTEM`` with the wording it replaced at stop 29 (``PREVIOUS``):
token F1 against the gold answer, "I don't know" replies, and the paired bootstrap 95% interval
of the difference. ``dev`` is 100 HotpotQA train questions (where the wording was chosen, first
``--limit`` of them), ``test`` AMOR's 100 HotpotQA questions; yes/no questions are left out.
Results go to ``benchmarks/results/reader.json``.
"""

from __future__ import annotations

import argparse
import ast
import json
import time
from typing import Any

import numpy as np
from common import DATA, RESULTS, ci, interval

from ragsieve.llm import get_llm, prompts
from ragsieve.metrics import f1

#: The answer system prompt before stop 29.
PREVIOUS = (
    "You are a helpful assistant. Use the context passages to answer the question briefly. "
    'If the answer is not in the context, say "I don\'t know".'
)


def _field(value: Any) -> Any:
    return ast.literal_eval(value) if isinstance(value, str) else value


def questions(split: str, limit: int | None) -> list[tuple[str, list[str], str]]:
    """(question, gold paragraphs as "title: text", answer), yes/no questions left out."""
    if split == "dev":
        records = json.loads(
            (DATA / "train_extra" / "hotpotqa_train100_distractor.json").read_text()
        )
    else:
        path = DATA / "hotpotqa" / "hotpot_dev_sample100_amor_withretrieval.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = []
    for r in records:
        if r["answer"].strip().lower() in ("yes", "no"):
            continue
        gold = {sf[0] for sf in _field(r["supporting_facts"])}
        chunks = [
            f"{title}: {' '.join(s.strip() for s in sents)}"
            for title, sents in _field(r["context"])
            if title in gold
        ]
        out.append((r["question"], chunks, r["answer"]))
    return out[:limit] if limit else out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--llm", default="qwen-0.5b", help="an LLM spec (qwen-0.5b, local, ...)")
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--limit", type=int, default=None, help="first N questions")
    args = ap.parse_args()
    rows = questions(args.split, args.limit)
    llm = get_llm(args.llm, n_ctx=2048)
    scores: dict[str, list[float]] = {}
    result: dict[str, Any] = {"llm": args.llm, "split": args.split, "n": len(rows)}
    for label, system in (("previous", PREVIOUS), ("current", prompts.ANSWER_SYSTEM)):
        t0 = time.perf_counter()
        fs, refused = [], 0
        for q, chunks, answer in rows:
            messages = prompts.build_answer_messages(q, chunks)
            messages[0]["content"] = system
            text = llm.generate(messages).text
            refused += "don't know" in text.lower()
            fs.append(f1(text, [answer]) or 0.0)
        scores[label] = fs
        result[label] = {"f1": float(np.mean(fs)), "i_dont_know": refused}
        print(
            f"{args.llm} {args.split} {label:8s} n={len(rows)} F1 {np.mean(fs):.3f} "
            f"I don't know {refused} ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    d, lo, hi = interval(scores["current"], scores["previous"], n=2000)
    result["diff"], result["ci95"] = d, [lo, hi]
    print(f"current - previous: {ci(d, lo, hi)}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "reader.json"
    runs = json.loads(path.read_text()) if path.exists() else []
    runs.append(result)
    path.write_text(json.dumps(runs, indent=2))


if __name__ == "__main__":
    main()
