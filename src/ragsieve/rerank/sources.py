"""The training questions that the reranker, its score fusion and the tagger read alike.

Each trainer builds its own examples (groups, candidate lists, tagged windows); which QASPER
questions count and which MS MARCO passages are another query's hard negatives is decided here
once, so that the three recipes agree on it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragsieve.data import (
    QASPER_TRAIN_P,
    QASPER_TRAIN_Q,
    gold_paragraphs,
    qasper_papers,
    read_training_json,
)
from ragsieve.rerank.bm25 import BM25Index


def squash(text: str) -> str:
    """``text`` with runs of whitespace as one space: two passages equal under it are one."""
    return " ".join(text.split())


def qasper_train(
    data_dir: Path, rng: random.Random | None = None
) -> Iterator[tuple[dict[str, Any], list[str], list[int]]]:
    """QASPER train questions, in file order (shuffled by ``rng`` when given), each with its
    paper's paragraphs and the indices of its gold (textual evidence) paragraphs; questions
    whose paper has fewer than three paragraphs or whose evidence matches none are skipped."""
    papers = qasper_papers(data_dir / QASPER_TRAIN_P)
    questions = read_training_json(data_dir / QASPER_TRAIN_Q)
    if rng is not None:
        rng.shuffle(questions)
    for q in questions:
        paras = papers.get(q["paper_id"])
        if not paras or len(paras) < 3:
            continue
        gold = gold_paragraphs(q, paras)
        if gold:
            yield q, paras, gold


def other_positives(
    index: BM25Index, queries: list[str], passages: list[str], qi: int, k: int
) -> list[int]:
    """Indices among the BM25 top ``k`` of MS MARCO positives for query ``qi`` that are other
    queries' positives with a different text (hard negatives), best first."""
    ranked = [int(i) for i in index.top(queries[qi], k)]
    return [i for i in ranked if i != qi and squash(passages[i]) != squash(passages[qi])]
