"""The common schema, the generic JSONL loader's validation, pooling and the dataset registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsieve.errors import ConfigError, InputError
from ragsieve.evaluate import (
    EvalDataset,
    EvalDocument,
    EvalQuestion,
    find_data_dir,
    load_corpus,
    load_dataset,
    load_generic,
)


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n",
        encoding="utf-8",
    )
    return path


DOC = {"id": "d1", "title": "Tower", "text": "The Eiffel Tower was completed in 1889."}


def test_load_generic_full_record(tmp_path: Path) -> None:
    q = _write(
        tmp_path / "q.jsonl",
        [
            {
                "id": "q1",
                "question": "When was it completed?",
                "answers": ["1889"],
                "evidence": ["The Eiffel Tower was completed in 1889."],
                "documents": [DOC, {"text": "Another text.", "title": None}],
                "source": "mine",
            },
            "",
            {
                "id": 7,
                "question": "Which?",
                "options": ["x", "y"],
                "label": 1,
                "documents": [DOC],
            },
        ],
    )
    ds = load_generic(q)
    assert ds.name == "q" and len(ds) == 2 and ds.corpus is None
    first, second = ds.questions
    assert first.answers == ("1889",)
    assert first.evidence_level == "sentence"
    assert [d.id for d in first.documents] == ["d1", "q1#1"]
    assert first.documents[1].title == ""
    assert first.meta == {"source": "mine"}  # unknown fields are kept, not lost
    assert second.id == "7" and second.is_multiple_choice
    assert second.answers == ("y",) and second.answer_targets == ("y",)
    assert second.evidence_level == "none"


def test_load_generic_with_corpus(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.jsonl", [{"question": "When?", "answers": ["1889"]}])
    c = _write(tmp_path / "c.jsonl", [DOC, {"title": "t", "text": "more"}])
    ds = load_generic(q, c)
    assert ds.questions[0].id == "line-1"
    assert [d.id for d in ds.corpus or ()] == ["d1", "line-2"]
    assert ds.documents_for(ds.questions[0]) == ds.corpus


def test_paragraph_level_is_inferred(tmp_path: Path) -> None:
    q = _write(
        tmp_path / "q.jsonl",
        [{"question": "?", "evidence": ["One sentence. Another one."], "documents": [DOC]}],
    )
    assert load_generic(q).questions[0].evidence_level == "paragraph"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        ('["a list"]', "expected a JSON object"),
        ({"answers": ["x"], "documents": [DOC]}, "missing 'question'"),
        ({"question": "", "documents": [DOC]}, "'question' must be a non-empty string"),
        ({"question": "?", "answers": "1889", "documents": [DOC]}, "'answers' must be a list"),
        ({"question": "?", "answers": [1889], "documents": [DOC]}, "non-string items"),
        ({"question": "?", "answer": ["x"], "documents": [DOC]}, "did you mean 'answers'"),
        ({"question": "?", "documents": DOC}, "'documents' must be a list"),
        ({"question": "?", "documents": [{"id": "d"}]}, "'text' must be a string"),
        ({"question": "?", "documents": [DOC, DOC]}, "duplicate document id"),
        ({"question": "?", "options": ["a", "b"], "documents": [DOC]}, "both 'options' and"),
        ({"question": "?", "options": ["a", "b"], "label": 2, "documents": [DOC]}, "out of range"),
        ({"question": "?", "options": ["a", "b"], "label": "a", "documents": [DOC]}, "integer"),
        ({"question": "?", "evidence_level": "word", "documents": [DOC]}, "'evidence_level'"),
        ({"question": "?"}, "no 'documents' and no corpus"),
        ({"id": True, "question": "?", "documents": [DOC]}, "'id' must be"),
    ],
)
def test_load_generic_errors_name_file_and_line(tmp_path: Path, line: object, message: str) -> None:
    good = {"id": "ok", "question": "fine?", "documents": [DOC]}
    path = _write(tmp_path / "bad.jsonl", [good, line])
    with pytest.raises(InputError) as err:
        load_generic(path)
    text = str(err.value)
    assert f"{path}:2" in text and message in text
    assert "\n" not in text


def test_load_generic_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_generic(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="not a file"):
        load_generic(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="no questions"):
        load_generic(empty)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"question": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"latin.jsonl:1: not valid UTF-8"):
        load_generic(latin)
    dup = _write(tmp_path / "dup.jsonl", [{"id": "a", "question": "?", "documents": [DOC]}] * 2)
    with pytest.raises(InputError, match=r"dup.jsonl:2: duplicate id 'a' \(first on line 1\)"):
        load_generic(dup)
    corpus = _write(tmp_path / "c.jsonl", [DOC, DOC])
    with pytest.raises(InputError, match=r"c.jsonl:2: duplicate id 'd1'"):
        load_corpus(corpus)


def test_load_generic_limit_stops_reading(tmp_path: Path) -> None:
    rows: list[object] = [{"id": str(i), "question": "?", "documents": [DOC]} for i in range(3)]
    path = _write(tmp_path / "q.jsonl", [*rows, "{broken"])
    assert [q.id for q in load_generic(path, limit=3)] == ["0", "1", "2"]
    assert len(load_generic(path, limit=0)) == 0


def _pool_dataset() -> EvalDataset:
    a = EvalDocument("a", "A", "text a")
    b = EvalDocument("b", "B", "text b")
    c = EvalDocument("c", "C", "text c")
    return EvalDataset(
        "toy",
        (
            EvalQuestion("q1", "?", documents=(a, b)),
            EvalQuestion("q2", "?", documents=(b, c)),
            EvalQuestion("q3", "?", documents=(c,)),
        ),
    )


def test_pooled_deduplicates_by_id_and_drops_question_pools() -> None:
    pooled = _pool_dataset().pooled()
    assert pooled.name == "toy+pool"
    assert [d.id for d in pooled.corpus or ()] == ["a", "b", "c"]
    assert all(q.documents == () for q in pooled)
    assert pooled.documents_for(pooled.questions[0]) == pooled.corpus


def test_pooled_rejects_two_texts_under_one_id() -> None:
    ds = EvalDataset(
        "bad",
        (
            EvalQuestion("q1", "?", documents=(EvalDocument("a", "", "one"),)),
            EvalQuestion("q2", "?", documents=(EvalDocument("a", "", "two"),)),
        ),
    )
    with pytest.raises(InputError, match="'a' has two different texts"):
        ds.pooled()


def test_subset_is_the_first_n() -> None:
    ds = _pool_dataset()
    assert [q.id for q in ds.subset(2)] == ["q1", "q2"]
    assert ds.subset(None) is ds and ds.subset(10) is ds
    assert len(ds.subset(0)) == 0


def test_question_normalises_lists_and_validates() -> None:
    q = EvalQuestion("q", "?", answers=["a"], evidence=["e"], evidence_level="sentence")  # type: ignore[arg-type]
    assert q.answers == ("a",) and q.evidence == ("e",)
    assert hash(q) == hash(
        EvalQuestion("q", "?", answers=("a",), evidence=("e",), evidence_level="sentence")
    )
    with pytest.raises(ValueError):
        EvalQuestion("q", "?", options=("a", "b"), label=5)
    with pytest.raises(ValueError):
        EvalQuestion("q", "?", evidence_level="word")  # type: ignore[arg-type]
    spans = EvalQuestion("q", "?", answers=("x, y",), meta={"answer_spans": ("x", "y")})
    assert spans.answer_targets == ("x", "y")


def test_load_dataset_registry_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="unknown dataset 'nope'"):
        load_dataset("nope")
    monkeypatch.setenv("RAGSIEVE_DATA", str(tmp_path / "absent"))
    with pytest.raises(InputError, match="RAGSIEVE_DATA"):
        load_dataset("squad")
    monkeypatch.setenv("RAGSIEVE_DATA", str(tmp_path))
    assert find_data_dir() == tmp_path
    with pytest.raises(InputError, match=r"lacks squad/dev-v1\.1\.json"):
        load_dataset("squad")
    with pytest.raises(InputError, match="does not exist"):
        find_data_dir(tmp_path / "nowhere")
    # a path to a generic questions file works as a dataset name
    path = _write(tmp_path / "mine.jsonl", [{"question": "?", "documents": [DOC]}])
    assert load_dataset(str(path)).name == "mine"


def test_load_generic_accepts_an_unanswerable_question(tmp_path: Path) -> None:
    """A question whose answer is in no document: no answers, no evidence; its ``meta`` (kind,
    the parts of a question in parts) is kept for the scorer."""
    data = tmp_path / "q.jsonl"
    rows = [
        {
            "id": "u",
            "question": "What is the default level?",
            "answers": [],
            "evidence": [],
            "evidence_level": "sentence",
            "meta": {"kind": "unanswerable", "source": []},
        },
        {
            "id": "p",
            "question": "Default and maximum?",
            "answers": ["50 and 100"],
            "evidence": ["The default is 50, and the maximum is 100."],
            "meta": {"kind": "two-part", "parts": [["50"], ["100"]]},
        },
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "d", "text": "The default is 50."}) + "\n", "utf-8")
    u, p = load_generic(data, corpus).questions
    assert u.answers == () and u.evidence == () and u.evidence_level == "none"
    assert u.meta["kind"] == "unanswerable"
    assert p.meta["parts"] == [["50"], ["100"]] and p.answer_targets == ("50 and 100",)
