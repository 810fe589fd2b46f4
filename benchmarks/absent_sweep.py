"""Which ``RARE_ZIPF`` (``ragsieve.text.words``): questions that abstain because they name a
rare word nothing retrieved mentions, at each threshold, beside the floor's own abstentions.

    python -m benchmarks absent_sweep --dataset techdocs --rows TD_ROWS
    python -m benchmarks absent_sweep --dataset DEV.jsonl --limit 150 --budget 450 --rows ROWS \\
        --replies benchmarks/results/lead_link/rows/dev_lead --method "tagger[lead=true]"

The product's retrieval (``tagger``, no LLM) gives each question's candidates and context; the
``--rows`` of a ``ragsieve eval --no-llm`` run made *before* the rule give the floor's own
abstentions (confidence under ``FLOOR``); with ``--replies`` (stored ``reader_eval`` rows of
both readers) the line F1 lost is the F1 of the answerable lines that newly abstain (the rule
asks no LLM, so no other line moves). Dev sets only: docs/llm.md.
"""

from __future__ import annotations

from pathlib import Path

from common import dataset_parser, read_rows

import ragsieve.text.words as words
from ragsieve.evaluate.datasets import load_dataset
from ragsieve.evaluate.runner import EvalConfig, eval_index
from ragsieve.methods.answer_line import FLOOR, search_words
from ragsieve.methods.spec import build_method

POINTS = (1.5, 2.0, 2.5, 3.0)


def main() -> None:
    ap = dataset_parser(__doc__)
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument("--rows", type=Path, required=True, help="eval --no-llm rows before the rule")
    ap.add_argument("--replies", type=Path, default=None)
    ap.add_argument("--method", default="tagger", help="the replies' method label")
    ap.add_argument("--rows-method", default=None, help="the --rows' method label (default: all)")
    ap.add_argument("--readers", default="local,qwen-0.5b")
    ap.add_argument("--cache-dir", type=Path, default=None)
    args = ap.parse_args()
    ds = load_dataset(args.dataset, limit=args.limit)
    qs = list(ds.questions)
    index, _ = eval_index(ds, EvalConfig(methods=[], cache_dir=args.cache_dir))
    method = build_method("tagger", index, k=10, budget=args.budget, retriever=None, reranker=None)
    texts: dict[str, list[str]] = {}
    for s in range(0, len(qs), 32):
        batch = qs[s : s + 32]
        filters = [[d.id for d in q.documents] if q.documents else None for q in batch]
        for q, r in zip(batch, method.retrieve([q.question for q in batch], filters), strict=True):
            found = [c.chunk.text for c in r.candidates] + [c.chunk.text for c in r.context.chunks]
            texts[q.id] = search_words(" ".join(found))
    before = [r for r in read_rows(args.rows) if args.rows_method in (None, r["method"])]
    floor = {r["id"]: (r.get("confidence") or 0.0) < FLOOR for r in before}
    lines: dict[str, dict[str, float]] = {}
    for reader in args.readers.split(",") if args.replies else []:
        rows = read_rows(args.replies / reader)
        lines[reader] = {r["id"]: r.get("f1") or 0.0 for r in rows if r["method"] == args.method}
    print(f"{args.dataset} ({len(qs)}), floor {FLOOR} and absent words, budget {args.budget}")
    head = "| RARE_ZIPF | unanswerable abstained | answerable abstained | newly abstained |"
    print(head + "".join(f" line F1 lost ({r}) |" for r in lines))
    print("|---:|---:|---:|---|" + "---:|" * len(lines))
    for point in (None, *POINTS):
        un = an = n_un = n_an = 0
        new: list[str] = []
        for q in qs:
            gone = False
            if point is not None:
                words.RARE_ZIPF = point
                words.is_rare.cache_clear()
                gone = bool(words.absent_words(search_words(q.question), texts[q.id]))
            out = gone or floor.get(q.id, False)
            if q.answers:
                n_an += 1
                an += out
                new += [q.id] if gone and not floor.get(q.id, False) else []
            else:
                n_un += 1
                un += out
        lost = "".join(
            f" {sum(ls.get(i, 0.0) for i in new) / len(qs):.4f} |" for ls in lines.values()
        )
        name = "floor alone" if point is None else f"{point}"
        print(f"| {name} | {un} of {n_un} | {an} of {n_an} | {', '.join(new) or '-'} |{lost}")


if __name__ == "__main__":
    main()
