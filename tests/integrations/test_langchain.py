"""LangChain: RagsieveCompressor inside ContextualCompressionRetriever over LangChain's own
InMemoryVectorStore (embedded with RagsieveEmbeddings), and RagsieveRetriever over an index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pool_helpers import QUESTION, Paragraph, is_answer

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_classic")

from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore

from ragsieve.errors import ConfigError
from ragsieve.formats import locate
from ragsieve.index import Index
from ragsieve.integrations import META_KEYS
from ragsieve.integrations import langchain as lc

pytestmark = pytest.mark.integration

TEXT = "In 1822 Champollion announced the decipherment of the hieroglyphs."


@pytest.fixture(scope="module")
def store(paragraphs: list[Paragraph]) -> InMemoryVectorStore:
    docs = [
        Document(p.text, metadata={"title": p.title, "source": p.source, "para": p.para})
        for p in paragraphs
    ]
    return InMemoryVectorStore.from_documents(docs, lc.RagsieveEmbeddings())


@pytest.fixture(scope="module")
def compressor() -> lc.RagsieveCompressor:
    c = lc.RagsieveCompressor("full")
    yield c
    c.close()


def check(out: list[Document], paragraphs: list[Paragraph], method: str) -> None:
    """Metadata kept, ragsieve keys added, offsets slicing the source paragraph exactly."""
    assert out
    for d in out:
        m = d.metadata
        assert {"title", "source", "para", *META_KEYS} <= set(m)
        assert m["ragsieve_method"] == method
        assert isinstance(m["ragsieve_score"], float)
        src = paragraphs[m["para"]]
        assert src.text[m["ragsieve_start"] : m["ragsieve_end"]] == d.page_content


def test_compression_retriever_keeps_the_answer_sentence(
    store: InMemoryVectorStore, compressor: lc.RagsieveCompressor, paragraphs: list[Paragraph]
) -> None:
    base = store.as_retriever(search_kwargs={"k": 6})
    chain = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base)
    out = chain.invoke(QUESTION)
    check(out, paragraphs, "full")
    answer = [d for d in out if is_answer(d.page_content)]
    assert answer and answer[0].metadata["source"] == "rosetta-stone.md"
    # sentences, fewer characters than the passages the vector store returned
    assert sum(len(d.page_content) for d in out) < sum(
        len(d.page_content) for d in base.invoke(QUESTION)
    )
    # the method's context order, with its provenance
    res = compressor.select(base.invoke(QUESTION), QUESTION)
    assert [d.metadata["ragsieve_chunk_id"] for d in out] == res.retrieval.trace["selected"]
    assert res.indexed == 0  # the chain's call indexed them already


def test_sage_spec_returns_chunks_in_score_order(
    store: InMemoryVectorStore, paragraphs: list[Paragraph]
) -> None:
    sage = lc.RagsieveCompressor("sage[g=0.3]", budget=300)
    docs = store.similarity_search(QUESTION, k=6)
    out = sage.compress_documents(docs, QUESTION)
    check(out, paragraphs, "sage[g=0.3]")
    scores = [d.metadata["ragsieve_score"] for d in out]
    assert scores == sorted(scores, reverse=True)
    assert any(is_answer(d.page_content) for d in out)
    sage.close()


def test_a_bad_spec_is_a_one_line_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown method 'fulll'") as e:
        lc.RagsieveCompressor("fulll")
    assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="unknown option"):
        lc.RagsieveRetriever(index="unused", method="sage[gg=1]")


def test_empty_input_compresses_to_nothing(compressor: lc.RagsieveCompressor) -> None:
    assert compressor.compress_documents([], QUESTION) == []


def test_index_retriever(sample_index_dir: Path) -> None:
    index = Index.open(sample_index_dir)
    for spec, kw in [("naive", {"k": 3}), ("sage", {"budget": 300})]:
        r = lc.RagsieveRetriever(index=str(sample_index_dir), method=spec, **kw)
        out = r.invoke(QUESTION)
        assert out and any(is_answer(d.page_content) for d in out), spec
        for d in out:
            m = d.metadata
            assert m["ragsieve_method"] == spec and isinstance(m["ragsieve_score"], float)
            assert m["source"].endswith(".md") and m["title"]
            text = index.get_document(m["doc_id"]).text
            assert text[m["ragsieve_start"] : m["ragsieve_end"]] == d.page_content
            # every sample document starts with a "# Title": each chunk sits under a heading
            at = locate(text, m["ragsieve_start"], m["ragsieve_end"])
            assert m["ragsieve_where"] == at and at
        scores = [d.metadata["ragsieve_score"] for d in out]
        assert scores == sorted(scores, reverse=True)


def test_index_retriever_sees_documents_committed_after_it_was_built(tmp_path: Path) -> None:
    from ragsieve.types import Document as RDocument

    path = tmp_path / "index"
    Index.create(path).add([RDocument("stone", "Soldiers found the stone in 1799.")])
    r = lc.RagsieveRetriever(index=str(path), method="naive", k=1)
    assert r.invoke("Which bird migrates to Africa?")[0].metadata["doc_id"] == "stone"
    # another writer (a `ragsieve index` run) commits a new document
    Index.open(path).add([RDocument("stork", "The white stork migrates to Africa each autumn.")])
    hit = r.invoke("Which bird migrates to Africa?")[0]
    assert hit.metadata["doc_id"] == "stork" and "stork" in hit.page_content


def test_embeddings_are_minilm_vectors() -> None:
    emb = lc.RagsieveEmbeddings()
    docs = emb.embed_documents(["the stone", "honey bees"])
    q = emb.embed_query("the stone")
    assert len(docs) == 2 and len(q) == 384 and all(isinstance(x, float) for x in q)
    assert np.isclose(np.linalg.norm(q), 1.0, atol=1e-3)
    assert np.dot(q, docs[0]) > np.dot(q, docs[1])
    assert emb.embed_documents([]) == []


@pytest.mark.parametrize(
    ("call", "error", "fragments"),
    [
        (lambda c: c.compress_documents([Document(TEXT)], None), "InputError", ("query", "None")),
        (lambda c: c.compress_documents([Document(TEXT)], "  "), "InputError", ("query is empty",)),
        (lambda c: c.compress_documents(None, QUESTION), "InputError", ("documents", "not None")),
        (lambda c: c.compress_documents("abc", QUESTION), "InputError", ("documents", "not a str")),
        (
            lambda c: c.compress_documents([TEXT], QUESTION),
            "InputError",
            ("documents[0]", "Document"),
        ),
        (
            lambda c: lc.RagsieveEmbeddings().embed_documents([None]),
            "InputError",
            ("texts[0]", "None"),
        ),
        (
            lambda c: lc.RagsieveEmbeddings().embed_documents("abc"),
            "InputError",
            ("texts", "not a str"),
        ),
        (
            lambda c: lc.RagsieveEmbeddings().embed_documents(None),
            "InputError",
            ("texts", "not None"),
        ),
        (lambda c: lc.RagsieveEmbeddings().embed_query(None), "InputError", ("text", "None")),
        (lambda c: lc.RagsieveEmbeddings().embed_query("\ud800"), "InputError", ("surrogate",)),
        (lambda c: lc.RagsieveEmbeddings(5), "ConfigError", ("model", "int 5")),
        (lambda c: lc.RagsieveCompressor(5), "ConfigError", ("method", "int 5")),
        (lambda c: lc.RagsieveCompressor(budget=True), "ConfigError", ("budget", "(a bool)")),
        (lambda c: lc.RagsieveCompressor(budget="x"), "ConfigError", ("budget", "'x'")),
        (
            lambda c: lc.RagsieveCompressor("full", index_dir=5),
            "InputError",
            ("index_dir", "int 5"),
        ),
        (lambda c: lc.RagsieveRetriever(index=None), "InputError", ("index", "None")),
        (
            lambda c: lc.RagsieveRetriever(index="unused", k=True),
            "ConfigError",
            ("k must be", "True"),
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_argument(
    compressor: lc.RagsieveCompressor, call: Any, error: str, fragments: tuple[str, ...]
) -> None:
    import ragsieve.errors

    with pytest.raises(getattr(ragsieve.errors, error)) as e:
        call(compressor)
    msg = str(e.value)
    assert "\n" not in msg and all(f in msg for f in fragments), msg


def test_each_piece_says_where_it_sits(
    located: Any, assert_located: Any, sample_index_dir: Path
) -> None:
    """``ragsieve_where``: a piece's heading or page, read from its passage's own text (a
    Markdown file's headings, a PDF's pages split by form feeds), "" where the text has
    neither; over an index, from the indexed document (the sample corpus's headings)."""
    texts = {"md": located.markdown, "pdf": located.pdf}
    docs = [Document(text, metadata={"name": name}) for name, text in texts.items()]
    c = lc.RagsieveCompressor()
    try:
        assert_located(
            lambda q: [(d.page_content, d.metadata) for d in c.compress_documents(docs, q)],
            lambda m: texts[m["name"]],
        )
        plain = [Document("Champollion announced the decipherment of hieroglyphs in 1822.")]
        out = c.compress_documents(plain, QUESTION)
        assert out and all(d.metadata["ragsieve_where"] == "" for d in out)
    finally:
        c.close()
    out = lc.RagsieveRetriever(index=str(sample_index_dir), method="tagger").invoke(QUESTION)
    answer = next(d for d in out if is_answer(d.page_content))
    assert answer.metadata["ragsieve_where"] == "Decipherment"


def test_a_bad_query_on_the_index_retriever_is_one_line(
    sample_index_dir: Path, assert_refuses_bad_queries: Any
) -> None:
    r = lc.RagsieveRetriever(index=str(sample_index_dir), method="naive", k=1)
    assert_refuses_bad_queries(r.invoke, "")
