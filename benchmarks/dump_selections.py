"""Every method's selected context per question, for before/after checks of a refactor.

    .venv/bin/python -m benchmarks dump_selections dump bench-out/after.json
    PYTHONPATH=src python benchmarks/dump_selections.py dump bench-out/before.json  # old commit
    .venv/bin/python -m benchmarks dump_selections compare bench-out/{before,after}.json

``--no-llm`` contexts on 100 HotpotQA (sentence gold, budget 450) and 20 QASPER questions; the
comparison counts, per method, the questions whose selected ids, context tokens or evidence
recall differ.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

RUNS = [
    (
        "hotpotqa-sent",
        100,
        450,
        "naive,tagger,sage,carrot,pareto,saki,full,full[unit=passage],"
        "full[order=mcts,scorer=reranker]",
    ),
    (
        "qasper",
        20,
        None,
        "naive,tagger,naive[reranker=ensemble],sage,full[unit=passage],pareto[k=5],saki,carrot",
    ),
]


def dump(path: str) -> None:
    from ragsieve.evaluate.runner import EvalConfig, run_eval, select_dataset

    try:
        from ragsieve.methods import parse_methods
    except ImportError:  # before the methods/ package
        from ragsieve.evaluate.runner import parse_methods  # type: ignore[attr-defined,no-redef]
    out = {}
    for name, limit, budget, methods in RUNS:
        ds = select_dataset(name, None, None, limit, False, None)
        res = run_eval(ds, EvalConfig(methods=parse_methods(methods), budget=budget, no_llm=True))
        for row in res["per_question"]:
            key = f"{name}|{row['method']}|{row['id']}"
            out[key] = [row["selected"], row.get("context_tokens"), row.get("evidence_recall")]
    with open(path, "w") as fh:
        json.dump(out, fh, indent=0, sort_keys=True)


def compare(a_path: str, b_path: str) -> int:
    with open(a_path) as fa, open(b_path) as fb:
        a, b = json.load(fa), json.load(fb)
    keys = sorted(set(a) | set(b))
    total = Counter(k.rsplit("|", 1)[0] for k in keys)
    differ = Counter(k.rsplit("|", 1)[0] for k in keys if a.get(k) != b.get(k))
    print("| set, method | questions | differ |\n|---|---:|---:|")
    for m in sorted(total):
        print(f"| {m.replace('|', ', ')} | {total[m]} | {differ[m]} |")
    return 1 if differ else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("what", choices=["dump", "compare"])
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    if args.what == "dump":
        dump(args.paths[0])
    else:
        sys.exit(compare(*args.paths[:2]))


if __name__ == "__main__":
    main()
