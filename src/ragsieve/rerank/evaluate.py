"""``ragsieve eval-reranker``: held-out ranking tasks and their metrics.

Tasks (each a question, its candidate passages and the gold ones; none is used in training):

* ``qasper-val`` — QASPER validation: a question against *all* paragraphs of its paper (headers
  dropped); gold = the annotators' textual evidence paragraphs (questions without any matched
  evidence are skipped).
* ``squad`` — SQuAD v1.1 dev: a question against all paragraphs of its Wikipedia article; gold =
  the paragraph it was written on.
* ``hotpotqa`` — IRCoT's HotpotQA dev: a question against its 10 paragraphs; gold = the 2
  supporting paragraphs.

``n`` questions per set are drawn with ``random.Random(seed)``. Metrics per question, averaged:
MRR@10 (1 / rank of the first gold passage, 0 beyond 10), nDCG@10 (binary gains, ideal DCG over
``min(#gold, 10)`` gold passages) and Recall@1 (share of the gold passages at rank 1, so at most
0.5 on HotpotQA's two-gold questions). Equal scores are ordered pessimistically (gold after
non-gold), so a scorer gains nothing from ties.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.errors import InputError


@dataclass(frozen=True)
class RankTask:
    qid: str
    query: str
    passages: tuple[str, ...]
    gold: frozenset[int]


# --------------------------------------------------------------------------- metrics


def ranking(scores: Sequence[float], gold: frozenset[int] | set[int]) -> list[int]:
    """Indices best first; ties put gold passages last (pessimistic), then by index."""
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i in gold, i))


def mrr_at_k(order: Sequence[int], gold: frozenset[int] | set[int], k: int = 10) -> float:
    for rank, i in enumerate(order[:k], start=1):
        if i in gold:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(order: Sequence[int], gold: frozenset[int] | set[int], k: int = 10) -> float:
    if not gold:
        return 0.0
    dcg = sum(1.0 / math.log2(r + 1) for r, i in enumerate(order[:k], start=1) if i in gold)
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(len(gold), k) + 1))
    return dcg / ideal


def recall_at_k(order: Sequence[int], gold: frozenset[int] | set[int], k: int = 1) -> float:
    if not gold:
        return 0.0
    return len(set(order[:k]) & set(gold)) / len(gold)


def task_metrics(scores: Sequence[float], gold: frozenset[int] | set[int]) -> dict[str, float]:
    order = ranking(scores, gold)
    return {
        "mrr@10": mrr_at_k(order, gold, 10),
        "ndcg@10": ndcg_at_k(order, gold, 10),
        "recall@1": recall_at_k(order, gold, 1),
    }


# --------------------------------------------------------------------------- tasks


def _sample(tasks: list[RankTask], n: int, seed: int) -> list[RankTask]:
    if n >= len(tasks):
        return tasks
    keep = sorted(random.Random(seed).sample(range(len(tasks)), n))
    return [tasks[i] for i in keep]


def _need(path: Path) -> Path:
    if not path.is_file():
        raise InputError(f"evaluation file {path} not found")
    return path


def load_qasper_val(data_dir: Path) -> list[RankTask]:
    from ragsieve.data import gold_paragraphs, qasper_papers

    papers = qasper_papers(_need(data_dir / "qasper/validation_papers_fulltext.jsonl"))
    questions = json.loads(
        _need(data_dir / "qasper/questions_validation.json").read_text(encoding="utf-8")
    )
    tasks = []
    for q in questions:
        paras = papers.get(q["paper_id"])
        if not paras:
            continue
        gold = gold_paragraphs(q, paras)
        if gold:
            tasks.append(
                RankTask(q["question_id"], q["question"].strip(), tuple(paras), frozenset(gold))
            )
    return tasks


def load_squad(data_dir: Path) -> list[RankTask]:
    data = json.loads(_need(data_dir / "squad/dev-v1.1.json").read_text(encoding="utf-8"))
    tasks = []
    for article in data["data"]:
        paras = tuple(p["context"].strip() for p in article["paragraphs"])
        for pi, para in enumerate(article["paragraphs"]):
            for qa in para["qas"]:
                tasks.append(RankTask(qa["id"], qa["question"].strip(), paras, frozenset({pi})))
    return tasks


def load_hotpotqa(data_dir: Path) -> list[RankTask]:
    path = _need(data_dir / "hotpotqa/hotpot_dev_subsampled500_ircot.jsonl")
    tasks = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            obj = json.loads(line)
            ctx = obj["contexts"]
            paras = tuple(f"{c['title']}: {c['paragraph_text'].strip()}" for c in ctx)
            gold = frozenset(i for i, c in enumerate(ctx) if c.get("is_supporting"))
            if gold:
                tasks.append(
                    RankTask(obj["question_id"], obj["question_text"].strip(), paras, gold)
                )
    return tasks


TASKS: dict[str, Callable[[Path], list[RankTask]]] = {
    "qasper-val": load_qasper_val,
    "squad": load_squad,
    "hotpotqa": load_hotpotqa,
}


def load_tasks(name: str, data_dir: Path, n: int, seed: int = 0) -> list[RankTask]:
    return _sample(TASKS[name](data_dir), n, seed)


# --------------------------------------------------------------------------- running


def _bi_encoder_scores(scorer: Any, tasks: list[RankTask]) -> list[np.ndarray]:
    """Cosines with each distinct text embedded once (SQuAD/QASPER repeat whole documents)."""
    texts = list(dict.fromkeys([t.query for t in tasks] + [p for t in tasks for p in t.passages]))
    vecs = scorer.embedder.embed(texts)
    row = {t: i for i, t in enumerate(texts)}
    out = []
    for t in tasks:
        q = vecs[row[t.query]]
        p = vecs[[row[x] for x in t.passages]]
        out.append(np.clip(p @ q, 0.0, 1.0))
    return out


def score_tasks(scorer: Any, tasks: list[RankTask]) -> list[np.ndarray]:
    from ragsieve.rerank.base import BiEncoderReranker

    if isinstance(scorer, BiEncoderReranker):
        return _bi_encoder_scores(scorer, tasks)
    return [np.asarray(scorer.score(t.query, list(t.passages))) for t in tasks]


def evaluate_scores(tasks: list[RankTask], scores: list[np.ndarray]) -> dict[str, float]:
    per = [task_metrics(s, t.gold) for t, s in zip(tasks, scores, strict=True)]
    return {k: round(float(np.mean([m[k] for m in per])), 4) for k in per[0]} if per else {}


def run_eval(
    rerankers: list[str],
    datasets: list[str],
    n: int = 200,
    seed: int = 0,
    data_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Every reranker on every dataset, in one process."""
    from ragsieve.data import find_data_dir
    from ragsieve.rerank.factory import get_reranker

    data_dir = find_data_dir(data_dir)
    scorers = {name: get_reranker(name) for name in rerankers}
    result: dict[str, Any] = {"n": n, "seed": seed, "datasets": {}}
    for ds in datasets:
        tasks = load_tasks(ds, data_dir, n, seed)
        pairs = sum(len(t.passages) for t in tasks)
        entry: dict[str, Any] = {"questions": len(tasks), "pairs": pairs, "scorers": {}}
        for name, scorer in scorers.items():
            t0 = time.perf_counter()
            scores = score_tasks(scorer, tasks)
            secs = time.perf_counter() - t0
            metrics = evaluate_scores(tasks, scores)
            entry["scorers"][name] = {**metrics, "seconds": round(secs, 1)}
            log(f"{ds} [{len(tasks)} q, {pairs} pairs] {name}: {metrics} ({secs:.0f}s)")
        result["datasets"][ds] = entry
    return result


def format_table(result: dict[str, Any]) -> str:
    lines = [
        "| dataset | questions | pairs | scorer | MRR@10 | nDCG@10 | Recall@1 | seconds |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for ds, entry in result["datasets"].items():
        for name, m in entry["scorers"].items():
            lines.append(
                f"| {ds} | {entry['questions']} | {entry['pairs']} | {name} | "
                f"{m['mrr@10']:.4f} | {m['ndcg@10']:.4f} | {m['recall@1']:.4f} | {m['seconds']} |"
            )
    return "\n".join(lines)
