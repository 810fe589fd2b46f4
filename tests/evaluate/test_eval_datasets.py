"""Every built-in loader on the real files in shared/data: counts, schema, and that the gold
evidence really occurs in the documents. Skipped when the data folder is absent."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from ragsieve.evaluate import EvalDataset, aggregate, context_metrics, dataset_names, load_dataset
from ragsieve.metrics import _Grams, match_tokens

_cache: dict[str, EvalDataset] = {}


def _load(name: str, shared_data: Path) -> EvalDataset:
    if name not in _cache:
        _cache[name] = load_dataset(name, data_dir=shared_data)
    return _cache[name]


def _assert_evidence_in_documents(ds: EvalDataset, sample: int = 150) -> None:
    """Every gold unit of a sample of questions occurs (normalised, contiguously) in one of the
    question's documents."""
    rng = random.Random(0)
    questions = [q for q in ds if q.evidence]
    indexes: dict[str, _Grams] = {}
    for q in rng.sample(questions, min(sample, len(questions))):
        docs = ds.documents_for(q)
        if len(docs) > 50:  # a shared corpus: look only where the evidence says it is
            docs = tuple(d for d in docs if any(e in d.text for e in q.evidence))
        for e in q.evidence:
            tokens = match_tokens(e)
            found = False
            for d in docs:
                if d.id not in indexes:
                    indexes[d.id] = _Grams([match_tokens(d.text)])
                if indexes[d.id].coverage(tokens) == 1.0:
                    found = True
                    break
            assert found, f"{ds.name} {q.id}: evidence not in its documents: {e[:80]!r}"


def test_all_names_are_registered() -> None:
    assert dataset_names() == [
        "squad",
        "hotpotqa",
        "hotpotqa-sent",
        "qasper",
        "quality",
        "msmarco",
        "techdocs",
        "techdocs-test",
    ]


def test_techdocs_splits_share_one_corpus_and_their_evidence_is_in_it() -> None:
    """The technical-documents set as benchmarks/techdocs/fetch.py builds it (skipped when it
    has not been built): dev and test are disjoint, every question has sentence evidence and
    answers, and its evidence occurs in its source document as read."""
    from ragsieve.errors import InputError
    from ragsieve.evaluate.datasets import techdocs_dir

    try:
        techdocs_dir()
    except InputError as e:
        pytest.skip(str(e))
    dev, test = load_dataset("techdocs"), load_dataset("techdocs-test")
    assert len(dev) >= 120 and len(test) >= 60 and len(dev) + len(test) >= 200
    assert not {q.id for q in dev} & {q.id for q in test}
    assert dev.corpus == test.corpus and len(dev.corpus) >= 8
    both = [*dev, *test]
    unanswerable = [q for q in both if q.meta["kind"] == "unanswerable"]
    in_parts = [q for q in both if q.meta.get("parts")]
    assert len(unanswerable) >= 20 and len(in_parts) >= 60
    for ds, split in ((dev, "dev"), (test, "test")):
        assert all(q.meta["split"] == split for q in ds)
        for q in ds:  # an unanswerable question has neither answers nor evidence
            answerable = q.meta["kind"] != "unanswerable"
            assert bool(q.answers) == bool(q.evidence) == answerable, q.id
            assert q.evidence_level == ("sentence" if answerable else "none"), q.id
        _assert_evidence_in_documents(ds, sample=len(ds))
    assert all(q.answers == () and not q.meta["source"] for q in unanswerable)
    assert all(all(isinstance(p, list) and p for p in q.meta["parts"]) for q in in_parts)
    pdfs = [d for d in dev.corpus if d.id.endswith(".pdf")]
    assert pdfs and all("\f" in d.text for d in pdfs)


def test_squad(shared_data: Path) -> None:
    ds = _load("squad", shared_data)
    assert len(ds) == 10_570
    docs = {d.id: d for q in ds for d in q.documents}
    assert len(docs) == 48
    assert all(len(q.documents) == 1 and q.evidence and q.answers for q in ds)
    assert {q.evidence_level for q in ds} == {"sentence"}
    sb = docs["Super_Bowl_50"]
    assert sb.title == "Super Bowl 50" and sb.text.count("\n\n") == 53  # 54 paragraphs
    first = ds.questions[0]
    assert first.answers == ("Denver Broncos",)
    assert first.evidence == (
        "The American Football Conference (AFC) champion Denver Broncos defeated the National "
        "Football Conference (NFC) champion Carolina Panthers 24–10 to earn their third Super "
        "Bowl title.",
    )
    _assert_evidence_in_documents(ds)
    # the answer sentence holds the answer (a few SQuAD spans are sub-word, e.g. "8" in "18")
    ok = sum(
        context_metrics(list(q.evidence), q)["answer_recall"] == 1.0 for q in ds.questions[:1000]
    )
    assert ok >= 990


def test_hotpotqa(shared_data: Path) -> None:
    ds = _load("hotpotqa", shared_data)
    assert len(ds) == 500
    assert Counter(len(q.documents) for q in ds)[10] == 489  # a few pools are smaller
    assert all(len(q.evidence) == 2 and q.answers for q in ds)
    assert {q.evidence_level for q in ds} == {"paragraph"}
    assert ds.questions[0].answers == ("Chief of Protocol",)
    _assert_evidence_in_documents(ds)
    assert len(ds.pooled().corpus or ()) == 4858


def test_hotpotqa_sent(shared_data: Path) -> None:
    ds = _load("hotpotqa-sent", shared_data)
    assert len(ds) == 100
    assert all(len(q.documents) == 10 for q in ds)
    assert sum(len(q.evidence) for q in ds) == 239
    assert {q.evidence_level for q in ds} == {"sentence"}
    assert ds.questions[0].answers == ("beer and whisky",)
    _assert_evidence_in_documents(ds)


def test_hotpotqa_sent_gold_and_paragraph_contexts(shared_data: Path) -> None:
    """The sanity numbers recorded in docs/metrics.md."""
    ds = _load("hotpotqa-sent", shared_data)
    gold = aggregate([context_metrics(list(q.evidence), q) for q in ds])
    assert gold["evidence_recall"] == 1.0 and gold["evidence_precision"] == 1.0
    all10 = aggregate([context_metrics([d.text for d in q.documents], q) for q in ds])
    assert all10["evidence_recall"] == 1.0
    # HotpotQA's own sentence segmentation gives 6.08% of sentences supporting
    assert 0.05 < all10["evidence_precision"] < 0.075


def test_qasper(shared_data: Path) -> None:
    ds = _load("qasper", shared_data)
    assert len(ds) == 1_451
    assert len({q.documents[0].id for q in ds}) == 416
    with_evidence = [q for q in ds if q.evidence]
    assert len(with_evidence) == 1_309  # the rest: unanswerable or figure/table evidence only
    assert all(q.evidence_level == ("paragraph" if q.evidence else "none") for q in ds)
    doc = ds.questions[0].documents[0]
    assert doc.text.startswith(f"# {doc.title}\n\n## Abstract\n\n")
    assert "\n\n## Introduction\n\n" in doc.text
    assert all(q.answers for q in ds)
    kinds = Counter(k for q in ds for k in q.meta["answer_types"])
    assert set(kinds) == {"extractive", "abstractive", "boolean", "none"}
    _assert_evidence_in_documents(ds)


def test_quality(shared_data: Path) -> None:
    ds = _load("quality", shared_data)
    assert len(ds) == 202
    assert len({q.documents[0].id for q in ds}) == 15
    assert all(q.is_multiple_choice and len(q.options) == 4 for q in ds)
    assert all(q.answers == (q.options[q.label],) for q in ds if q.label is not None)
    assert Counter(q.label for q in ds) == {0: 56, 1: 52, 3: 51, 2: 43}
    first = ds.questions[0]
    assert first.question == "Why did the Tr'en leave Korvin's door unlocked and a weapon nearby?"
    assert first.label == 1
    story = first.documents[0]
    assert story.title == "LOST IN TRANSLATION"
    assert "\n " not in story.text  # hard wraps joined, paragraphs kept
    assert {q.evidence_level for q in ds} == {"none"}


def test_msmarco(shared_data: Path) -> None:
    ds = _load("msmarco", shared_data)
    assert len(ds) == 6_980
    assert ds.corpus is not None and len(ds.corpus) == 6_978  # two positives are shared
    assert all(not q.documents and len(q.evidence) == 1 and not q.answers for q in ds)
    corpus_texts = {d.text for d in ds.corpus}
    assert all(q.evidence[0] in corpus_texts for q in ds)
    assert "(c.1590 – 1657)" in ds.questions[0].evidence[0]  # mojibake repaired
    # the corpus stays whole under a limit: every positive is a distractor
    small = load_dataset("msmarco", data_dir=shared_data, limit=3)
    assert len(small) == 3 and len(small.corpus or ()) == 6_978


@pytest.mark.parametrize("name", ["squad", "hotpotqa", "hotpotqa-sent", "qasper", "quality"])
def test_limit_is_the_first_n(shared_data: Path, name: str) -> None:
    full = _load(name, shared_data)
    small = load_dataset(name, data_dir=shared_data, limit=7)
    assert [q.id for q in small] == [q.id for q in full.questions[:7]]
    assert small.questions == full.questions[:7]


def test_hotpot_sentence_loader_reads_one_or_several_sentence_indexes() -> None:
    from ragsieve.evaluate.datasets import hotpot_sentence_dataset

    context = [["Ada", ["Ada wrote a program.", " It ran on an engine."]], ["Bo", ["Bo sang."]]]
    records = [
        (1, {"_id": "q1", "question": "Who?", "answer": "Ada", "context": context,
             "supporting_facts": [["Ada", 1], ["Bo", 0]]}),
        (2, {"_id": "q2", "question": "What?", "answer": "x", "context": context,
             "supporting_facts": [["Ada", [0, 1]]]}),
    ]  # fmt: skip
    ds = hotpot_sentence_dataset(Path("mem.json"), "dev", records)
    assert ds.name == "dev"
    assert ds.questions[0].evidence == ("It ran on an engine.", "Bo sang.")
    assert ds.questions[1].evidence == ("Ada wrote a program.", "It ran on an engine.")
    assert ds.questions[0].documents[0].text == "Ada wrote a program. It ran on an engine."


def test_techdocs_without_its_built_folder_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``eval --dataset techdocs`` where fetch.py never ran (an empty RAGSIEVE_TECHDOCS): one
    ``error:`` line naming the missing file, exit 2, and nothing written in that folder."""
    from cli_helpers import assert_one_line_error, run

    monkeypatch.setenv("RAGSIEVE_TECHDOCS", str(tmp_path))
    p = run("eval", "--dataset", "techdocs", "--no-llm", "--limit", "2")
    assert_one_line_error(p, 2, "dev.jsonl")
    assert list(tmp_path.iterdir()) == []
