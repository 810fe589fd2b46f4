"""The ``full`` method's reranker path (``full[scorer=reranker]``, the ablation of the tagger)
on a real sentence index (Pareto vectors, MiniLM attention links, the shipped ensemble
reranker, the gradient cut, CARROT's MCTS and SAGE's feedback with the real local SmolLM2)."""

from __future__ import annotations

from typing import Any

import pytest

from ragsieve.errors import ConfigError
from ragsieve.index import Index
from ragsieve.methods import get_method, known_methods, method_needs_sentences
from ragsieve.methods.full import FullConfig, FullMethod

pytestmark = pytest.mark.integration

QUESTION = "When was Voyager 1 launched?"


def _check_context(r: Any) -> None:
    """Sentence-sized chunks, each once, grouped per document and in source order there."""
    chunks = [s.chunk for s in r.context.chunks]
    assert all(c.sent_end - c.sent_start == 1 for c in chunks)
    keys = [(c.doc_id, c.index) for c in chunks]
    assert len(keys) == len(set(keys))
    docs = [c.doc_id for c in chunks]
    assert docs == sorted(docs, key=docs.index)  # each document one contiguous run
    for d in set(docs):
        starts = [c.start for c in chunks if c.doc_id == d]
        assert starts == sorted(starts)
    assert r.context.n_tokens == sum(c.n_tokens for c in chunks)


def test_registered_and_needs_sentences() -> None:
    assert "full" in known_methods()
    assert method_needs_sentences("full")


def test_default_pipeline_pools_reranks_expands_and_cuts(sentences: Index) -> None:
    r = get_method("full", sentences, scorer="reranker").retrieve([QUESTION])[0]
    pool = r.trace["pool"]
    assert pool["pareto"] == min(30, len(sentences.sentence_rows(None)))
    assert r.trace["retriever"] == "hybrid" and r.trace["reranker"] == "ensemble"
    scores = [s.score for s in r.candidates]
    assert scores == sorted(scores, reverse=True)
    assert len(r.candidates) == pool["pareto"] + pool["from_chunks"] + pool["linked"]
    assert all(0.0 <= s <= 1.0 for s in scores)
    sel = r.trace["selection"]
    assert sel["selector"] == "gradient" and sel["min_k"] == 1
    assert sel["floor"]["floor"] == 0.3 and r.trace["bridge"] is not None  # hops = 2
    n = len(r.context.chunks)
    assert n == sel["cut"] >= 1
    assert all(s.score >= 0.3 * scores[0] for s in r.context.chunks)
    # The cut is a prefix of the ranking, then regrouped in source order.
    assert {s.chunk.id for s in r.context.chunks} == {s.chunk.id for s in r.candidates[:n]}
    _check_context(r)
    assert "1977" in r.context.text
    assert set(r.timings) >= {"retrieve", "chunks", "rerank", "expand", "select"}


def test_linked_sentences_come_from_the_stored_links(sentences: Index) -> None:
    r = get_method("full", sentences, scorer="reranker", expand=3, links=3).retrieve([QUESTION])[0]
    linked = [s for s in r.candidates if "link" in s.scores]
    assert len(linked) == r.trace["pool"]["linked"]
    keys = [(s.chunk.doc_id, s.chunk.index) for s in r.candidates]
    assert len(keys) == len(set(keys))  # a linked sentence never repeats a candidate
    for s in linked:
        row = {x["idx"]: x for x in sentences.sentence_rows([s.chunk.doc_id]).to_pylist()}
        src = row[s.scores["linked_from"]]
        assert s.chunk.index in src["link_idx"]
        assert "pareto" not in s.scores and 0.0 <= s.score <= 1.0
    none = get_method("full", sentences, scorer="reranker", expand=0).retrieve([QUESTION])[0]
    assert none.trace["pool"]["linked"] == 0


def test_ablation_switches(sentences: Index) -> None:
    no_chunks = get_method("full", sentences, scorer="reranker", chunks=0).retrieve([QUESTION])[0]
    assert no_chunks.trace["pool"]["from_chunks"] == 0 and no_chunks.trace["retriever"] is None
    plain = get_method("full", sentences, scorer="reranker", pareto=False).retrieve([QUESTION])[0]
    assert plain.trace["alpha"] == 1.0
    top3 = get_method(
        "full", sentences, scorer="reranker", selection="top-k", min_k=3, floor=0
    ).retrieve([QUESTION])[0]
    assert len(top3.context.chunks) == 3
    capped = get_method("full", sentences, scorer="reranker", budget=40, min_k=10).retrieve(
        [QUESTION]
    )[0]
    assert 0 < capped.context.n_tokens <= 40
    _check_context(capped)
    bare = get_method(
        "full", sentences, scorer="reranker", title=False, reranker="bi-encoder"
    ).retrieve([QUESTION])[0]
    assert bare.trace["reranker"] == "bi-encoder"
    assert "1977" in bare.context.text


def test_passage_unit_widens_each_sentence_to_its_passage(sentences: Index) -> None:
    sent = get_method("full", sentences, scorer="reranker", expand=0).retrieve([QUESTION])[0]
    wide = get_method(
        "full", sentences, scorer="reranker", expand=0, unit="passage", passage_cut=False
    ).retrieve([QUESTION])[0]
    rows = {
        (r["doc_id"], r["idx"]): r
        for r in sentences.sentence_rows(
            sorted({s.chunk.doc_id for s in sent.context.chunks})
        ).to_pylist()
    }
    want = set()
    for s in sent.context.chunks:
        p = rows[(s.chunk.doc_id, s.chunk.index)]["passage"]
        want |= {k for k, r in rows.items() if k[0] == s.chunk.doc_id and r["passage"] == p}
    assert {(s.chunk.doc_id, s.chunk.index) for s in wide.context.chunks} == want
    assert wide.trace["selection"]["passages"]["sentences"] == len(want)
    _check_context(wide)
    capped = get_method("full", sentences, scorer="reranker", unit="passage", budget=60).retrieve(
        [QUESTION]
    )[0]
    assert 0 < capped.context.n_tokens <= 60


def _passage_rows(sentences: Index, docs: set[str]) -> dict[tuple[str, int], int]:
    return {
        (r["doc_id"], int(r["idx"])): int(r["passage"])
        for r in sentences.sentence_rows(sorted(docs)).to_pylist()
    }


def test_passage_cut_counts_passages_not_sentences(sentences: Index) -> None:
    r = get_method(
        "full", sentences, scorer="reranker", unit="passage", min_k=2, floor=0.0
    ).retrieve([QUESTION])[0]
    cut = r.trace["selection"]["passage_cut"]
    assert 1 <= cut["passages"] <= cut["sentences"]
    docs = {s.chunk.doc_id for s in r.candidates}
    of = _passage_rows(sentences, docs)
    chosen = {(s.chunk.doc_id, of[(s.chunk.doc_id, s.chunk.index)]) for s in r.context.chunks}
    assert len(chosen) >= 2  # min_k = 2 counts passages
    for doc, p in chosen:  # every chosen passage is whole (no budget)
        members = {k for k, v in of.items() if k[0] == doc and v == p}
        assert members <= {(s.chunk.doc_id, s.chunk.index) for s in r.context.chunks}
    best = max(r.candidates, key=lambda s: s.score)
    assert (best.chunk.doc_id, of[(best.chunk.doc_id, best.chunk.index)]) in chosen
    # The floor applies to the passages' best sentences.
    tight = get_method("full", sentences, scorer="reranker", unit="passage", floor=0.9).retrieve(
        [QUESTION]
    )[0]
    top = max(s.score for s in tight.candidates)
    assert all(s.score >= 0.9 * top for s in tight.context.chunks)
    _check_context(tight)
    with pytest.raises(ConfigError, match="passage_cut"):
        FullConfig(passage_cut="yes")  # type: ignore[arg-type]


def test_floor_and_bridge_hop(sentences: Index) -> None:
    floored = get_method("full", sentences, scorer="reranker", floor=0.9, min_k=1).retrieve(
        [QUESTION]
    )[0]
    top = floored.candidates[0].score
    assert all(s.score >= 0.9 * top for s in floored.context.chunks)
    assert floored.trace["selection"]["floor"]["dropped"] >= 0
    two = get_method("full", sentences, scorer="reranker", hops=2).retrieve([QUESTION])[0]
    bridge = next(s for s in two.candidates if s.chunk.id == two.trace["bridge"])
    best_doc = bridge.chunk.doc_id
    assert "hop" not in bridge.scores
    hopped = [s for s in two.candidates if "hop" in s.scores]
    assert hopped and all(s.chunk.doc_id != best_doc for s in hopped)
    assert all(s.score >= s.scores["hop"] - 1e-9 for s in hopped)


def test_mcts_order_is_carrots_best_path(sentences: Index) -> None:
    r = get_method("full", sentences, scorer="reranker", order="mcts", min_k=4, mcts_n=4).retrieve(
        [QUESTION]
    )[0]
    sel = r.trace["selection"]
    assert sel["order"] == "mcts"
    path = [p["chunk_id"] for p in sel["mcts"]["best_path"]]
    assert path == [s.chunk.id for s in r.context.chunks]
    assert 1 <= len(path) <= 4


def test_bad_options_are_one_line_errors(sentences: Index) -> None:
    with pytest.raises(ConfigError, match=r"unknown option\(s\) .* for full: valid keys"):
        get_method("full", sentences, min_K=3)
    with pytest.raises(ConfigError, match="order must be"):
        get_method("full", sentences, scorer="reranker", order="random")
    with pytest.raises(ConfigError, match="expand"):
        FullConfig(expand=-1)
    with pytest.raises(ConfigError, match="unit"):
        FullConfig(unit="word")
    with pytest.raises(ConfigError, match="hops"):
        FullConfig(hops=3)
    with pytest.raises(ConfigError, match="pareto"):
        FullConfig(pareto="yes")  # type: ignore[arg-type]


def test_index_without_sentences_builds_them_or_refuses_source_table(plain: Index) -> None:
    with pytest.raises(Exception, match="--sentences"):
        get_method("full", plain, source="table")
    (r,) = get_method("full", plain).retrieve([QUESTION])  # built from the retrieved chunks
    assert r.context.chunks and all(":s" in s.chunk.id for s in r.context.chunks)


def test_feedback_loop_reselects_sentences_with_the_local_llm(
    sentences: Index, smollm2: Any
) -> None:
    m = FullMethod(sentences, FullConfig(scorer="reranker", min_k=2, max_rounds=2, feedback=True))
    ans = m.ask(QUESTION, smollm2, max_tokens=32)
    fb = ans.trace["feedback"]
    assert 1 <= len(fb["rounds"]) <= 2
    for r in fb["rounds"]:
        assert r["feedback_tokens"]["prompt"] > 0 and r["n_chunks"] == len(r["selected"]) >= 1
    chosen = fb["rounds"][fb["chosen_round"] - 1]
    assert ans.text == chosen["answer"]
    assert [s.chunk.id for s in ans.context.chunks] == chosen["selected"]
    assert ans.method == "full"
    _check_context(ans)
