"""The Python API mirrors the CLI: Index.open/add_paths, search, ask."""

from __future__ import annotations

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
