"""SAKI-RAG's Dual-Axis Retriever on a real sentence index (two-sentence chunks, MiniLM attention
links, the shipped cross-encoder as judge and reranker)."""

from __future__ import annotations

import pytest

from ragsieve.errors import ConfigError
from ragsieve.index import Index
from ragsieve.methods import get_method
from ragsieve.methods.saki import related_sentences

pytestmark = pytest.mark.integration

QUESTION = "When was Voyager 1 launched?"


def _rows(sentences: Index, doc_id: str) -> dict[int, dict]:  # type: ignore[type-arg]
    return {r["idx"]: r for r in sentences.sentence_rows([doc_id]).to_pylist()}


def test_candidates_are_static_chunks_concatenated_with_their_linked_sentences(
    sentences: Index,
) -> None:
    m = get_method("saki", sentences, k=3, judge="none", links=2, reranker="bi-encoder")
    r = m.retrieve([QUESTION])[0]
    assert r.trace["fallback"] is False
    assert r.trace["expanded"] == r.trace["kept"] == len(r.candidates) > 3
    static = {s["chunk_id"] for s in r.trace["static"]}
    assert len(static) == 3
    for s in r.candidates:
        base, j = s.chunk.id.rsplit("+", 1)
        assert base in static
        rows = _rows(sentences, s.chunk.doc_id)
        chunk = sentences.chunks_of(s.chunk.doc_id)[int(base.rsplit(":", 1)[1])]
        assert chunk.sent_end - chunk.sent_start <= 2  # SAKI's two-sentence chunks
        rel = [i for i, _ in related_sentences(chunk, rows, 2)]
        assert int(j) in rel
        assert s.chunk.text == f"{chunk.text.strip()} {rows[int(j)]['text'].strip()}"
    scores = [s.score for s in r.candidates]
    assert scores == sorted(scores, reverse=True)
    # The context: each sentence once, grouped per document in source order.
    ids = [s.chunk.id for s in r.context.chunks]
    assert len(ids) == len(set(ids))
    assert "1977" in r.context.text


def test_related_sentences_merge_links_and_exclude_the_chunk_itself(sentences: Index) -> None:
    chunk = sentences.chunks_of(sentences.sentence_rows(None).column("doc_id")[0].as_py())[1]
    rows = _rows(sentences, chunk.doc_id)
    rel = related_sentences(chunk, rows, 5)
    own = set(range(chunk.sent_start, chunk.sent_end))
    assert rel and not own & {j for j, _ in rel}
    for j, w in rel:
        want = sum(
            rows[i]["link_w"][rows[i]["link_idx"].index(j)] for i in own if j in rows[i]["link_idx"]
        )
        assert w == pytest.approx(want)
    assert [w for _, w in rel] == sorted((w for _, w in rel), reverse=True)


def test_cross_encoder_judge_keeps_some_and_reranks(sentences: Index) -> None:
    r = get_method("saki", sentences, k=5).retrieve([QUESTION])[0]
    assert r.trace["judge"] == "cross-encoder" and not r.trace["fallback"]
    assert 0 < r.trace["kept"] <= r.trace["expanded"]
    assert all(s.scores["judge"] >= 0.5 for s in r.candidates)
    assert len(r.candidates) <= r.trace["kept"]
    assert "1977" in r.context.text


def test_fallback_to_reranked_static_hits_when_the_judge_rejects_everything(
    sentences: Index,
) -> None:
    r = get_method("saki", sentences, k=4, threshold=1.0).retrieve(
        ["Which recipe uses saffron and anchovies?"]
    )[0]
    assert r.trace["kept"] == 0 and r.trace["fallback"] is True
    assert "rejected all" in r.trace["fallback_reason"]
    static = {s["chunk_id"] for s in r.trace["static"]}
    assert {s.chunk.id for s in r.candidates} == static
    assert [s.score for s in r.candidates] == sorted((s.score for s in r.candidates), reverse=True)
    assert r.context.chunks  # the static hits' sentences


def test_budget_caps_the_union_of_sentences(sentences: Index) -> None:
    r = get_method("saki", sentences, k=5, judge="none", budget=80).retrieve([QUESTION])[0]
    assert 0 < r.context.n_tokens <= 80


def test_bad_options_are_one_line_config_errors(sentences: Index) -> None:
    with pytest.raises(ConfigError, match="judge"):
        get_method("saki", sentences, judge="oracle")
    with pytest.raises(ConfigError, match="threshold"):
        get_method("saki", sentences, threshold=3)
    with pytest.raises(ConfigError, match=r"unknown option\(s\) .* for saki: valid keys"):
        get_method("saki", sentences, linkz=2)


def test_eval_spec_judge_none_means_no_judge(sentences: Index) -> None:
    from ragsieve.methods import parse_methods

    (spec,) = parse_methods("saki[judge=none,reranker=bi-encoder]")
    assert spec.options["judge"] is None  # how the spec parser reads "none"
    m = get_method(spec.name, sentences, **spec.options)
    assert m.config.judge == "none"
    r = m.retrieve([QUESTION])[0]
    assert r.trace["judge"] == "none" and r.context.chunks
