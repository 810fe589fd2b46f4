"""The tagger's training examples, from ``shared/data`` only, with every split written down.

An :class:`Example` is one (question, passage) pair: the passage's sentences, a label per
sentence (1 keep, 0 drop, ``UNKNOWN`` when the gold is a paragraph and says nothing about its
sentences) and a passage label for the reranking head. Where the gold is a paragraph, a positive
passage only asks that *some* sentence be kept (a multiple-instance term in the loss) and a
negative passage labels all of its sentences 0.

Splits (no question a benchmark scores is trained on; BENCHMARKS.md lists what is unseen):

* **HotpotQA train 100 + 495 (distractor, sentence gold)**: questions 80-99 of the first
  file and 0-74 of the second are dev, the rest train. Every one of the 10 paragraphs is an
  example, and so is every other paragraph read again with the question joined by one gold
  paragraph's gold sentences (the second hop): the other gold paragraph keeps its labels and
  all eight distractors stay 0.
* **HotpotQA train 500 (gold sentences only)**: all train, less any question that a
  distractor-file dev question repeats. Each question's gold sentences
  are one passage, with sentences of other questions' gold mixed in as negatives
  (a synthetic passage: there are no distractor paragraphs in that file).
* **SQuAD v1.1 train** (87,599 questions, 442 articles; shares no paragraph with SQuAD dev):
  articles whose file index is 7 modulo 20 are dev, the rest train. The gold sentences hold
  the answer span. Each question also gets ``NEGATIVES`` whole-passage negatives, every
  sentence 0: BM25-hard and random paragraphs of its article and one of another article
  (a paragraph that contains the answer text is never a negative), and, for one question in
  ``HOP_NEGATIVE_RATE``, the question joined with its gold sentence reads two of them again
  (a second hop must leave unrelated passages at 0).
* **QED (Natural Questions train, 7,167 questions)**: ``example_id`` 3 modulo 20 is dev. The
  gold sentences overlap the short-answer span; negatives are BM25-hard and random paragraphs
  of the other questions (answer text absent), as for SQuAD.
* **SQuAD v1.1 dev is never read**: it is a test set entirely.
* **HotpotQA IRCoT 500 (paragraph gold)**: questions 0-199 are never read (the benchmarks use
  the first ones); 200-499 train.
* **MuSiQue train 100 (paragraph gold)**: all train.
* **QASPER train (evidence paragraphs)**: train; negatives are BM25-hard paragraphs of the paper.
* **MS MARCO dev-small (one positive passage per query)**: the reranking head only; negatives
  are other queries' passages, BM25-hard. (The reranker's training read MS MARCO too; no
  benchmark here scores MS MARCO with the tagger.)

AMOR's HotpotQA 100, QASPER validation/test, SQuAD dev, IRCoT 0-199, QuALITY, SQuALITY and
WikiText are never read by this module. MultiRC and WikiQA (research licences) are not read:
the shipped model may not train on them.

Lengths: the builders emit whole paragraphs; :func:`vary_lengths` cuts a share of them into
windows of 1-10 sentences at training time (the passages a chunker hands the tagger), so the
saved example file stays small (:func:`save_examples`).
"""

from __future__ import annotations

import json
import lzma
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsieve.data import (
    MSMARCO,
    QASPER_TRAIN_P,
    QASPER_TRAIN_Q,
    fix_mojibake,
    msmarco_positives,
    read_training_json,
)
from ragsieve.errors import InputError
from ragsieve.rerank.sources import qasper_train
from ragsieve.text import sentence_texts, split_sentences

UNKNOWN = -1

HOTPOT_DISTRACTOR = "train_extra/hotpotqa_train100_distractor.json"
HOTPOT_DISTRACTOR_495 = "train_extra/hotpotqa_train495_distractor.json"
HOTPOT_EVIDENCE = "train_extra/hotpotqa_train500_evidence_only.jsonl"
SQUAD_TRAIN = "train_extra/squad_v1.1_train/squad_v1.1_train_rebuilt_from_explorer.json"
QED_FILES = tuple(f"train_extra/qed_nq/nq-train-0{i}-qed.jsonl" for i in range(6))
IRCOT = "hotpotqa/hotpot_dev_subsampled500_ircot.jsonl"
MUSIQUE = "train_extra/musique_train100.json"

#: SQuAD dev is a test set entirely now that SQuAD train is here (every article held out).
SQUAD_HELD_OUT_ARTICLES = range(0, 48)
#: IRCoT questions that training never reads.
IRCOT_HELD_OUT = range(0, 200)
#: Dev questions of the two HotpotQA distractor files (the 100 file, then the 495 file).
HOTPOT_DEV_QUESTIONS = range(80, 100)
HOTPOT_495_DEV_QUESTIONS = range(0, 75)
#: SQuAD train articles (file index mod 20) and QED examples (id mod 20) kept for dev.
SQUAD_TRAIN_DEV_MOD = 7
QED_DEV_MOD = 3
#: Whole-passage negatives per question: 8 of 10 pool passages are distractors, so about
#: four negatives to each positive passage.
NEGATIVES = 4
#: One question in this many also reads two of its negatives with its gold sentences joined
#: to the question (a second hop over unrelated passages).
HOP_NEGATIVE_RATE = 6


@dataclass
class Example:
    question: str
    title: str
    sentences: list[str]
    labels: list[int]
    passage_label: int
    source: str
    split: str = "train"
    #: The answer text where a positive passage holds it ("" otherwise): the span head's target
    #: (:mod:`ragsieve.tag.span`), found again in the window's word pieces at training time.
    answer: str = ""


@dataclass
class SourceSizes:
    """How many questions each source contributes (0 leaves it out: the ablation)."""

    hotpot: int = 600
    hotpot_evidence: int = 500
    squad_train: int = 60000
    qed: int = 8000
    ircot: int = 300
    musique: int = 100
    qasper: int = 800
    msmarco: int = 3000


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InputError(f"training file {path} not found")
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _norm(text: str) -> str:
    return " ".join(text.split())


def _paragraph(
    question: str,
    title: str,
    text: str,
    positive: bool,
    source: str,
    split: str = "train",
    answer: str = "",
) -> Example | None:
    sents = [s for s in sentence_texts(text) if s.strip()]
    if not sents:
        return None
    labels = [UNKNOWN if positive else 0] * len(sents)
    found = with_answer(answer, sents, labels) if positive else ""
    return Example(question, title, sents, labels, int(positive), source, split, found)


def with_answer(answer: str, sentences: list[str], labels: list[int]) -> str:
    """``answer`` if a gold sentence (or, where the labels are unknown, any sentence) holds it,
    case-insensitively; "" otherwise (yes/no answers and answers the passage does not spell)."""
    key = answer.strip().lower()
    if not key or key in ("yes", "no"):
        return ""
    where = [s for s, y in zip(sentences, labels, strict=True) if y == 1 or y == UNKNOWN]
    return answer.strip() if any(key in s.lower() for s in where) else ""


def _bm25_top(paras: list[str], query: str, n: int) -> list[int]:
    from ragsieve.rerank.bm25 import BM25Index

    return [int(i) for i in BM25Index(paras).top(query, n)]


def _hotpot_question(obj: dict[str, Any], split: str) -> list[Example]:
    """One distractor-format question: its 10 paragraphs (first hop) and, for each gold
    paragraph, the other nine read with the question joined by its gold sentences (the second
    hop: the other gold paragraph keeps its labels, every distractor stays 0)."""
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
    answer = str(obj.get("answer") or "")
    found = {t: with_answer(answer, *paras[t]) for t in paras}
    out = [
        Example(q, title, sents, labels, int(any(labels)), "hotpot", split, found[title])
        for title, (sents, labels) in paras.items()
    ]
    for bridge in [t for t in gold if t in paras and any(paras[t][1])]:
        hop_q = " ".join([q, *(s for s, y in zip(*paras[bridge], strict=True) if y)])
        for t, (sents, labels) in paras.items():
            if t != bridge:
                out.append(
                    Example(hop_q, t, sents, labels, int(any(labels)), "hotpot", split, found[t])
                )
    return out


def hotpot_distractor(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """Sentence gold, both distractor files: ``n`` train questions (all dev questions)."""
    out: list[Example] = []
    used = 0
    for rel, dev_range in (
        (HOTPOT_DISTRACTOR, HOTPOT_DEV_QUESTIONS),
        (HOTPOT_DISTRACTOR_495, HOTPOT_495_DEV_QUESTIONS),
    ):
        for qi, obj in enumerate(read_training_json(data_dir / rel)):
            split = "dev" if qi in dev_range else "train"
            if split == "train":
                if used >= n:
                    continue
                used += 1
            out += _hotpot_question(obj, split)
    return out


def _hotpot_split(data_dir: Path, dev: bool) -> list[dict[str, Any]]:
    """Both distractor-format files' questions inside (``dev``) or outside their dev ranges,
    in file order."""
    out = []
    for rel, dev_range in (
        (HOTPOT_DISTRACTOR, HOTPOT_DEV_QUESTIONS),
        (HOTPOT_DISTRACTOR_495, HOTPOT_495_DEV_QUESTIONS),
    ):
        rows = read_training_json(data_dir / rel)
        out += [r for i, r in enumerate(rows) if (i in dev_range) == dev]
    return out


def hotpot_dev_questions(data_dir: Path) -> list[dict[str, Any]]:
    """The HotpotQA dev questions in distractor format (for pipeline-level dev runs)."""
    return _hotpot_split(data_dir, dev=True)


def hotpot_train_questions(data_dir: Path) -> list[dict[str, Any]]:
    """The HotpotQA distractor-format questions training reads (every one outside the dev
    ranges), for fits on the tagger's own training questions (``ragsieve.tag.fit.head``)."""
    return _hotpot_split(data_dir, dev=False)


def hotpot_evidence(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """Gold sentences of a question plus two to four other questions' gold sentences."""
    dev_q = {_norm(r["question"]) for r in hotpot_dev_questions(data_dir)}
    rows = [
        r for r in _read_jsonl(data_dir / HOTPOT_EVIDENCE)[:n] if _norm(r["question"]) not in dev_q
    ]
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
        sents, labels = [s for s, _ in items], [y for _, y in items]
        answer = with_answer(str(r.get("answer") or ""), sents, labels)
        out.append(
            Example(r["question"].strip(), "", sents, labels, 1, "hotpot_evidence", answer=answer)
        )
    return out


def _answer_labels(spans: list[tuple[int, int]], answers: list[tuple[int, int]]) -> list[int]:
    """1 for every sentence span that overlaps an answer span ``[a, b)``, else 0."""
    return [int(any(a < e and s < b for a, b in answers)) for s, e in spans]


def _negatives(
    question: str,
    answer: str,
    candidates: list[int],
    paras: list[tuple[str, str]],
    n: int,
    rng: random.Random,
) -> list[int]:
    """Up to ``n`` of ``candidates`` (paragraph numbers, best first) whose text does not hold
    ``answer``: whole-passage negatives that cannot be unlabelled positives."""
    key = answer.strip().lower()
    out: list[int] = []
    for i in candidates:
        if len(out) >= n:
            break
        if i in out or (key and key in paras[i][1].lower()):
            continue
        out.append(i)
    return out


def _question_group(
    question: str,
    title: str,
    sents: list[str],
    labels: list[int],
    negatives: list[tuple[str, list[str]]],
    source: str,
    split: str,
    rng: random.Random,
    answer: str = "",
) -> list[Example]:
    """A positive passage (with its ``answer`` where a gold sentence holds it), its
    whole-passage negatives (every sentence 0) and, for one question in ``HOP_NEGATIVE_RATE``,
    two negatives read again with the question joined by its gold sentences: what a second hop
    sees on a single-hop question."""
    found = with_answer(answer, sents, labels)
    out = [Example(question, title, sents, labels, 1, source, split, found)]
    out += [Example(question, t, ns, [0] * len(ns), 0, source, split) for t, ns in negatives]
    if negatives and rng.random() < 1.0 / HOP_NEGATIVE_RATE:
        hop_q = " ".join([question, *(x for x, y in zip(sents, labels, strict=True) if y)])
        out += [Example(hop_q, t, ns, [0] * len(ns), 0, source, split) for t, ns in negatives[:2]]
    return out


def squad_train(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """SQuAD v1.1 train: ``n`` train questions drawn (all dev questions kept), each with its
    answer sentence(s) in its paragraph and ``NEGATIVES`` whole-passage negatives: two
    BM25-hard paragraphs of its article, one random one, one of another article."""
    from ragsieve.rerank.bm25 import BM25Index

    data = read_training_json(data_dir / SQUAD_TRAIN)["data"]
    where = [
        (ai, pi, qi)
        for ai, article in enumerate(data)
        for pi, para in enumerate(article["paragraphs"])
        for qi in range(len(para["qas"]))
    ]
    train = [w for w in where if w[0] % 20 != SQUAD_TRAIN_DEV_MOD]
    dev = [w for w in where if w[0] % 20 == SQUAD_TRAIN_DEV_MOD]
    picked = sorted(rng.sample(train, min(n, len(train))) + dev)
    every = [
        (ai, pi) for ai, article in enumerate(data) for pi in range(len(article["paragraphs"]))
    ]
    bm25: dict[int, Any] = {}
    split_cache: dict[tuple[int, int], list[tuple[int, int]]] = {}
    texts: dict[tuple[int, int], tuple[str, str]] = {}

    def para(ai: int, pi: int) -> tuple[str, str]:
        if (ai, pi) not in texts:
            texts[(ai, pi)] = (
                data[ai]["title"].replace("_", " "),
                data[ai]["paragraphs"][pi]["context"],
            )
        return texts[(ai, pi)]

    def spans(ai: int, pi: int) -> list[tuple[int, int]]:
        if (ai, pi) not in split_cache:
            text = para(ai, pi)[1]
            split_cache[(ai, pi)] = [(a, b) for a, b in split_sentences(text) if text[a:b].strip()]
        return split_cache[(ai, pi)]

    out: list[Example] = []
    for ai, pi, qi in picked:
        article = data[ai]
        split = "dev" if ai % 20 == SQUAD_TRAIN_DEV_MOD else "train"
        title, text = para(ai, pi)
        sp = spans(ai, pi)
        qa = article["paragraphs"][pi]["qas"][qi]
        ans = qa["answers"][0]
        start = int(ans["answer_start"])
        labels = _answer_labels(sp, [(start, start + max(1, len(ans["text"])))])
        if not sp or not any(labels):
            continue
        q = qa["question"].strip()
        n_para = len(article["paragraphs"])
        if ai not in bm25:
            bm25[ai] = BM25Index([p["context"] for p in article["paragraphs"]])
        same = [para(ai, j) for j in range(n_para)]
        hard = [int(i) for i in bm25[ai].top(q, 6) if int(i) != pi]
        others = [j for j in range(n_para) if j != pi]
        rng.shuffle(others)
        picked_same = _negatives(q, ans["text"], hard[:4], same, 2, rng)
        picked_same += _negatives(
            q, ans["text"], [j for j in others if j not in picked_same], same, 1, rng
        )
        negs = [same[j] for j in picked_same]
        far = rng.choice(every)
        if far[0] != ai and ans["text"].strip().lower() not in para(*far)[1].lower():
            negs.append(para(*far))
        neg_pairs = []
        for t, body in negs:
            ns = [x for x in sentence_texts(body) if x.strip()]
            if ns:
                neg_pairs.append((t, ns))
        sents = [text[a:b] for a, b in sp]
        out += _question_group(
            q, title, sents, labels, neg_pairs, "squad_train", split, rng, ans["text"]
        )
    return out


_NQ_SPACE = re.compile(r" ([,.;:!?%)\]}]|'s|n't|'re|'ve|'ll|'d|'m)")
_NQ_OPEN = re.compile(r"([(\[{$]) ")


def detokenize_nq(text: str) -> str:
    """Natural Questions' spaced tokens (``Super Bowl XV ( played in 1981 )``) as prose."""
    text = text.replace("`` ", '"').replace(" ''", '"').replace(" -- ", " - ")
    return _NQ_OPEN.sub(r"\1", _NQ_SPACE.sub(r"\1", text)).strip()


def qed(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """QED (Natural Questions train): the answer sentence(s) in the long-answer paragraph
    and ``NEGATIVES`` other questions' paragraphs, BM25-hard and random, as negatives."""
    from ragsieve.rerank.bm25 import BM25Index

    rows: list[dict[str, Any]] = []
    for rel in QED_FILES:
        rows += _read_jsonl(data_dir / rel)
    paras: list[tuple[str, str]] = []
    items = []
    for r in rows:
        text = r["paragraph_text"]
        starts = [int(x) for x in r.get("sentence_starts") or [0]]
        bounds = [*starts[1:], len(text)]
        sp = [(a, b) for a, b in zip(starts, bounds, strict=True) if text[a:b].strip()]
        answers = [(int(a), int(b)) for a, b in r.get("answer_spans") or []]
        labels = _answer_labels(sp, answers)
        if not sp or not any(labels) or not r.get("answer_text"):
            continue
        sents = [detokenize_nq(text[a:b]) for a, b in sp]
        split = "dev" if int(r["example_id"]) % 20 == QED_DEV_MOD else "train"
        title = str(r.get("title_text") or "")
        items.append((r["question_text"].strip(), title, sents, labels, split, r["answer_text"][0]))
        paras.append((title, " ".join(sents)))
    train = [i for i, it in enumerate(items) if it[4] == "train"]
    dev = [i for i, it in enumerate(items) if it[4] == "dev"]
    picked = sorted(rng.sample(train, min(n, len(train))) + dev)
    index = BM25Index([f"{t} {b}" for t, b in paras])
    out: list[Example] = []
    for i in picked:
        q, title, sents, labels, split, answer = items[i]
        q = q[0].upper() + q[1:] + ("" if q.endswith("?") else "?")
        hard = [int(j) for j in index.top(q, 8) if int(j) != i]
        rand = [j for j in rng.sample(range(len(paras)), 4) if j != i]
        chosen = _negatives(q, detokenize_nq(answer), hard, paras, 3, rng)
        chosen += _negatives(
            q, detokenize_nq(answer), [j for j in rand if j not in chosen], paras, 1, rng
        )
        negs = [(items[j][1], items[j][2]) for j in chosen]
        out += _question_group(
            q, title, sents, labels, negs, "qed", split, rng, detokenize_nq(answer)
        )
    return out


def _paragraph_gold(
    question: str,
    paragraphs: list[dict[str, Any]],
    negatives: int,
    source: str,
    rng: random.Random,
    answer: str = "",
) -> list[Example]:
    """The gold paragraphs of one question (``is_supporting``; sentences unknown; ``answer``
    kept where the paragraph spells it) and ``negatives`` of its other paragraphs drawn at
    random."""
    pos = [p for p in paragraphs if p.get("is_supporting")]
    neg = [p for p in paragraphs if not p.get("is_supporting")]
    out = []
    for p in pos + rng.sample(neg, min(negatives, len(neg))):
        ex = _paragraph(
            question,
            p["title"],
            p["paragraph_text"],
            bool(p.get("is_supporting")),
            source,
            answer=answer,
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
        spans = [x for a in obj.get("answers_objects") or [] for x in a.get("spans") or []]
        answer = str(spans[0]) if spans else ""
        out += _paragraph_gold(
            obj["question_text"].strip(), obj["contexts"], 3, "ircot", rng, answer
        )
    return out


def musique(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    """MuSiQue train: gold paragraphs and four negatives each."""
    out: list[Example] = []
    for obj in read_training_json(data_dir / MUSIQUE)[:n]:
        answer = str(obj.get("answer") or "")
        out += _paragraph_gold(
            obj["question"].strip(), obj["paragraphs"], 4, "musique", rng, answer
        )
    return out


def qasper(data_dir: Path, n: int, rng: random.Random) -> list[Example]:
    out: list[Example] = []
    for used, (q, paras, gold) in enumerate(qasper_train(data_dir, rng)):
        if used >= n:
            break
        text = q["question"].strip()
        hard = [i for i in _bm25_top(paras, text, 4 + len(gold)) if i not in gold][:1]
        for i, positive in [(rng.choice(gold), True)] + [(h, False) for h in hard]:
            ex = _paragraph(text, "", fix_mojibake(paras[i]), positive, "qasper")
            if ex is not None:
                out.append(ex)
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
    "squad_train": squad_train,
    "qed": qed,
    "ircot": ircot,
    "musique": musique,
    "qasper": qasper,
    "msmarco": msmarco,
}

SOURCE_FILES: dict[str, tuple[str, ...]] = {
    "hotpot": (HOTPOT_DISTRACTOR, HOTPOT_DISTRACTOR_495),
    "hotpot_evidence": (HOTPOT_EVIDENCE, HOTPOT_DISTRACTOR, HOTPOT_DISTRACTOR_495),
    "squad_train": (SQUAD_TRAIN,),
    "qed": QED_FILES,
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
        if n <= 0 and name not in ("hotpot", "squad_train", "qed"):
            continue
        out += build(data_dir, n, random.Random(seed * 1000 + i))
    return out


def vary_lengths(examples: list[Example], rng: random.Random, rate: float) -> list[Example]:
    """A share ``rate`` of the passages of three or more sentences cut to a window of 1-10
    sentences (a positive's window holds a gold sentence; an unknown-label passage is left
    whole): the lengths a chunker hands the tagger. The rest stay whole."""
    out: list[Example] = []
    for ex in examples:
        n = len(ex.sentences)
        if n < 3 or rng.random() >= rate or UNKNOWN in ex.labels:
            out.append(ex)
            continue
        size = rng.randint(1, min(10, n - 1))
        gold = [i for i, y in enumerate(ex.labels) if y == 1]
        if gold:
            g = rng.choice(gold)
            a = rng.randint(max(0, g - size + 1), min(g, n - size))
        else:
            a = rng.randint(0, n - size)
        labels = ex.labels[a : a + size]
        plabel = int(any(y == 1 for y in labels)) if gold else ex.passage_label
        out.append(
            Example(
                ex.question,
                ex.title,
                ex.sentences[a : a + size],
                labels,
                plabel,
                ex.source,
                ex.split,
                ex.answer,
            )
        )
    return out


def dedupe(examples: list[Example]) -> list[Example]:
    """The first of every (question, title, sentences) triple: SQuAD repeats questions and
    the second hop can read a passage twice."""
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    out = []
    for ex in examples:
        key = (_norm(ex.question).lower(), ex.title, tuple(ex.sentences))
        if key not in seen:
            seen.add(key)
            out.append(ex)
    return out


def save_examples(path: Path, examples: list[Example]) -> None:
    """Examples as xz-compressed JSON lines, each passage and question stored once (a GPU
    machine gets the whole training set in a few MB)."""
    passages: dict[tuple[str, tuple[str, ...]], int] = {}
    questions: dict[str, int] = {}
    rows = []
    for ex in examples:
        pid = passages.setdefault((ex.title, tuple(ex.sentences)), len(passages))
        qid = questions.setdefault(ex.question, len(questions))
        rows.append([qid, pid, ex.labels, ex.passage_label, ex.source, ex.split, ex.answer])
    with lzma.open(path, "wt", encoding="utf-8", preset=9) as fh:
        fh.write(json.dumps({"questions": len(questions), "passages": len(passages)}) + "\n")
        for q in questions:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
        for title, sents in passages:
            fh.write(json.dumps([title, list(sents)], ensure_ascii=False) + "\n")
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def load_examples(path: Path) -> list[Example]:
    """What :func:`save_examples` wrote."""
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        head = json.loads(fh.readline())
        questions = [json.loads(fh.readline()) for _ in range(head["questions"])]
        passages = [json.loads(fh.readline()) for _ in range(head["passages"])]
        out = []
        for line in fh:
            qid, pid, labels, plabel, source, split, *answer = json.loads(line)  # 6: no answers
            title, sents = passages[pid]
            out.append(
                Example(questions[qid], title, sents, labels, plabel, source, split, *answer[:1])
            )
    return out
