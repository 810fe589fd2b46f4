"""Labelled sentence pairs for SAGE's segmentation model (Section IV-C), from ``shared/data``.

Paragraphs written by people are the supervision: two consecutive sentences of one paragraph
belong together (label 1); the last sentence of a paragraph and the first of the next do not
(label 0). Three sources with different styles so that the model does not learn one genre:

* QASPER full texts (scientific papers): blank-line paragraphs, ``#`` headers dropped;
* SQuALITY stories (Gutenberg fiction): blank-line paragraphs with hard-wrapped lines joined;
* WikiText-2 (encyclopedic): one paragraph per line, ``= heading =`` lines dropped, the
  WikiText tokenisation undone (``@-@``, spaces before punctuation).

A document is a list of paragraphs, a paragraph a list of sentence strings
(:func:`ragsieve.text.split_sentences`).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragsieve.errors import InputError
from ragsieve.text import split_sentences

QASPER_TRAIN = "qasper/train_papers_fulltext.jsonl"
QASPER_VAL = "qasper/validation_papers_fulltext.jsonl"
SQUALITY_TRAIN = "squality/train.jsonl"
WIKITEXT = "wikitext2/wiki.test.raw"
TRAIN_FILES = (QASPER_TRAIN, SQUALITY_TRAIN, WIKITEXT)

Doc = list[list[str]]  # paragraphs -> sentences


@dataclass(frozen=True)
class PairSet:
    """Sentence pairs as indices into a list of distinct sentences (each embedded once)."""

    sentences: list[str]
    left: list[int]
    right: list[int]
    labels: list[int]
    source: list[str]


def _sentences(paragraph: str) -> list[str]:
    text = " ".join(paragraph.split())
    return [text[a:b] for a, b in split_sentences(text) if text[a:b].strip()]


def _need(path: Path) -> Path:
    if not path.is_file():
        raise InputError(f"training file {path} not found")
    return path


def qasper_docs(path: Path) -> Iterator[Doc]:
    from ragsieve.data import paper_paragraphs

    with _need(path).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                paras = [_sentences(p) for p in paper_paragraphs(json.loads(line)["text"])]
                yield [p for p in paras if p]


def squality_docs(path: Path) -> Iterator[Doc]:
    with _need(path).open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            text = json.loads(line)["document"]
            paras = [_sentences(b) for b in re.split(r"\n\s*\n", text) if b.strip()]
            # Front matter (producer credits, transcriber notes) is not prose: drop blocks
            # until the first one with two sentences.
            start = next((i for i, p in enumerate(paras) if len(p) >= 2), len(paras))
            yield [p for p in paras[start:] if p]


_WT_FIXES = [
    (re.compile(r" @(.)@ "), r"\1"),
    (re.compile(r" ([.,;:!?%)\]}])"), r"\1"),
    (re.compile(r"([(\[{$]) "), r"\1"),
    (re.compile(r" (n't|'s|'re|'ve|'m|'ll|'d)\b"), r"\1"),
    (re.compile(r'" (.*?) "'), r'"\1"'),
]


def detokenize_wikitext(line: str) -> str:
    s = line.strip()
    for pat, rep in _WT_FIXES:
        s = pat.sub(rep, s)
    return s


def wikitext_docs(path: Path) -> Iterator[Doc]:
    doc: Doc = []
    with _need(path).open(encoding="utf-8") as fh:
        for raw in fh:
            line = raw.strip()
            if not line:
                continue
            if re.fullmatch(r"=( =)* .* =( =)*", line):
                if line.startswith("= ") and not line.startswith("= ="):  # a new article
                    if doc:
                        yield doc
                    doc = []
                continue
            sents = _sentences(detokenize_wikitext(line))
            if sents:
                doc.append(sents)
    if doc:
        yield doc


def doc_pairs(doc: Doc) -> Iterator[tuple[str, str, int]]:
    """(s1, s2, label) for every adjacent sentence pair of a document."""
    prev_last: str | None = None
    for para in doc:
        if prev_last is not None:
            yield prev_last, para[0], 0
        for a, b in itertools.pairwise(para):
            yield a, b, 1
        prev_last = para[-1]


def build_pairs(sources: dict[str, list[Doc]]) -> PairSet:
    sentences: dict[str, int] = {}
    left, right, labels, src = [], [], [], []
    for name, docs in sources.items():
        for doc in docs:
            for a, b, y in doc_pairs(doc):
                left.append(sentences.setdefault(a, len(sentences)))
                right.append(sentences.setdefault(b, len(sentences)))
                labels.append(y)
                src.append(name)
    return PairSet(list(sentences), left, right, labels, src)


def random_negative_pairs(docs: list[Doc], seed: int) -> list[tuple[str, str, int]]:
    """The paper's looser protocol (Section IV-C: label 0 for every pair that is *not* two
    consecutive sentences of one paragraph): each same-paragraph pair, plus as many pairs of a
    sentence with a random sentence from another paragraph of the same document."""
    rng = random.Random(seed)
    out: list[tuple[str, str, int]] = []
    for doc in docs:
        if len(doc) < 2:
            continue
        for pi, para in enumerate(doc):
            for a, b in itertools.pairwise(para):
                out.append((a, b, 1))
                other = rng.choice([q for q in range(len(doc)) if q != pi])
                out.append((a, rng.choice(doc[other]), 0))
    return out


def training_docs(
    data_dir: Path, qasper: int, squality: int, wikitext: int, seed: int
) -> dict[str, list[Doc]]:
    """A seeded sample of documents from each training source (0 = none, -1 = all)."""
    rng = random.Random(seed)

    def take(docs: list[Doc], n: int) -> list[Doc]:
        return docs if n < 0 or n >= len(docs) else rng.sample(docs, n)

    return {
        "qasper": take(list(qasper_docs(data_dir / QASPER_TRAIN)), qasper),
        "squality": take(list(squality_docs(data_dir / SQUALITY_TRAIN)), squality),
        "wikitext": take(list(wikitext_docs(data_dir / WIKITEXT)), wikitext),
    }


def validation_docs(data_dir: Path, n: int, seed: int) -> dict[str, list[Doc]]:
    """QASPER validation papers (held out: never in training), for Table X."""
    docs = list(qasper_docs(data_dir / QASPER_VAL))
    if 0 <= n < len(docs):
        docs = random.Random(seed).sample(docs, n)
    return {"qasper-val": docs}
