"""The tagger's operating point, chosen at the pipeline level (issue 31, item 5).

Whole questions, both hops, the passage rejection and the budget as a ceiling, exactly as
``ragsieve.tag.prune`` runs them, swept over the sentence threshold and the passage threshold.
Each question's pool is read once per distinct tagger input (a caching tagger), so a sweep of
dozens of points costs little more than one.

    .venv/bin/python -m benchmarks tagger_sweep --split dev  [--model DIR] [--limit N]
    .venv/bin/python -m benchmarks tagger_sweep --split test [--model DIR]

Splits (nothing on ``test`` chose anything):
- **dev**: HotpotQA train questions in distractor format held out of training
  (``tag.fit.data.hotpot_dev_questions``: 95 questions, 10 paragraphs each, sentence gold), and
  SQuAD v1.1 *train* dev-articles questions (``SQUAD_TRAIN_DEV_MOD``): the answer paragraph
  and the 9 BM25-nearest paragraphs of its article.
- **test**: AMOR's 100 HotpotQA questions (their 10 paragraphs each, sentence gold) and SQuAD
  v1.1 dev questions of articles 0-23 (pools built the same way as on dev).

``--decision stack`` sweeps the stacked keep decision (``ragsieve.tag.stack``) instead.

Naive: the pool's passages in dense (MiniLM) order, whole, while they fit the budget.
Printed per point: tokens (cl100k, the kept sentences joined), x naive, evidence recall
(gold sentences kept), answer recall (yes/no questions left out), and the token compression of
gold and of distractor passages separately (OpenProvence's report). The default is the point
with the fewest tokens whose dev answer recall stays at naive's (within one question:
``TOLERANCE``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import RESULTS

from ragsieve.data import find_data_dir
from ragsieve.tag.fit import pools
from ragsieve.tag.model import OnnxTagger, Passage, Tagged
from ragsieve.tag.prune import prune
from ragsieve.tag.settings import TaggerSettings

THRESHOLDS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
PASSAGE_THRESHOLDS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
#: The stacked decision's grid (``--decision stack``: ``threshold`` on the stacker's
#: probability, with the stacker's own passage floor).
STACK_THRESHOLDS = (0.03, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3)


class CachingTagger:
    """A tagger whose readings are memoised by (question, passage): the sweep re-runs
    ``prune`` at every point and only a new bridge query costs a forward pass."""

    name = "tagger"

    def __init__(self, inner: OnnxTagger) -> None:
        self.inner = inner
        self.cache: dict[tuple[str, str, tuple[str, ...]], Tagged] = {}
        self.threshold = inner.threshold
        self.passage_threshold = inner.passage_threshold
        self.stacker = inner.stacker

    def tag(self, question: str, passages: Sequence[Passage]) -> list[Tagged]:
        keys = [(question, t, tuple(s)) for t, s in passages]
        todo = [i for i, k in enumerate(keys) if k not in self.cache]
        if todo:
            for i, t in zip(
                todo, self.inner.tag(question, [passages[i] for i in todo]), strict=True
            ):
                self.cache[keys[i]] = t
        return [self.cache[k] for k in keys]


def sweep(
    model: Path | None,
    split: str,
    limit: int | None,
    budget: int | None,
    hops: int,
    only: Sequence[str] = ("hotpot", "squad"),
    decision: str = "raw",
) -> dict:
    from ragsieve.embed import get_embedder

    data = find_data_dir()
    sets = {k: v for k, v in pools.load_split(split, data, limit).items() if k in only}
    tagger = CachingTagger(OnnxTagger(model))
    embed = get_embedder("minilm-onnx")
    out: dict[str, Any] = {
        "split": split,
        "budget": budget,
        "hops": hops,
        "decision": decision,
        "sets": {},
    }
    st = tagger.stacker
    # the model's own points (budgeted, open) are rows of the curve, whatever the grid
    own = {st.threshold, st.open_threshold or st.threshold} if st is not None else set()
    grid: list[tuple[float, float | None]] = (
        [(th, None) for th in sorted({*STACK_THRESHOLDS, *own})]  # None: the stacker's floor
        if decision == "stack"
        else [(th, pth) for th in THRESHOLDS for pth in PASSAGE_THRESHOLDS]
    )
    for name, questions in sets.items():
        t0 = time.perf_counter()
        base = [
            pools.naive(q, pools.dense_order(q["question"], q["pool"], embed), budget)
            for q in questions
        ]
        points = {}

        def settings(th: float, pth: float | None) -> TaggerSettings:
            """The sweep's point: its thresholds, its decision and hops, no carrying."""
            return TaggerSettings(
                threshold=th,
                passage_threshold=pth,
                stack=decision == "stack",
                hops=hops,
                min_keep=1,
                lead=False,
                link=False,
            )

        for th, pth in grid:
            rows = []
            for q in questions:
                passages = [(t, s) for t, s, _ in q["pool"]]
                pr = prune(tagger, q["question"], passages, settings(th, pth))
                kept = [(k.passage, k.sentence, k.prob) for k in pr.kept]
                rows.append(pools.measure(kept, q, budget))
            points[f"{th}/{'floor' if pth is None else pth}"] = pools.mean(rows)
        out["sets"][name] = {
            "questions": len(questions),
            "naive": pools.mean(base),
            "points": points,
            "seconds": round(time.perf_counter() - t0, 1),
        }
        print(
            f"{split} {name}: {len(questions)} questions, {time.perf_counter() - t0:.0f}s",
            flush=True,
        )
    return out


def choose(result: dict, tolerance: float = pools.TOLERANCE) -> tuple[float, float]:
    """``tag.fit.pools.choose_point`` over the raw grid. With ``tolerance=0`` the shipped model's
    dev sweep picks 0.2/0.5, which keeps the same HotpotQA tokens at 0.045 less answer recall
    than 0.3/0.3 (BENCHMARKS.md)."""
    sets = result["sets"]
    best = pools.choose_point(
        {n: s["points"] for n, s in sets.items()},
        {n: s["naive"]["answer_recall"] for n, s in sets.items()},
        tolerance,
    )
    th, pth = best.split("/")
    return float(th), float(pth)


def table(result: dict) -> str:
    lines = []
    for name, s in result["sets"].items():
        nv = s["naive"]
        head = f"{result['split']}: {name} ({s['questions']} questions"
        lines += [
            f"#### {head}, budget {result['budget']}, hops {result['hops']})",
            "",
            "| threshold / passage threshold | tokens | x naive | evidence recall | "
            "answer recall | gold kept | distractor kept |",
            "|---|---|---|---|---|---|---|",
            f"| naive | {nv['tokens']:.0f} | 1.00 | {nv['evidence_recall']:.3f} | "
            f"{nv['answer_recall']:.3f} | {nv['gold_kept']:.3f} | {nv['distractor_kept']:.3f} |",
        ]
        for k, m in s["points"].items():
            lines.append(
                f"| {k} | {m['tokens']:.0f} | {m['tokens'] / max(1.0, nv['tokens']):.2f} | "
                f"{m['evidence_recall']:.3f} | {m['answer_recall']:.3f} | {m['gold_kept']:.3f} | "
                f"{m['distractor_kept']:.3f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--budget", type=int, default=450, help="0: no budget (naive = all 10)")
    ap.add_argument("--hops", type=int, default=2)
    ap.add_argument("--name", default=None, help="results file stem")
    ap.add_argument("--sets", default="hotpot,squad", help="comma-separated: hotpot, squad")
    ap.add_argument(
        "--decision",
        choices=("raw", "stack"),
        default="raw",
        help="raw: threshold x passage threshold on the tagger's probability; stack: the "
        "stacker's threshold (its own choice is made by `python -m ragsieve.tag.fit.stack`)",
    )
    args = ap.parse_args()
    only = [x.strip() for x in args.sets.split(",") if x.strip()]
    budget = None if args.budget <= 0 else args.budget
    result = sweep(args.model, args.split, args.limit, budget, args.hops, only, args.decision)
    if args.split == "dev" and args.decision == "raw":
        result["chosen"] = choose(result)
        print(f"chosen threshold / passage threshold: {result['chosen']}")
    stem = args.name or f"tagger_sweep_{args.split}"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    (RESULTS / f"{stem}.md").write_text(table(result), "utf-8")
    print(table(result))


if __name__ == "__main__":
    main()
