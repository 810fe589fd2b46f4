"""Reader-level measurement: F1 and EM of methods with the local readers, paired 95% intervals.

    .venv/bin/python benchmarks/reader_eval.py --dataset hotpotqa --limit 200 --budget 450 \\
        --methods naive,tagger --readers local,qwen-0.5b --out DIR

Readers: ``local`` (SmolLM2-135M), ``qwen-0.5b`` and the opt-in ``qwen-1.5b``
(Qwen2.5-Coder-1.5B, its reply the line: docs/llm.md), ``span``, or any ``get_llm`` spec.

One ``ragsieve eval`` run (:func:`ragsieve.evaluate.runner.run_eval`) per reader and method on
the same questions; each reader's rows go to ``DIR/<reader>/per_question.jsonl`` (readable by
``paired_eval.py``) and are reused on a rerun with the same ``--out`` and settings, gzipped as
the tracked records are (``per_question.jsonl.gz``) or not (another
dataset, limit, budget, method list or ``--max-tokens`` there is refused). Printed per reader and
method: F1 and EM with the difference to ``--base`` and its paired bootstrap 95% interval
(``common.interval``, as in ``paired_eval.py``), prompt and answer tokens, replies that ran to
``--max-tokens``, loops (replies the loop guard stopped, or that ran to the cap ending in a
loop), and the reader's seconds a question (its ``generate`` time; the model is loaded first).
A reader is a ``get_llm`` spec with optional backend options:
``local[loop_guard=false]``; the reader ``span`` asks no LLM and scores the tagger's answer
span (``ragsieve eval --no-llm``'s ``span_f1``/``span_em``) as the answer, so its F1 sits beside
the LLM readers' (``-`` for a method that gives no span). F1 and EM score the answer line (the
span where it answered, for the packaged readers: docs/llm.md); "reply F1" the LLM's reply
alone; "line from" counts where the line came from (span, choice, yes-no, reply). With
``--base-reader R`` each method
is paired with itself under reader R (a reader change's before/after) instead of with
``--base``. Compare readers run with the same ``RAGSIEVE_LLM_THREADS``: llama.cpp's greedy
replies change with the thread count.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from common import interval, read_rows

from ragsieve.evaluate.datasets import load_dataset
from ragsieve.evaluate.runner import EvalConfig, run_eval
from ragsieve.llm import get_llm
from ragsieve.llm.local import loop_cut
from ragsieve.methods import parse_methods

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before llama.cpp or torch load libgomp

#: The reader that asks no LLM: the tagger's answer span is the answer.
SPAN = "span"


def parse_reader(text: str) -> tuple[str, dict[str, Any]]:
    """``spec[key=value,...]`` -> (spec, options); values are Python literals or strings."""
    m = re.fullmatch(r"\s*([^\[\]]+?)\s*(?:\[(.*)\])?\s*", text)
    if not m:
        raise SystemExit(f"bad reader {text!r}: use SPEC or SPEC[key=value,...]")
    opts: dict[str, Any] = {}
    for item in filter(None, (x.strip() for x in (m.group(2) or "").split(","))):
        key, _, value = item.partition("=")
        literal = {"true": "True", "false": "False"}.get(value.strip().lower(), value.strip())
        try:
            opts[key.strip()] = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            opts[key.strip()] = value.strip()
    return m.group(1), opts


def run_reader(reader: str, args: argparse.Namespace) -> tuple[list[dict], dict[str, int]]:
    """Per-question rows and loop-guard stops per method of one reader (cached in --out)."""
    folder = args.out / re.sub(r"[^A-Za-z0-9_.=-]+", "_", reader)
    rows_file, loops_file = folder / "per_question.jsonl", folder / "loops.json"
    settings_file = folder / "settings.json"
    settings = {
        "reader": reader,
        **{k: str(getattr(args, k)) for k in ("dataset", "limit", "budget", "pool", "max_tokens")},
        "methods": args.methods,
    }
    saved = rows_file if rows_file.is_file() else folder / "per_question.jsonl.gz"
    if saved.is_file() and loops_file.is_file():
        # Rows are reused only for the settings they were run with: a changed method option or
        # budget under the same --out would otherwise be paired with the old rows silently.
        kept = json.loads(settings_file.read_text()) if settings_file.is_file() else None
        if kept != settings:
            raise SystemExit(f"{folder} holds rows of other settings ({kept}): use a fresh --out")
        return read_rows(saved), json.loads(loops_file.read_text())
    spec, opts = parse_reader(reader)
    span = spec == SPAN
    llm = None if span else get_llm(spec, **opts)
    load = getattr(llm, "load", None)
    if callable(load):  # load time stays out of the first question's seconds
        load()
    dataset = load_dataset(args.dataset, limit=args.limit)
    dataset = dataset.pooled() if args.pool else dataset
    rows, stopped = [], {}
    for method in parse_methods(args.methods):  # one run per method: loop stops per method
        cfg = EvalConfig(
            methods=[method],
            budget=args.budget,
            llm=spec,
            max_tokens=args.max_tokens,
            no_llm=span,
        )
        before = getattr(llm, "loops_stopped", 0)
        got = run_eval(dataset, cfg, llm=llm)["per_question"]
        rows += [span_row(r) for r in got] if span else got
        stopped[method.label] = getattr(llm, "loops_stopped", 0) - before
        print(f"  {reader} {method.label}: done", flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    loops_file.write_text(json.dumps(stopped))
    settings_file.write_text(json.dumps(settings))
    return rows, stopped


def span_row(row: dict[str, Any]) -> dict[str, Any]:
    """An eval row of the ``span`` reader: the span's scores as the answer's (``f1``, ``em``,
    ``prediction``), no tokens; a method without spans keeps no ``f1``."""
    out = {k: v for k, v in row.items() if k not in ("f1", "em", "prediction")}
    if "span_f1" in row:
        out.update(f1=row["span_f1"], em=row["span_em"], prediction=row["span_prediction"])
    return {**out, "prompt_tokens": 0, "completion_tokens": 0}


def line_from(rows: Iterable[dict]) -> str:
    """Where the answer lines came from, counted (``span 90, choice 4, yes-no 4, reply 2``):
    the runner's ``answer_from``, the answer line's ``line.kind``."""
    counts = Counter(r.get("answer_from", "reply") for r in rows)
    return ", ".join(f"{k} {n}" for k, n in counts.most_common())


def reader_seconds(rows: Iterable[dict]) -> str:
    """The reader's mean seconds a question (``timings["generate"]``), ``-`` where no row has
    it (the ``span`` reader, rows from before timings were kept)."""
    secs = [r["timings"]["generate"] for r in rows if "generate" in r.get("timings", {})]
    return f"{np.mean(secs):.1f}" if secs else "-"


def cell(per: dict, base: dict, metric: str) -> str:
    """``mean (diff [lo, hi])`` over the questions both have, or the mean alone (``-``: no
    question has the metric, e.g. the ``span`` reader of a method without spans)."""
    ids = [i for i in per if per[i].get(metric) is not None]
    if not ids:
        return "-"
    a = np.array([per[i][metric] for i in ids], dtype=float)
    if per is base:
        return f"{a.mean():.3f}"
    ids = [i for i in ids if base.get(i, {}).get(metric) is not None]
    if not ids:
        return f"{a.mean():.3f}"
    a = np.array([per[i][metric] for i in ids], dtype=float)
    mean, lo, hi = interval(a, np.array([base[i][metric] for i in ids], dtype=float))
    return f"{a.mean():.3f} ({mean:+.3f} [{lo:+.3f}, {hi:+.3f}])"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True, help="a built-in name or a questions JSONL file")
    ap.add_argument("--limit", type=int, default=200, help="the first N questions")
    ap.add_argument("--methods", default="naive,tagger")
    ap.add_argument(
        "--readers", default="local,qwen-0.5b", help="';'-separated reader specs (qwen-1.5b, ...)"
    )
    ap.add_argument("--base", default="naive", help="the method the others are paired with")
    ap.add_argument("--base-reader", default=None, help="pair with the same method here")
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument("--pool", action="store_true", help="all questions' documents, one corpus")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    readers = [r.strip() for r in re.split(r";|,(?![^\[]*\])", args.readers) if r.strip()]
    if args.base_reader and args.base_reader not in readers:
        readers.insert(0, args.base_reader)
    data = {r: run_reader(r, args) for r in readers}
    lines = [
        f"{args.dataset}{' pooled' if args.pool else ''}, first {args.limit} questions, "
        f"budget {args.budget}, "
        f"max tokens {args.max_tokens}; base: "
        + (f"reader {args.base_reader}" if args.base_reader else f"method {args.base}"),
        "",
        "| reader | method | F1 (diff [95% CI]) | EM (diff [95% CI]) | reply F1 (diff [95% CI]) "
        "| line from | prompt tok | answer tok | at cap | loops | reader s/q |",
        "|---|---|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for reader, (rows, stopped) in data.items():
        by: dict[str, dict[str, dict]] = {}
        for r in rows:
            by.setdefault(r["method"], {})[r["id"]] = r
        for method, per in by.items():
            if args.base_reader:
                base = {r["id"]: r for r in data[args.base_reader][0] if r["method"] == method}
                base = per if reader == args.base_reader else base
            else:
                base = by.get(args.base, per)
            capped = [r for r in per.values() if r.get("completion_tokens", 0) >= args.max_tokens]
            looped = stopped.get(method, 0) + sum(
                loop_cut(r.get("reply") or r.get("prediction", "")) is not None for r in capped
            )
            prompt = np.mean([r.get("prompt_tokens", 0) for r in per.values()])
            answer = np.mean([r.get("completion_tokens", 0) for r in per.values()])
            lines.append(
                f"| {reader} | {method} | {cell(per, base, 'f1')} | {cell(per, base, 'em')} "
                f"| {cell(per, base, 'reply_f1')} | {line_from(per.values())} | {prompt:.0f} "
                f"| {answer:.1f} | {len(capped)} | {looped} | {reader_seconds(per.values())} |"
            )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
