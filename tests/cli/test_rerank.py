"""``ragsieve rerank`` end to end in a subprocess (real model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run

pytestmark = pytest.mark.integration


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


ROWS = [
    {
        "id": "q1",
        "query": "Who painted the Mona Lisa?",
        "passages": [
            {"id": "a", "text": "The Great Wall of China is thousands of kilometres long."},
            {"id": "b", "text": "The Mona Lisa is a portrait painted by Leonardo da Vinci."},
        ],
    },
    {
        "id": 2,
        "query": "boiling point of water",
        "passages": [
            {"id": "x", "text": "At sea level water boils at 100 degrees Celsius."},
            {"id": "y", "text": "Penguins live mostly in the Southern Hemisphere."},
            {"id": "z", "text": "Ice melts at zero degrees Celsius."},
        ],
    },
    {"id": "empty", "query": "anything", "passages": []},
]


@pytest.mark.parametrize("reranker", ["cross-encoder", "bm25"])
def test_rerank_jsonl(tmp_path: Path, reranker: str) -> None:
    path = _write(tmp_path / "q.jsonl", ROWS)
    res = run("rerank", "--queries", str(path), "--reranker", reranker)
    assert res.returncode == 0, res.stderr
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [x["id"] for x in lines] == ["q1", 2, "empty"]
    assert lines[0]["scores"][0]["id"] == "b"
    assert lines[1]["scores"][0]["id"] == "x"
    assert lines[2]["scores"] == []
    for x in lines:
        scores = [s["score"] for s in x["scores"]]
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 <= s <= 1.0 for s in scores)


def test_malformed_line_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n{not json\n", encoding="utf-8")
    res = run("rerank", "--queries", str(path))
    assert res.returncode != 0
    assert res.stdout == ""
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert f"{path}:2" in err[0]


def test_missing_field_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.jsonl", [ROWS[0], {"id": 1, "query": "q", "passages": [{}]}])
    res = run("rerank", "--queries", str(path), "--reranker", "bm25")
    assert res.returncode == 2
    assert ":2: passage 0" in res.stderr and len(res.stderr.strip().splitlines()) == 1
