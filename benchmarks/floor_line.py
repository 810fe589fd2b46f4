"""The answer line with today's rules and the floor, against the line before them, on stored
reader rows: each question's reply (from a reader run) and today's span and confidence (from a
``ragsieve eval --no-llm`` run of ``tagger``), paired per question.

    .venv/bin/python -m benchmarks floor_line --dataset hotpotqa --limit 200 \\
        --conf NOLLM/per_question.jsonl --replies ROWS_DIR [--naive NAIVE_DIR] [--base REV]

``ROWS_DIR`` (and ``NAIVE_DIR``) hold ``local/`` and ``qwen-0.5b/`` ``per_question.jsonl`` (or
``.jsonl.gz``) with each question's ``reply``. The base line is ``answer_line`` as the git
revision ``REV`` wrote it (default: the last one before the floor), applied to the same reply
and span: so the difference is the rules' alone, the prompt being unchanged. The new line is
today's ``answer_line``, abstaining (F1 0) where the no-LLM row's confidence is under the floor.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from common import dataset_parser, interval, read_rows

from ragsieve.evaluate.datasets import load_dataset
from ragsieve.methods.answer_line import FLOOR, answer_line
from ragsieve.metrics.answer import exact_match, f1
from ragsieve.types import Answer, Context, SourceSpan

READER = SimpleNamespace(span_first=True)
#: The last revision whose answer line had no floor.
BASE_REV = "99fcfa4"


def rows_by_id(path: Path, method: str | None = None) -> dict[str, dict[str, Any]]:
    """``id -> row`` of a per-question record (the first row of each id; only rows of
    ``method`` when given)."""
    out: dict[str, dict[str, Any]] = {}
    for r in read_rows(path):
        if method is None or r.get("method", method) == method:
            out.setdefault(r["id"], r)
    return out


def base_module(rev: str) -> ModuleType:
    """``ragsieve.methods.answer_line`` as revision ``rev`` wrote it."""
    src = subprocess.run(
        ["git", "show", f"{rev}:src/ragsieve/methods/answer_line.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "answer_line_base.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("answer_line_base", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def line(fn: Any, question: str, reply: str, s: dict[str, Any] | None) -> tuple[str, str]:
    """The line ``fn`` (an ``answer_line``) draws from ``reply`` and the row's span."""
    ans = Answer(question, reply, Context([], 0), None, 0.0, {}, {}, "tagger")  # type: ignore[arg-type]
    text = (s or {}).get("span_prediction") or ""
    span = SourceSpan(text, (s or {}).get("span_score") or 0.0, "d", "d#s", 0, len(text))
    out = fn(ans, span if text else None, READER)
    # A base revision draws no typed line: its trace names the kind.
    return out.text, out.line.kind if out.line is not None else out.trace["answer"]


def ci(a: list[float], b: list[float]) -> str:
    d, lo, hi = interval(a, b)
    return f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def main() -> None:
    ap = dataset_parser(__doc__)
    ap.add_argument("--conf", type=Path, required=True)
    ap.add_argument("--replies", type=Path, required=True)
    ap.add_argument("--naive", type=Path, default=None)
    ap.add_argument("--base", default=BASE_REV)
    ap.add_argument("--floor", type=float, default=FLOOR)
    ap.add_argument("--readers", default="local,qwen-0.5b")
    ap.add_argument("--method", default="tagger", help="the replies' method label")
    ap.add_argument("--conf-method", default=None, help="the --conf rows' (default: --method)")
    ap.add_argument(
        "--against", default=None, help="pair --method's line (with the floor) with this method's"
    )
    ap.add_argument("--show", action="store_true", help="print each changed line")
    ap.add_argument(
        "--sweep", action="store_true", help="also each point 0, 0.02, ..., 0.5: line F1 per reader"
    )
    args = ap.parse_args()
    qs = {q.id: q for q in load_dataset(args.dataset, limit=args.limit).questions}
    sp = rows_by_id(args.conf, args.conf_method or args.method)
    old = base_module(args.base).answer_line
    print(
        f"{args.dataset} ({args.limit}), replies of {args.method}, spans and confidence of "
        f"{args.conf_method or args.method}, floor {args.floor}, base {args.base}"
    )
    print(
        "| reader | n | base line F1 / EM | rules only F1 | with the floor F1 / EM (- base) "
        "| abstained (right before) | naive's line F1 (line - naive) |"
    )
    print("|---|---:|---|---|---|---|---|")
    swept: dict[str, tuple[list[float], list[float]]] = {}
    for rd in args.readers.split(","):
        rep = rows_by_id(args.replies / rd, args.method)
        ids = [i for i in rep if i in sp and i in qs]
        bf, be, rf, nf, ne, abst, right_lost = [], [], [], [], [], 0, 0
        for i in ids:
            q, r, s = qs[i], rep[i], sp[i]
            b, _ = line(old, q.question, r["reply"] or "", s)
            n, how = line(answer_line, q.question, r["reply"] or "", s)
            bf.append(f1(b, q.answers) or 0.0)
            be.append(exact_match(b, q.answers) or 0.0)
            rf.append(f1(n, q.answers) or 0.0)
            out = (s.get("confidence") or 0.0) < args.floor
            abst += out
            right_lost += out and bool(exact_match(b, q.answers))
            nf.append(0.0 if out else rf[-1])
            ne.append(0.0 if out else exact_match(n, q.answers) or 0.0)
            if args.show and (n != b or out):
                print(f"    {rd} {i} [{how}{', abstains' if out else ''}] {b[:40]!r} -> {n[:40]!r}")
        swept[rd] = (rf, [sp[i].get("confidence") or 0.0 for i in ids])
        naive = ""
        if args.naive is not None:
            nv = rows_by_id(args.naive / rd, "naive")
            both = [k for k, i in enumerate(ids) if i in nv]
            vf = [
                f1(
                    line(
                        answer_line,
                        qs[ids[k]].question,
                        nv[ids[k]].get("reply") or nv[ids[k]]["prediction"] or "",
                        None,
                    )[0],
                    qs[ids[k]].answers,
                )
                or 0.0
                for k in both
            ]
            naive = f"{mean(vf):.3f} ({ci([nf[k] for k in both], vf)})"
        print(
            f"| {rd} | {len(ids)} | {mean(bf):.3f} / {mean(be):.3f} | {mean(rf):.3f} "
            f"({ci(rf, bf)}) | **{mean(nf):.3f}** / {mean(ne):.3f} ({ci(nf, bf)}) "
            f"| {abst} ({right_lost}) | {naive} |"
        )
    if args.sweep:
        sweep(swept)
    if args.against:
        against(args, qs)


def floored(
    qs: dict[str, Any], conf: Path, replies: Path, method: str, reader: str, floor: float
) -> dict[str, tuple[float, float, float, float]]:
    """``id -> (line F1, line EM, reply F1, span F1)`` of ``method`` with today's line and
    ``floor``."""
    sp = rows_by_id(conf, method)
    rep = rows_by_id(replies / reader, method)
    out = {}
    for i, r in rep.items():
        if i not in sp or i not in qs:
            continue
        q, s = qs[i], sp[i]
        n, _ = line(answer_line, q.question, r["reply"] or "", s)
        down = (s.get("confidence") or 0.0) < floor
        out[i] = (
            0.0 if down else f1(n, q.answers) or 0.0,
            0.0 if down else exact_match(n, q.answers) or 0.0,
            f1(r["reply"] or "", q.answers) or 0.0,
            f1(s.get("span_prediction") or "", q.answers) or 0.0,
        )
    return out


def against(args: argparse.Namespace, qs: dict[str, Any]) -> None:
    """``--method`` paired with ``--against``: line F1 / EM, reply F1 and span F1 per reader."""
    print(f"\n{args.method} - {args.against}, paired (the floor {args.floor} on both)")
    print("| reader | n | line F1 | line EM | reply F1 | span F1 |")
    print("|---|---:|---|---|---|---|")
    for rd in args.readers.split(","):
        a = floored(qs, args.conf, args.replies, args.method, rd, args.floor)
        b = floored(qs, args.conf, args.replies, args.against, rd, args.floor)
        ids = [i for i in a if i in b]
        cells = [
            f"{mean([a[i][k] for i in ids]):.3f} vs {mean([b[i][k] for i in ids]):.3f} "
            f"({ci([a[i][k] for i in ids], [b[i][k] for i in ids])})"
            for k in range(4)
        ]
        print(f"| {rd} | {len(ids)} | " + " | ".join(cells) + " |")


def sweep(swept: dict[str, tuple[list[float], list[float]]]) -> None:
    """Line F1 per reader at each point, and its change against no floor."""
    print("\n| point | " + " | ".join(f"{rd} line F1 (- no floor)" for rd in swept) + " |")
    print("|---:|" + "---|" * len(swept))
    for k in range(26):
        p = k / 50
        cells = []
        for f, c in swept.values():
            at = [0.0 if ci_ < p else x for x, ci_ in zip(f, c, strict=True)]
            cells.append(f"{mean(at):.3f} ({mean(at) - mean(f):+.3f})")
        print(f"| {p:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
