"""ParetoRAG sentence retrieval on a real sentence index: exact weighted scores, alpha, budget,
grouping per document in source order, whole-index search."""

from __future__ import annotations

import numpy as np
import pytest

from ragsieve.errors import ConfigError
from ragsieve.index import Index
from ragsieve.methods import get_method
from ragsieve.methods.pareto import ParetoConfig, ParetoMethod

pytestmark = pytest.mark.integration

QUESTION = "When was Voyager 1 launched?"


def _all_docs(sentences: Index) -> list[str]:
    return sorted(set(sentences.sentence_rows(None).column("doc_id").to_pylist()))


@pytest.mark.parametrize("alpha", [0.8, 1.0, 0.3])
def test_scores_are_the_dot_product_with_the_weighted_vector(
    sentences: Index, alpha: float
) -> None:
    m = ParetoMethod(sentences, ParetoConfig(k=5, alpha=alpha))
    q = sentences.embedder.embed([QUESTION])[0]
    ranked = m.ranker.rank(q[None, :], [_all_docs(sentences)])[0]
    t = sentences.sentence_rows(None, vectors=["vector", "context"])
    core = np.asarray(t.column("vector").to_pylist(), dtype=np.float32)
    ctx = np.asarray(t.column("context").to_pylist(), dtype=np.float32)
    weighted = np.where(
        np.any(ctx != 0, axis=1, keepdims=True), alpha * core + (1 - alpha) * ctx, core
    )
    want = dict(zip(t.column("id").to_pylist(), weighted @ q, strict=True))
    assert len(ranked) == t.num_rows
    for s in ranked:
        assert s.score == pytest.approx(float(want[s.chunk.id]), abs=1e-5)
    assert [s.score for s in ranked] == sorted((s.score for s in ranked), reverse=True)
    if alpha == 1.0:  # plain sentence retrieval
        assert all(s.score == pytest.approx(s.scores["core"], abs=1e-6) for s in ranked)


def test_whole_index_search_agrees_with_the_pooled_ranking(sentences: Index) -> None:
    q = sentences.embedder.embed([QUESTION])
    for alpha in (None, 0.5):
        m = ParetoMethod(sentences, ParetoConfig(k=5, alpha=alpha))
        pooled = m.ranker.rank(q, [_all_docs(sentences)])[0][:5]
        whole = m.ranker.rank(q, None)[0][:5]
        assert [s.chunk.id for s in whole] == [s.chunk.id for s in pooled]


def test_context_is_top_k_sentences_grouped_per_document_in_source_order(sentences: Index) -> None:
    r = get_method("pareto", sentences, k=6).retrieve([QUESTION])[0]
    chunks = [s.chunk for s in r.context.chunks]
    assert len(chunks) == 6
    assert {c.id for c in chunks} == {s.chunk.id for s in r.candidates[:6]}
    assert all(c.sent_end == c.sent_start + 1 for c in chunks)
    docs = [c.doc_id for c in chunks]
    assert docs == sorted(docs, key=docs.index)  # each document's sentences are contiguous
    for d in set(docs):
        starts = [c.start for c in chunks if c.doc_id == d]
        assert starts == sorted(starts)
    doc = sentences.get_document(chunks[0].doc_id)
    assert doc is not None and doc.text[chunks[0].start : chunks[0].end] == chunks[0].text
    assert "Voyager" in r.context.text and "1977" in r.context.text
    assert r.trace["alpha"] == 0.8 and r.trace["context_form"] == "mean"


def test_budget_fills_in_rank_order_without_overflowing(sentences: Index) -> None:
    r = get_method("pareto", sentences, budget=120).retrieve([QUESTION])[0]
    assert 0 < r.context.n_tokens <= 120
    assert r.context.n_tokens == sum(s.chunk.n_tokens for s in r.context.chunks)
    assert len(r.context.chunks) > 3


def test_bad_options_are_one_line_config_errors(sentences: Index) -> None:
    with pytest.raises(ConfigError, match="alpha"):
        get_method("pareto", sentences, alpha=2.0)
    with pytest.raises(ConfigError, match="--pareto-context exact"):
        get_method("pareto", sentences, context="exact")
    with pytest.raises(ConfigError, match=r"unknown option\(s\) .* for pareto: valid keys"):
        get_method("pareto", sentences, alhpa=0.5)
