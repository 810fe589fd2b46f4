"""The techdocs question file as committed (no built folder needed): its split rule, its kinds,
and the checks of benchmarks/techdocs/fetch.py on questions in parts and unanswerable ones."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parents[2] / "benchmarks" / "techdocs"


@pytest.fixture(scope="module")
def fetch() -> ModuleType:
    spec = importlib.util.spec_from_file_location("techdocs_fetch", HERE / "fetch.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _questions() -> list[dict]:
    lines = (HERE / "questions.jsonl").read_text("utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def test_the_set_has_its_kinds_and_keeps_the_split_rule(fetch: ModuleType) -> None:
    qs = _questions()
    kinds = [q["meta"]["kind"] for q in qs]
    assert len(qs) >= 200 and len({q["id"] for q in qs}) == len(qs)
    assert all(q["meta"]["split"] == fetch.split_of(q["id"]) for q in qs)
    assert sum(k in ("two-part", "list", "how-to") for k in kinds) >= 60
    assert sum(k == "unanswerable" for k in kinds) >= 20
    html = [q for q in qs if any(s.endswith(".html") for s in q["meta"]["source"])]
    assert len(html) >= 40
    for q in qs:
        if q["meta"]["kind"] == "unanswerable":
            assert q["answers"] == [] and q["evidence"] == [] and q["meta"]["absent"], q["id"]
        else:
            assert q["answers"] and q["evidence"] and q["meta"]["source"], q["id"]
        assert all(p and all(isinstance(a, str) for a in p) for p in q["meta"].get("parts", []))
    docs = {d.name for d in fetch.DOCS}
    assert {s for q in qs for s in q["meta"]["source"] + q["meta"].get("near", [])} <= docs


def test_fetch_checks_parts_absent_terms_and_the_split(fetch: ModuleType) -> None:
    corpus = [{"id": "a.html", "title": "a", "text": "The default is 50, and the maximum is 100."}]
    meta = {"source": ["a.html"], "kind": "two-part", "parts": [["50"], ["100"]]}
    good = {
        "id": "q1",
        "answers": ["default 50, maximum 100"],
        "evidence": ["The default is 50, and the maximum is 100."],
        "meta": {**meta, "split": fetch.split_of("q1")},
    }
    assert fetch.check_questions([good], corpus) == []
    half = {**good, "meta": {**good["meta"], "parts": [["50"], ["200"]]}}
    assert fetch.check_questions([half], corpus) == [
        "q1: part ['200'] occurs nowhere in the evidence"
    ]
    rule = fetch.split_of("q1")
    other = "dev" if rule == "test" else "test"
    moved = {**good, "meta": {**good["meta"], "split": other}}
    assert fetch.check_questions([moved], corpus) == [f"q1: split {other!r}, the rule says {rule}"]
    none = {
        "id": "q1",
        "answers": [],
        "evidence": [],
        "meta": {"split": rule, "source": [], "kind": "unanswerable", "absent": ["Maximum"]},
    }
    assert fetch.check_questions([none], corpus) == [
        "q1: absent term 'Maximum' occurs in ['a.html']"
    ]
    none["meta"]["absent"] = ["minimum"]
    assert fetch.check_questions([none], corpus) == []
    with_answer = {**none, "answers": ["60"]}
    assert fetch.check_questions([with_answer], corpus) == [
        "q1: an unanswerable question has no answers and no evidence"
    ]
