"""LlamaIndex: a VectorStoreIndex (its own SentenceSplitter, RagsieveEmbedding) retrieves
nodes, RagsievePostprocessor keeps the evidence; RagsieveRetriever runs over an index. No LLM
is resolved anywhere (Settings.llm is never read)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pool_helpers import CORPUS, QUESTION, is_answer

pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import MetadataMode, NodeRelationship, NodeWithScore

from ragsieve.errors import ConfigError, InputError
from ragsieve.formats import locate
from ragsieve.index import Index
from ragsieve.integrations import META_KEYS
from ragsieve.integrations.llamaindex import (
    RagsieveEmbedding,
    RagsievePostprocessor,
    RagsieveRetriever,
)

pytestmark = pytest.mark.integration

TEXT = "In 1822 Champollion announced the decipherment of the hieroglyphs."


@pytest.fixture(scope="module")
def nodes() -> list[NodeWithScore]:
    """The vector index's top 5 nodes for the question (files split by LlamaIndex)."""
    docs = [
        Document(text=p.read_text(encoding="utf-8"), metadata={"file_name": p.name})
        for p in sorted(CORPUS.glob("*.md"))
    ]
    index = VectorStoreIndex.from_documents(
        docs,
        embed_model=RagsieveEmbedding(),
        transformations=[SentenceSplitter(chunk_size=256, chunk_overlap=0)],
    )
    return index.as_retriever(similarity_top_k=5).retrieve(QUESTION)


@pytest.fixture(scope="module")
def full() -> RagsievePostprocessor:
    pp = RagsievePostprocessor("full")
    yield pp
    pp.close()


def check(out: list[NodeWithScore], nodes: list[NodeWithScore], method: str) -> None:
    """Metadata kept, ragsieve keys added (and hidden from the LLM), offsets exact, SOURCE set."""
    by_id = {n.node.node_id: n.node for n in nodes}
    assert out
    for n in out:
        m = n.node.metadata
        assert {"file_name", *META_KEYS} <= set(m)
        assert m["ragsieve_method"] == method
        assert isinstance(n.score, float) and n.score == m["ragsieve_score"]
        src = by_id[n.node.relationships[NodeRelationship.SOURCE].node_id]
        text = src.get_content(metadata_mode=MetadataMode.NONE)
        assert text[m["ragsieve_start"] : m["ragsieve_end"]] == n.node.get_content()
        assert src.metadata["file_name"] == m["file_name"]
        assert "ragsieve_" not in n.node.get_content(metadata_mode=MetadataMode.LLM)
        assert "file_name" in n.node.get_content(metadata_mode=MetadataMode.LLM)


def test_postprocessor_keeps_the_answer_sentence(
    nodes: list[NodeWithScore], full: RagsievePostprocessor
) -> None:
    out = full.postprocess_nodes(nodes, query_str=QUESTION)
    check(out, nodes, "full")
    answer = [n for n in out if is_answer(n.node.get_content())]
    assert answer and answer[0].node.metadata["file_name"] == "rosetta-stone.md"
    res = full.select(nodes, QUESTION)
    assert [n.node.node_id for n in out] == res.retrieval.trace["selected"]
    assert sum(len(n.node.get_content()) for n in out) < sum(
        len(n.node.get_content()) for n in nodes
    )


def test_sage_spec_returns_chunks_in_score_order(nodes: list[NodeWithScore]) -> None:
    pp = RagsievePostprocessor("sage[g=0.3]", budget=300)
    out = pp.postprocess_nodes(nodes, query_str=QUESTION)
    check(out, nodes, "sage[g=0.3]")
    scores = [n.score for n in out]
    assert scores == sorted(scores, reverse=True)
    assert any(is_answer(n.node.get_content()) for n in out)
    pp.close()


def test_bad_input_and_a_bad_spec_are_one_line(full: RagsievePostprocessor) -> None:
    with pytest.raises(ConfigError, match="unknown option") as e:
        RagsievePostprocessor("sage[gg=1]")
    assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="unknown method"):
        RagsieveRetriever("unused", method="nope")
    with pytest.raises(InputError, match="needs the query"):
        full.postprocess_nodes([])
    assert full.postprocess_nodes([], query_str=QUESTION) == []


def test_index_retriever(sample_index_dir: Path) -> None:
    index = Index.open(sample_index_dir)
    for spec, kw in [("naive", {"k": 3}), ("sage", {"budget": 300})]:
        out = RagsieveRetriever(sample_index_dir, method=spec, **kw).retrieve(QUESTION)
        assert out and any(is_answer(n.node.get_content()) for n in out), spec
        for n in out:
            m = n.node.metadata
            assert m["ragsieve_method"] == spec and n.node.node_id == m["ragsieve_chunk_id"]
            text = index.get_document(m["doc_id"]).text
            assert text[m["ragsieve_start"] : m["ragsieve_end"]] == n.node.get_content()
            # every sample document starts with a "# Title": each chunk sits under a heading
            at = locate(text, m["ragsieve_start"], m["ragsieve_end"])
            assert m["ragsieve_where"] == at and at
        scores = [n.score for n in out]
        assert scores == sorted(scores, reverse=True)


def test_embedding_model() -> None:
    emb = RagsieveEmbedding()
    q = emb.get_query_embedding("the stone")
    docs = emb.get_text_embedding_batch(["the stone", "honey bees"])
    assert len(q) == 384 and np.isclose(np.linalg.norm(q), 1.0, atol=1e-3)
    assert np.dot(q, docs[0]) > np.dot(q, docs[1])


def _node() -> NodeWithScore:
    from llama_index.core.schema import TextNode

    return NodeWithScore(node=TextNode(text=TEXT))


@pytest.mark.parametrize(
    ("call", "error", "fragments"),
    [
        (
            lambda p: p.postprocess_nodes([_node()], query_str=None),
            InputError,
            ("needs the query",),
        ),
        (lambda p: p.postprocess_nodes([_node()]), InputError, ("needs the query", "query_str")),
        (
            lambda p: p.postprocess_nodes([_node()], query_str=" "),
            InputError,
            ("query_str is empty",),
        ),
        (lambda p: p.postprocess_nodes([_node()], query_str=5), InputError, ("query_str", "int 5")),
        (
            lambda p: p.postprocess_nodes(None, query_str=QUESTION),
            InputError,
            ("nodes", "not None"),
        ),
        (lambda p: p.postprocess_nodes([TEXT], query_str=QUESTION), InputError, ("nodes[0]",)),
        (
            lambda p: p.postprocess_nodes([_node().node], query_str=QUESTION),
            InputError,
            ("nodes[0]", "TextNode"),
        ),
        (lambda p: RagsievePostprocessor(5), ConfigError, ("method", "int 5")),
        (lambda p: RagsievePostprocessor(budget="x"), ConfigError, ("budget", "'x'")),
        (lambda p: RagsievePostprocessor(k=True), ConfigError, ("k must be", "True")),
        (
            lambda p: RagsieveEmbedding().get_text_embedding_batch([None]),
            InputError,
            ("texts[0]", "None"),
        ),
        (lambda p: RagsieveEmbedding().get_query_embedding(None), InputError, ("query", "None")),
        (lambda p: RagsieveEmbedding().get_text_embedding("\udcff"), InputError, ("surrogate",)),
        (lambda p: RagsieveEmbedding(model_name=5), ConfigError, ("model_name", "int 5")),
        (lambda p: RagsieveRetriever(None), InputError, ("index", "None")),
    ],
)
def test_bad_input_is_one_line_naming_the_argument(
    full: RagsievePostprocessor, call: Any, error: type, fragments: tuple[str, ...]
) -> None:
    with pytest.raises(error) as e:
        call(full)
    msg = str(e.value)
    assert "\n" not in msg and all(f in msg for f in fragments), msg


def test_a_bad_query_on_the_index_retriever_is_one_line(
    sample_index_dir: Path, assert_refuses_bad_queries: Any
) -> None:
    r = RagsieveRetriever(sample_index_dir, method="naive", k=1)
    assert_refuses_bad_queries(r.retrieve, " ")


def test_each_node_says_where_it_sits(
    located: Any, assert_located: Any, sample_index_dir: Path
) -> None:
    """``ragsieve_where``: a piece's heading or page, read from its source node's own text (a
    Markdown file's headings, a PDF's pages split by form feeds), "" where the text has
    neither; over an index, from the indexed document (the sample corpus's headings)."""
    from llama_index.core.schema import TextNode

    nodes = [
        NodeWithScore(node=TextNode(text=t), score=1.0) for t in (located.markdown, located.pdf)
    ]
    by_id = {n.node.node_id: n.node.get_content() for n in nodes}
    pp = RagsievePostprocessor()
    try:
        sources: dict[str, str] = {}  # chunk id -> its source node's text

        def select(question: str) -> list[tuple[str, dict[str, Any]]]:
            out = pp.postprocess_nodes(nodes, query_str=question)
            for n in out:
                src = n.node.relationships[NodeRelationship.SOURCE].node_id
                sources[n.node.metadata["ragsieve_chunk_id"]] = by_id[src]
            return [(n.node.get_content(), n.node.metadata) for n in out]

        assert_located(select, lambda m: sources[m["ragsieve_chunk_id"]])
        plain = [NodeWithScore(node=TextNode(text="Champollion deciphered it in 1822."), score=1.0)]
        out = pp.postprocess_nodes(plain, query_str=QUESTION)
        assert out and all(n.node.metadata["ragsieve_where"] == "" for n in out)
    finally:
        pp.close()
    out = RagsieveRetriever(sample_index_dir, method="tagger").retrieve(QUESTION)
    answer = next(n for n in out if is_answer(n.node.get_content()))
    assert answer.node.metadata["ragsieve_where"] == "Decipherment"
