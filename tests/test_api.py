"""The Python API mirrors the CLI: Index.open/add_paths, search, ask."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from ragsieve import Index, IndexConfig, ask, search

pytestmark = pytest.mark.integration


def test_python_api_end_to_end(tmp_path: Path, corpus_dir: Path) -> None:
    idx = Index.open_or_create(tmp_path / "ix", IndexConfig(chunker="paragraph"))
    report, skipped = idx.add_paths([corpus_dir])
    assert len(report.added) == 4 and not skipped
    hits = search("Where is the Rosetta Stone on display?", idx, k=3, retriever="hybrid")
    assert len(hits) == 3 and all("rosetta" in h.chunk.doc_id for h in hits)
    assert any("British Museum" in h.chunk.text for h in hits)
    reranked = search("Where is the Rosetta Stone on display?", idx, k=3, reranker="bi-encoder")
    assert all(0.0 <= h.score <= 1.0 for h in reranked)
    assert [h.score for h in reranked] == sorted((h.score for h in reranked), reverse=True)
    # With a budget the context is filled in rank order up to it (k does not apply).
    answer = ask(
        "When did Voyager 2 fly past Neptune?", tmp_path / "ix", method="naive", budget=300
    )
    assert 0 < answer.context.n_tokens <= 300
    assert "Neptune" in answer.context.chunks[0].chunk.text
    assert answer.usage.prompt_tokens > 0 and answer.text
    assert answer.trace["selection"]["selector"] == "budget"


def test_prune_keeps_the_answer_sentence_of_passages_a_user_has(corpus_dir: Path) -> None:
    from ragsieve import prune
    from ragsieve.errors import InputError

    rosetta = (corpus_dir / "rosetta-stone.md").read_text("utf-8")
    bees = (corpus_dir / "honey-bees.md").read_text("utf-8")
    q = "In which year did Champollion announce the decipherment of hieroglyphs?"
    kept = prune(q, [("Honey bees", bees), ("Rosetta Stone", rosetta)])
    assert kept and kept[0].passage == 1  # the relevant passage first
    assert any("In 1822 he announced" in k.text for k in kept)
    assert all(0.0 <= k.prob <= 1.0 for k in kept)
    fewer = prune(q, [bees, rosetta], threshold=0.9, hops=1)
    assert len(fewer) == 1 or all(k.prob >= 0.9 for k in fewer)  # one is always kept
    with pytest.raises(InputError, match="empty"):
        prune(" ", [rosetta])
    with pytest.raises(InputError, match="passage"):
        prune(q, [42])  # type: ignore[list-item]


REPO = Path(__file__).resolve().parents[1]


def _readme_python_block() -> str:
    text = (REPO / "README.md").read_text("utf-8")
    start = text.index("```python\n", text.index("From Python:")) + len("```python\n")
    return text[start : text.index("```", start)]


def test_the_readme_python_block_runs_outside_the_repository(tmp_path: Path) -> None:
    """From an empty folder (no docs/, no examples/): it indexes, answers with a 32-token cap
    (``ask(..., max_tokens=32)``), prunes within a budget and reranks in memory."""
    import subprocess
    import sys

    script = tmp_path / "readme.py"
    script.write_text(_readme_python_block(), "utf-8")
    p = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr
    assert "1822" in p.stdout and "Usage(prompt_tokens=" in p.stdout
    completion = int(p.stdout.split("completion_tokens=")[1].split(")")[0])
    assert 0 < completion <= 32
    assert p.stdout.rstrip().splitlines()[-1] == "[1, 0]"  # the rerank line


def test_rerank_passages_in_memory() -> None:
    from ragsieve import rerank
    from ragsieve.errors import InputError

    passages = ["Honey bees dance to show where food is.", "Voyager 1 was launched in 1977."]
    ranked = rerank("When was Voyager 1 launched?", passages)
    assert [r.index for r in ranked] == [1, 0] and ranked[0].text == passages[1]
    assert 1.0 >= ranked[0].score > ranked[1].score >= 0.0
    assert len(rerank("When was Voyager 1 launched?", passages, top_k=1)) == 1
    with pytest.raises(InputError, match="list of strings"):
        rerank("q", "one string")  # type: ignore[arg-type]


def test_prune_budget_and_rate_are_ceilings(corpus_dir: Path) -> None:
    from ragsieve import prune
    from ragsieve.errors import InputError
    from ragsieve.text import count_tokens

    rosetta = (corpus_dir / "rosetta-stone.md").read_text("utf-8")
    q = "What is the Rosetta Stone and who deciphered it?"
    everything = prune(q, [rosetta], threshold=0.01)
    # The order its docstring states: the most relevant paragraph first, then the next (the
    # relevance is a paragraph's), sentences in source order inside a paragraph.
    for a, b in pairwise(everything):
        assert a.relevance >= b.relevance
        assert a.relevance != b.relevance or a.sentence < b.sentence
    tokens = sum(count_tokens(k.text) for k in everything)
    within = prune(q, [rosetta], threshold=0.01, budget=tokens // 3)
    assert 0 < sum(count_tokens(k.text) for k in within) <= tokens // 3
    assert [k for k in everything if k in within] == within  # same order, a subset
    best = max(everything, key=lambda k: k.prob)
    assert best in within  # the most probable sentences stay
    total = sum(count_tokens(s) for s in rosetta.split("\n") if s.strip())
    halved = prune(q, [rosetta], threshold=0.01, rate=0.2)
    assert sum(count_tokens(k.text) for k in halved) <= 0.25 * total
    with pytest.raises(InputError, match="rate"):
        prune(q, [rosetta], rate=1.5)
    with pytest.raises(InputError, match="open_point must be true or false"):
        prune(q, [rosetta], open_point="yes")  # type: ignore[arg-type]
