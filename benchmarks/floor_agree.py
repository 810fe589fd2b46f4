"""Whether the reply holding the span tells answerable readings from unanswerable ones: each
``floor_study`` reading read by a packaged reader, then the floor with agreement weighed in.

    .venv/bin/python -m benchmarks floor_agree ask ROWS --reader local --out R_local.jsonl
    .venv/bin/python -m benchmarks floor_agree point R_local.jsonl [R_qwen.jsonl ...]
    .venv/bin/python -m benchmarks floor_agree product ROWS_DIR --dataset D --at 0.30

``ask``: each reading's kept sentences, in order, are the context of the product's answer
prompt (:func:`ragsieve.llm.build_answer_messages`, greedy, the product's 64 tokens); the row
gains ``reply`` and ``agrees`` (:func:`ragsieve.methods.answer_line.agrees`: the reply holds
every word of the span). A reading with nothing kept asks nothing, as the product would not.

``product``: the same lower point on the product's path, on stored ``reader_eval`` rows (a
folder with ``local/`` and ``qwen-0.5b/``): the answers the floor abstained on whose reply
agrees and whose confidence is at the point or above, with the line each would have drawn.

``point``: for each reader, how often the reply agrees on each kind of reading, and the floor
as it is (``geo(keep, overlap)`` under 0.34, the shipped point) against the same floor with a
lower point where the reply agrees: for each lower point, the answerable readings it keeps
(their span F1) and the unanswerable ones it no longer abstains on.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from common import read_rows
from floor_line import line, rows_by_id
from floor_point import FORMS, readings

from ragsieve.defaults import DEFAULT_MAX_TOKENS
from ragsieve.evaluate.datasets import load_dataset
from ragsieve.llm import build_answer_messages, get_llm
from ragsieve.methods.answer_line import FLOOR, agrees, answer_line, said_unknown
from ragsieve.metrics.answer import f1
from ragsieve.types import SourceSpan

#: The lower points tried where the reply agrees (the shipped floor is :data:`FLOOR`).
AGREED_POINTS = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3)


def ask(rows: list[dict[str, Any]], reader: str, out: Path) -> None:
    """Each reading's reply and agreement, one row each, written to ``out`` as it goes."""
    llm = get_llm(reader)
    t0 = time.perf_counter()
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            reply = None
            if row["kept"]:
                msgs = build_answer_messages(row["question"], row["kept"])
                reply = llm.generate(msgs, max_tokens=DEFAULT_MAX_TOKENS, temperature=0.0).text
            span = SourceSpan(row["span"], row["span_score"] or 0.0) if row["span"] else None
            fh.write(json.dumps({**row, "reply": reply, "agrees": agrees(reply, span)}) + "\n")
            fh.flush()
    print(f"wrote {out}: {len(rows)} readings in {time.perf_counter() - t0:.0f} s")


#: The shipped confidence, on a reading: geo(best keep probability, stemmed overlap).
conf = FORMS["geo(keep,overlap)"]


def point(path: Path) -> None:
    """The agreement rates and the floor with a lower point where the reply agrees."""
    kinds = readings(read_rows(path))
    print(f"## {path.name}\n")
    print("| reading | n | reply agrees | agrees, span F1 >= 0.5 | abstained at the floor |")
    print("|---|---:|---:|---:|---:|")
    for k, rs in kinds.items():
        right = sum(r["agrees"] and r["span_f1"] >= 0.5 for r in rs)
        under = sum(conf(r) < FLOOR for r in rs)
        print(f"| {k} | {len(rs)} | {sum(r['agrees'] for r in rs)} | {right} | {under} |")
    ans = kinds["answerable"]
    f1_base = sum(r["span_f1"] for r in ans if conf(r) >= FLOOR) / len(ans)
    print(f"\nspan F1 of the answerable readings, the floor as shipped: {f1_base:.3f}\n")
    print(
        "| point where the reply agrees | answerable abstained | span F1 | gold removed | foreign |"
    )
    print("|---:|---:|---:|---:|---:|")
    for p in (FLOOR, *AGREED_POINTS):

        def out(r: dict[str, Any], p: float = p) -> bool:
            return conf(r) < (p if r["agrees"] else FLOOR)

        f1 = sum(r["span_f1"] for r in ans if not out(r)) / len(ans)
        cells = [f"{sum(map(out, kinds[k]))} of {len(kinds[k])}" for k in kinds]
        print(f"| {p:.2f} | {cells[0]} | {f1:.3f} | {cells[1]} | {cells[2]} |")
    print()


def product(args: argparse.Namespace) -> None:
    """The floor's abstentions on stored product rows that the lower point would answer."""
    qs = {q.id: q for q in load_dataset(args.dataset, limit=args.limit).questions}
    print(f"## {args.dataset} ({args.limit or 'all'}), {args.method}, agreed point {args.at}\n")
    for rd in args.readers.split(","):
        rows = rows_by_id(args.rows / rd, args.method)
        floored = [
            r
            for r in rows.values()
            if r.get("abstained")
            and r.get("reply")
            and not said_unknown(r["reply"])
            and (r.get("confidence") or 0.0) < FLOOR
        ]
        freed = []
        for r in floored:
            span = r.get("span_prediction")
            held = agrees(r["reply"], SourceSpan(span, 0.0) if span else None)
            if held and r["confidence"] >= args.at:
                freed.append(r)
        print(f"{rd}: {len(rows)} rows, {len(floored)} abstained by the floor, {len(freed)} freed")
        for r in freed:
            q = qs[r["id"]]
            text, _ = line(answer_line, q.question, r["reply"], r)
            score = f1(text, q.answers) if q.answers else None
            print(f"    {r['id']} conf {r['confidence']:.3f} line {text[:60]!r} F1 {score}")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("ask", help="read every reading with a packaged reader")
    a.add_argument("rows", type=Path, help="floor_study rows (.jsonl or .jsonl.gz)")
    a.add_argument("--reader", default="local", help="an --llm spec (local, qwen-0.5b)")
    a.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("point", help="the floor with agreement weighed in")
    p.add_argument("replies", type=Path, nargs="+", help="rows written by `ask`")
    d = sub.add_parser("product", help="the lower point on stored product rows")
    d.add_argument("rows", type=Path, help="a reader_eval folder (local/, qwen-0.5b/)")
    d.add_argument("--dataset", required=True)
    d.add_argument("--limit", type=int, default=None)
    d.add_argument("--method", default="tagger")
    d.add_argument("--readers", default="local,qwen-0.5b")
    d.add_argument("--at", type=float, required=True, help="the point where the reply agrees")
    args = ap.parse_args()
    if args.cmd == "ask":
        ask(read_rows(args.rows), args.reader, args.out)
    elif args.cmd == "product":
        product(args)
    else:
        for path in args.replies:
            point(path)


if __name__ == "__main__":
    main()
