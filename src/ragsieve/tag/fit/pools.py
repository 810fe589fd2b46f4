"""Question pools with sentence gold, and their metrics: what an operating point is chosen on.

A pool is one question's ten passages as the tagger reads them (title, sentences, 0/1 gold per
sentence) with its answers. Splits (nothing on ``test`` chose anything; :func:`train_pools`
holds questions training read):

- **dev**: the HotpotQA train questions held out of training (:func:`hotpot_dev_questions`: 95
  questions, their 10 distractor-format paragraphs) and SQuAD v1.1 *train* questions of the
  dev articles (``SQUAD_TRAIN_DEV_MOD``): the answer paragraph and its article's 9 BM25-nearest
  paragraphs.
- **test**: AMOR's 100 HotpotQA questions (their 10 paragraphs) and SQuAD v1.1 dev questions of
  articles 0-23 (pools built the same way as on dev).

Naive is the pool's passages in dense (MiniLM) order, whole, while they fit the budget. Metrics
count cl100k tokens of the kept sentences, the share of gold sentences kept (evidence recall),
whether an answer string is in the context (answer recall) and the token compression of gold
and of distractor passages separately (OpenProvence's report).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.data import read_training_json
from ragsieve.metrics import answer_recall
from ragsieve.tag.fit.data import (
    SQUAD_TRAIN,
    SQUAD_TRAIN_DEV_MOD,
    hotpot_dev_questions,
    hotpot_train_questions,
)
from ragsieve.text import count_tokens, split_sentences

AMOR = "hotpotqa/hotpot_dev_sample100_amor_withretrieval.jsonl"
SQUAD_DEV = "squad/dev-v1.1.json"

#: One question: {"question", "pool": [(title, sentences, gold labels)], "answers"}.
Pool = dict[str, Any]


def hotpot_pool(obj: dict[str, Any]) -> Pool:
    """A HotpotQA distractor-format question (or AMOR's) as a pool with sentence gold."""
    gold: dict[str, set[int]] = {}
    for fact in obj["supporting_facts"]:  # AMOR lists a title's indexes; HotpotQA gives one
        idx = fact[1] if isinstance(fact[1], list) else [fact[1]]
        gold.setdefault(fact[0], set()).update(int(i) for i in idx)
    pool = []
    for title, sents in obj["context"]:
        keep = [(i, s.strip()) for i, s in enumerate(sents) if s.strip()]
        pool.append((title, [s for _, s in keep], [int(i in gold.get(title, ())) for i, _ in keep]))
    return {
        "question": obj["question"].strip(),
        "pool": pool,
        "answers": [str(obj.get("answer", ""))],
    }


def squad_pools(articles: list[dict[str, Any]], n: int, seed: int) -> list[Pool]:
    """``n`` questions: the answer paragraph and its article's 9 BM25-nearest others; the gold
    sentence is the one holding the first answer's start."""
    from ragsieve.rerank.bm25 import BM25Index

    where = [
        (ai, pi, qi)
        for ai, a in enumerate(articles)
        for pi, p in enumerate(a["paragraphs"])
        for qi in range(len(p["qas"]))
    ]
    picked = sorted(random.Random(seed).sample(where, min(n, len(where))))
    out = []
    for ai, pi, qi in picked:
        a = articles[ai]
        title = a["title"].replace("_", " ")
        paras = [p["context"] for p in a["paragraphs"]]
        qa = a["paragraphs"][pi]["qas"][qi]
        q = qa["question"].strip()
        near = [int(i) for i in BM25Index(paras).top(q, 10) if int(i) != pi][:9]
        start = int(qa["answers"][0]["answer_start"])
        pool = []
        for j in [pi, *near]:
            spans = [(x, y) for x, y in split_sentences(paras[j]) if paras[j][x:y].strip()]
            labels = [int(j == pi and x <= start < y) for x, y in spans]
            pool.append((title, [paras[j][x:y] for x, y in spans], labels))
        random.Random(seed + ai + pi).shuffle(pool)
        out.append({"question": q, "pool": pool, "answers": [x["text"] for x in qa["answers"]]})
    return out


def squad_train_articles(data: Path, dev: bool) -> list[dict[str, Any]]:
    """SQuAD v1.1 train articles of the dev split (``dev``: never read by training), or the
    others, which training reads."""
    arts = read_training_json(data / SQUAD_TRAIN)["data"]
    return [a for i, a in enumerate(arts) if (i % 20 == SQUAD_TRAIN_DEV_MOD) == dev]


def train_pools(data: Path, squad: int, seed: int = 23) -> dict[str, list[Pool]]:
    """Pools of questions training read (for the passage head's refit, never for choosing a
    threshold): every HotpotQA training question and ``squad`` SQuAD train questions of the
    training articles, built as the dev pools are."""
    return {
        "hotpot": [hotpot_pool(o) for o in hotpot_train_questions(data)],
        "squad": squad_pools(squad_train_articles(data, dev=False), squad, seed),
    }


def load_split(
    split: str, data: Path, limit: int | None = None, squad: int = 100, seed: int = 5
) -> dict[str, list[Pool]]:
    """The ``dev`` or ``test`` pools: {"hotpot": [...], "squad": [...]}, ``squad`` SQuAD
    questions drawn with ``seed`` (``limit``: at most that many of each)."""
    if split == "dev":
        hot = [hotpot_pool(o) for o in hotpot_dev_questions(data)]
        sq = squad_pools(squad_train_articles(data, dev=True), squad, seed)
    else:
        rows = [json.loads(x) for x in (data / AMOR).open(encoding="utf-8") if x.strip()]
        hot = [hotpot_pool({**r, "context": r.get("context") or r.get("contexts")}) for r in rows]
        sq = squad_pools(read_training_json(data / SQUAD_DEV)["data"][:24], squad, seed)
    if limit:
        hot, sq = hot[:limit], sq[:limit]
    return {"hotpot": hot, "squad": sq}


def dense_order(
    question: str, pool: list[tuple[str, list[str], list[int]]], embed: Any
) -> list[int]:
    """Passage indexes by MiniLM cosine to the question (naive's order)."""
    vecs = embed.embed([question] + [f"{t}: {' '.join(s)}" for t, s, _ in pool])
    sims = np.asarray(vecs[1:]) @ np.asarray(vecs[0])
    return [int(i) for i in np.argsort(-sims, kind="stable")]


def _counts(q: Pool) -> dict[str, Any]:
    """Token counts of a pool's sentences and passages and its gold, computed once per pool
    (a sweep measures the same pool at dozens of points) and kept in ``q["counts"]``."""
    if "counts" not in q:
        pool = q["pool"]
        gold = {(p, s) for p, (_, _, ys) in enumerate(pool) for s, y in enumerate(ys) if y}
        gold_p = {p for p, _ in gold}
        whole = [count_tokens(" ".join(sents)) for _, sents, _ in pool]
        q["counts"] = {
            "sentence": [[count_tokens(x) for x in sents] for _, sents, _ in pool],
            "passage": whole,
            "gold": gold,
            "gold_passages": gold_p,
            "gold_tokens": sum(whole[p] for p in gold_p),
            "distractor_tokens": sum(n for p, n in enumerate(whole) if p not in gold_p),
        }
    return q["counts"]


def measure(kept: list[tuple[int, int, float]], q: Pool, budget: int | None) -> dict[str, float]:
    """Kept (passage, sentence, prob) -> the budget's context (most probable first while it
    fits, then source order) and its metrics."""
    pool = q["pool"]
    counts = _counts(q)
    tok = counts["sentence"]
    chosen, used = [], 0
    for p, s, _ in sorted(kept, key=lambda x: -x[2]):
        n = tok[p][s]
        if budget is None or used + n <= budget:
            chosen.append((p, s))
            used += n
    chosen.sort()
    texts = [pool[p][1][s] for p, s in chosen]
    gold, gold_p = counts["gold"], counts["gold_passages"]
    tok_gold, tok_dis = counts["gold_tokens"], counts["distractor_tokens"]
    kept_gold = sum(tok[p][s] for p, s in chosen if p in gold_p)
    kept_dis = sum(tok[p][s] for p, s in chosen if p not in gold_p)
    return {
        "tokens": float(count_tokens("\n\n".join(texts))),
        "evidence_recall": len(gold & set(chosen)) / max(1, len(gold)),
        "answer_recall": answer_recall(texts, q["answers"]),
        "gold_kept": kept_gold / max(1, tok_gold),
        "distractor_kept": kept_dis / max(1, tok_dis),
    }


def naive(q: Pool, order: list[int], budget: int | None) -> dict[str, float]:
    """Whole passages in ``order`` while they fit ``budget`` (None: all of them)."""
    pool = q["pool"]
    kept, used = [], 0
    for p in order:
        n = _counts(q)["passage"][p]
        if budget is not None and used + n > budget:
            break
        kept += [(p, s, 1.0 - 0.001 * i) for i, s in enumerate(range(len(pool[p][1])))]
        used += n
    return measure(kept, q, None)


#: How far below naive a dev set's answer recall may fall and still count as "at naive's": one
#: question in 100 (the dev sets hold 95 to 400 questions; one question is within their noise).
TOLERANCE = 0.01


def choose_point(
    points: dict[str, dict[str, dict[str, float]]],
    naive_recall: dict[str, float],
    tolerance: float = TOLERANCE,
) -> str:
    """The operating-point rule: of the points (per set: key -> metrics),
    the one with the fewest mean tokens whose answer recall on every set stays at naive's
    within ``tolerance``; if none does, the best mean answer recall. Returns the key."""
    keys = list(next(iter(points.values())))
    ok = [
        k
        for k in keys
        if all(points[s][k]["answer_recall"] >= naive_recall[s] - tolerance - 1e-9 for s in points)
    ]
    if ok:
        return min(ok, key=lambda k: float(np.mean([points[s][k]["tokens"] for s in points])))
    return max(keys, key=lambda k: float(np.mean([points[s][k]["answer_recall"] for s in points])))


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    """Per-key means (answer recall skips the questions it is undefined for)."""
    keys = rows[0].keys()
    return {
        k: float(np.mean([r[k] for r in rows if r[k] is not None]))
        for k in keys
        if any(r[k] is not None for r in rows)
    }
