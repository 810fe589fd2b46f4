"""The tagger's training examples, from ``shared/data`` only, with every split written down.

An :class:`Example` is one (question, passage) pair: the passage's sentences, a label per
sentence (1 keep, 0 drop, ``UNKNOWN`` when the gold is a paragraph and says nothing about its
sentences) and a passage label for the reranking head. Where the gold is a paragraph, a positive
passage only asks that *some* sentence be kept (a multiple-instance term in the loss) and a
negative passage labels all of its sentences 0.

Splits (no question a benchmark scores is trained on; BENCHMARKS.md lists what is unseen):

* **HotpotQA train 100 (distractor, sentence gold)**: questions 0-79 train, 80-99 dev.
* **HotpotQA train 500 (gold sentences only)**: all train. Each question's gold sentences
  are one passage, with sentences of other questions' gold mixed in as negatives
  (a synthetic passage: there are no distractor paragraphs in that file).
* **SQuAD v1.1 dev**, by article: articles 0-23 (in file order) are *never* read here; the
  benchmarks' ``--limit`` runs read the first articles. Articles 24-43 train, 44-47 dev. The gold
  sentence holds the first answer's start; a BM25-hard paragraph of the same article is the
  negative.
* **HotpotQA IRCoT 500 (paragraph gold)**: questions 0-199 are never read (the benchmarks use
  the first ones); 200-499 train.
* **MuSiQue train 100 (paragraph gold)**: all train.
* **QASPER train (evidence paragraphs)**: train; negatives are BM25-hard paragraphs of the paper.
* **MS MARCO dev-small (one positive passage per query)**: the reranking head only; negatives
  are other queries' passages, BM25-hard. (The reranker's training read MS MARCO too; no
  benchmark here scores MS MARCO with the tagger.)

AMOR's HotpotQA 100, QASPER validation/test, SQuAD articles 0-23, IRCoT 0-199, QuALITY, SQuALITY
and WikiText are never read by this module.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsieve.data import (
    MSMARCO,
    QASPER_TRAIN_P,
    QASPER_TRAIN_Q,
    fix_mojibake,
    gold_paragraphs,
    msmarco_positives,
    qasper_papers,
    read_training_json,
)
from ragsieve.errors import InputError
from ragsieve.text import sentence_texts, split_sentences

UNKNOWN = -1

HOTPOT_DISTRACTOR = "train_extra/hotpotqa_train100_distractor.json"
HOTPOT_EVIDENCE = "train_extra/hotpotqa_train500_evidence_only.jsonl"
SQUAD_DEV = "squad/dev-v1.1.json"
IRCOT = "hotpotqa/hotpot_dev_subsampled500_ircot.jsonl"
MUSIQUE = "train_extra/musique_train100.json"

#: SQuAD articles (file order) and IRCoT questions that training never reads.
SQUAD_HELD_OUT_ARTICLES = range(0, 24)
SQUAD_DEV_ARTICLES = range(44, 48)
IRCOT_HELD_OUT = range(0, 200)
HOTPOT_DEV_QUESTIONS = range(80, 100)


@dataclass
class Example:
    question: str
    title: str
    sentences: list[str]
    labels: list[int]
    passage_label: int
    source: str
    split: str = "train"


@dataclass
class SourceSizes:
    """How many questions each source contributes (0 leaves it out: the ablation)."""

    hotpot: int = 80
    hotpot_evidence: int = 500
    squad: int = 2000
    ircot: int = 300
    musique: int = 100
    qasper: int = 800
    msmarco: int = 1200


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InputError(f"training file {path} not found")
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _paragraph(
    question: str, title: str, text: str, positive: bool, source: str, split: str = "train"
) -> Example | None:
    sents = [s for s in sentence_texts(text) if s.strip()]
    if not sents:
        return None
    labels = [UNKNOWN if positive else 0] * len(sents)
    return Example(question, title, sents, labels, int(positive), source, split)


def _bm25_top(paras: list[str], query: str, n: int) -> list[int]:
    from ragsieve.rerank.bm25 import BM25Index

    return [int(i) for i in BM25Index(paras).top(query, n)]


def hotpot_distractor(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """Sentence gold: every paragraph of the 10, the supporting facts labelled 1."""
    out: list[Example] = []
    for qi, obj in enumerate(read_training_json(data_dir / HOTPOT_DISTRACTOR)):
        split = "dev" if qi in HOTPOT_DEV_QUESTIONS else "train"
        if split == "train" and qi >= n:
            continue
        gold: dict[str, set[int]] = {}
        for title, idx in obj["supporting_facts"]:
            gold.setdefault(title, set()).add(int(idx))
        paras: dict[str, tuple[list[str], list[int]]] = {}
        for title, sents in obj["context"]:
            keep = [(i, s.strip()) for i, s in enumerate(sents) if s.strip()]
            if keep:
                labels = [int(i in gold.get(title, set())) for i, _ in keep]
                paras[title] = ([s for _, s in keep], labels)
        q = obj["question"].strip()
        for title, (sents, labels) in paras.items():
            out.append(Example(q, title, sents, labels, int(any(labels)), "hotpot", split))
        # The second hop: the question joined with one gold paragraph's gold sentences reads
        # the other paragraphs (both gold paragraphs in turn; four negatives each).
        for bridge in [t for t in gold if t in paras]:
            hop_q = " ".join([q, *(s for s, y in zip(*paras[bridge], strict=True) if y)])
            others = [t for t in paras if t != bridge]
            pos = [t for t in others if t in gold]
            neg = [t for t in others if t not in gold]
            for t in pos + rng.sample(neg, min(4, len(neg))):
                sents, labels = paras[t]
                out.append(Example(hop_q, t, sents, labels, int(any(labels)), "hotpot", split))
    return out


def hotpot_evidence(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """Gold sentences of a question plus two to four other questions' gold sentences."""
    rows = _read_jsonl(data_dir / HOTPOT_EVIDENCE)[:n]
    pool = [_norm(s) for r in rows for s in r["evidence"]]
    out: list[Example] = []
    for r in rows:
        gold = [_norm(s) for s in r["evidence"] if s.strip()]
        if not gold:
            continue
        negs = [s for s in rng.sample(pool, min(len(pool), 6)) if s not in gold][
            : rng.randint(2, 4)
        ]
        items = [(s, 1) for s in gold] + [(s, 0) for s in negs]
        rng.shuffle(items)
        out.append(
            Example(
                r["question"].strip(),
                "",
                [s for s, _ in items],
                [y for _, y in items],
                1,
                "hotpot_evidence",
            )
        )
    return out


def squad(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """Articles 24-43 (train, ``n`` questions drawn) and 44-47 (dev, all): the answer sentence
    in its paragraph, and a BM25-hard paragraph of the same article as a negative."""
    from ragsieve.rerank.bm25 import BM25Index

    data = read_training_json(data_dir / SQUAD_DEV)["data"]
    where = [
        (ai, pi, qi)
        for ai, article in enumerate(data)
        if ai not in SQUAD_HELD_OUT_ARTICLES
        for pi, para in enumerate(article["paragraphs"])
        for qi in range(len(para["qas"]))
    ]
    train = [w for w in where if w[0] not in SQUAD_DEV_ARTICLES]
    dev = [w for w in where if w[0] in SQUAD_DEV_ARTICLES]
    picked = sorted(rng.sample(train, min(n, len(train)))) + dev
    bm25: dict[int, Any] = {}
    out: list[Example] = []
    for ai, pi, qi in picked:
        article = data[ai]
        split = "dev" if ai in SQUAD_DEV_ARTICLES else "train"
        title = article["title"].replace("_", " ")
        paras = [p["context"] for p in article["paragraphs"]]
        text = paras[pi]
        spans = [(a, b) for a, b in split_sentences(text) if text[a:b].strip()]
        if not spans:
            continue
        qa = article["paragraphs"][pi]["qas"][qi]
        start = qa["answers"][0]["answer_start"]
        gold = max([i for i, (a, _) in enumerate(spans) if a <= start] or [0])
        q = qa["question"].strip()
        sents = [text[a:b] for a, b in spans]
        out.append(
            Example(q, title, sents, [int(i == gold) for i in range(len(sents))], 1, "squad", split)
        )
        if ai not in bm25:
            bm25[ai] = BM25Index(paras)
        hard = [int(i) for i in bm25[ai].top(q, 3) if int(i) != pi][:1]
        for h in hard:
            neg = _paragraph(q, title, paras[h], False, "squad", split)
            if neg is not None:
                out.append(neg)
    return out


def _paragraph_gold(
    question: str,
    paragraphs: list[dict[str, Any]],
    negatives: int,
    source: str,
    rng: random.Random,
) -> list[Example]:
    """The gold paragraphs of one question (``is_supporting``; sentences unknown) and
    ``negatives`` of its other paragraphs drawn at random."""
    pos = [p for p in paragraphs if p.get("is_supporting")]
    neg = [p for p in paragraphs if not p.get("is_supporting")]
    out = []
    for p in pos + rng.sample(neg, min(negatives, len(neg))):
        ex = _paragraph(
            question, p["title"], p["paragraph_text"], bool(p.get("is_supporting")), source
        )
        if ex is not None:
            out.append(ex)
    return out


def ircot(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """IRCoT questions 200-499: gold paragraphs and three negatives each."""
    rows = _read_jsonl(data_dir / IRCOT)
    out: list[Example] = []
    for qi in range(IRCOT_HELD_OUT.stop, min(len(rows), IRCOT_HELD_OUT.stop + n)):
        obj = rows[qi]
        out += _paragraph_gold(obj["question_text"].strip(), obj["contexts"], 3, "ircot", rng)
    return out


def musique(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """MuSiQue train: gold paragraphs and four negatives each."""
    out: list[Example] = []
    for obj in read_training_json(data_dir / MUSIQUE)[:n]:
        out += _paragraph_gold(obj["question"].strip(), obj["paragraphs"], 4, "musique", rng)
    return out


def qasper(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    papers = qasper_papers(data_dir / QASPER_TRAIN_P)
    questions = read_training_json(data_dir / QASPER_TRAIN_Q)
    rng.shuffle(questions)
    out: list[Example] = []
    used = 0
    for q in questions:
        if used >= n:
            break
        paras = papers.get(q["paper_id"])
        if not paras or len(paras) < 3:
            continue
        gold = gold_paragraphs(q, paras)
        if not gold:
            continue
        text = q["question"].strip()
        hard = [i for i in _bm25_top(paras, text, 4 + len(gold)) if i not in gold][:1]
        for i, positive in [(rng.choice(gold), True)] + [(h, False) for h in hard]:
            ex = _paragraph(text, "", fix_mojibake(paras[i]), positive, "qasper")
            if ex is not None:
                out.append(ex)
        used += 1
    return out


def msmarco(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    from ragsieve.rerank.bm25 import BM25Index

    queries, passages = msmarco_positives(data_dir)
    index = BM25Index(passages)
    out: list[Example] = []
    for qi in rng.sample(range(len(queries)), min(n, len(queries))):
        hard = [int(i) for i in index.top(queries[qi], 4) if int(i) != qi][:1]
        for i, positive in [(qi, True)] + [(h, False) for h in hard]:
            ex = _paragraph(queries[qi], "", passages[i], positive, "msmarco")
            if ex is not None:
                out.append(ex)
    return out


SOURCES: dict[str, Callable[[Path, int, random.Random], list[Example]]] = {
    "hotpot": hotpot_distractor,
    "hotpot_evidence": hotpot_evidence,
    "squad": squad,
    "ircot": ircot,
    "musique": musique,
    "qasper": qasper,
    "msmarco": msmarco,
}

SOURCE_FILES: dict[str, tuple[str, ...]] = {
    "hotpot": (HOTPOT_DISTRACTOR,),
    "hotpot_evidence": (HOTPOT_EVIDENCE,),
    "squad": (SQUAD_DEV,),
    "ircot": (IRCOT,),
    "musique": (MUSIQUE,),
    "qasper": (QASPER_TRAIN_Q, QASPER_TRAIN_P),
    "msmarco": (MSMARCO,),
}


def build_examples(data_dir: Path, sizes: SourceSizes, seed: int) -> list[Example]:
    """Every source's examples (train and dev splits), each source with its own seeded rng so
    that leaving one out does not change the others."""
    out: list[Example] = []
    for i, (name, build) in enumerate(SOURCES.items()):
        n = int(getattr(sizes, name))
        if n <= 0 and name not in ("hotpot", "squad"):
            continue
        out += build(data_dir, n, random.Random(seed * 1000 + i))
    return out
