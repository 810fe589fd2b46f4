"""Haystack: a Pipeline of InMemoryBM25Retriever -> RagsieveRanker over InMemoryDocumentStore,
saved and loaded; RagsieveRetriever over an index as a pipeline component."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pool_helpers import QUESTION, Paragraph, is_answer

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before haystack is imported
pytest.importorskip("haystack")

from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from ragsieve.errors import ConfigError, InputError
from ragsieve.formats import locate
from ragsieve.index import Index
from ragsieve.integrations import META_KEYS
from ragsieve.integrations.haystack import RagsieveRanker, RagsieveRetriever

pytestmark = pytest.mark.integration

TEXT = "In 1822 Champollion announced the decipherment of the hieroglyphs."

ALLOW = "ragsieve.integrations.haystack"


@pytest.fixture(scope="module")
def store(paragraphs: list[Paragraph]) -> InMemoryDocumentStore:
    store = InMemoryDocumentStore()
    store.write_documents(
        [Document(content=p.text, meta={"title": p.title, "source": p.source}) for p in paragraphs]
    )
    return store


def pipeline(store: InMemoryDocumentStore, ranker: RagsieveRanker) -> Pipeline:
    pipe = Pipeline()
    pipe.add_component("bm25", InMemoryBM25Retriever(store, top_k=6))
    pipe.add_component("sieve", ranker)
    pipe.connect("bm25.documents", "sieve.documents")
    return pipe


def run(pipe: Pipeline) -> list[Document]:
    out = pipe.run({"bm25": {"query": QUESTION}, "sieve": {"query": QUESTION}})
    return out["sieve"]["documents"]


def check(out: list[Document], store: InMemoryDocumentStore, method: str) -> None:
    """Meta kept, ragsieve keys and score set, offsets slicing the source document exactly."""
    sources = {d.id: d for d in store.filter_documents()}
    assert out
    for d in out:
        m = d.meta
        assert {"title", "source", "ragsieve_source_id", *META_KEYS} <= set(m)
        assert m["ragsieve_method"] == method
        assert isinstance(d.score, float) and d.score == m["ragsieve_score"]
        src = sources[m["ragsieve_source_id"]]
        assert src.content[m["ragsieve_start"] : m["ragsieve_end"]] == d.content
        assert src.meta["title"] == m["title"]


def test_pipeline_keeps_the_answer_sentence(store: InMemoryDocumentStore) -> None:
    ranker = RagsieveRanker("full")
    out = run(pipeline(store, ranker))
    check(out, store, "full")
    answer = [d for d in out if is_answer(d.content)]
    assert answer and answer[0].meta["source"] == "rosetta-stone.md"
    res = ranker.select(QUESTION, InMemoryBM25Retriever(store, top_k=6).run(QUESTION)["documents"])
    assert res.indexed == 0  # the pipeline's run indexed them already
    assert [d.meta["ragsieve_chunk_id"] for d in out] == res.retrieval.trace["selected"]
    ranker.selector.close()


def test_a_saved_pipeline_loads_and_runs_with_another_spec(store: InMemoryDocumentStore) -> None:
    pipe = pipeline(store, RagsieveRanker("sage[g=0.3]", budget=300))
    text = pipe.dumps()
    assert "ragsieve.integrations.haystack.RagsieveRanker" in text and "sage[g=0.3]" in text
    # Haystack 3 loads classes only from modules the caller trusts
    loaded = Pipeline.loads(text, allowed_modules=[ALLOW])
    ranker = loaded.get_component("sieve")
    assert isinstance(ranker, RagsieveRanker) and ranker.budget == 300
    out = run(loaded)
    check(out, store, "sage[g=0.3]")
    scores = [d.score for d in out]
    assert scores == sorted(scores, reverse=True)
    assert any(is_answer(d.content) for d in out)
    ranker.selector.close()


def test_a_bad_spec_is_a_one_line_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown method 'nope'") as e:
        RagsieveRanker("nope")
    assert "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="unknown option"):
        RagsieveRetriever(index="unused", method="sage[gg=1]")


def test_index_retriever_in_a_pipeline(sample_index_dir: Path) -> None:
    index = Index.open(sample_index_dir)
    for spec, kw in [("naive", {"k": 3}), ("sage", {"budget": 300})]:
        pipe = Pipeline()
        retriever = RagsieveRetriever(index=str(sample_index_dir), method=spec, **kw)
        pipe.add_component("sieve", retriever)
        pipe = Pipeline.loads(pipe.dumps(), allowed_modules=[ALLOW])  # plain init values
        out = pipe.run({"sieve": {"query": QUESTION}})["sieve"]["documents"]
        assert out and any(is_answer(d.content) for d in out), spec
        for d in out:
            m = d.meta
            assert m["ragsieve_method"] == spec and m["source"].endswith(".md")
            text = index.get_document(m["doc_id"]).text
            assert text[m["ragsieve_start"] : m["ragsieve_end"]] == d.content
            # every sample document starts with a "# Title": each chunk sits under a heading
            at = locate(text, m["ragsieve_start"], m["ragsieve_end"])
            assert m["ragsieve_where"] == at and at
        scores = [d.score for d in out]
        assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(
    ("call", "error", "fragments"),
    [
        (lambda r: r.run(None, [Document(content=TEXT)]), InputError, ("query", "None")),
        (lambda r: r.run("", [Document(content=TEXT)]), InputError, ("query is empty",)),
        (lambda r: r.run(QUESTION, "abc"), InputError, ("documents", "not a str")),
        (lambda r: r.run(QUESTION, None), InputError, ("documents", "not None")),
        (lambda r: r.run(QUESTION, [TEXT]), InputError, ("documents[0]", "Document")),
        (lambda r: RagsieveRanker(5), ConfigError, ("method", "int 5")),
        (lambda r: RagsieveRanker(budget=True), ConfigError, ("budget", "(a bool)")),
        (lambda r: RagsieveRanker("full", index_dir=5), InputError, ("index_dir", "int 5")),
        (lambda r: RagsieveRetriever(index=None), InputError, ("index", "None")),
        (lambda r: RagsieveRetriever(index="unused", k=0), ConfigError, ("k must be", "int 0")),
    ],
)
def test_bad_input_is_one_line_naming_the_argument(
    call: Any, error: type, fragments: tuple[str, ...]
) -> None:
    with pytest.raises(error) as e:
        call(RagsieveRanker())
    msg = str(e.value)
    assert "\n" not in msg and all(f in msg for f in fragments), msg


def test_a_document_without_content_has_nothing_to_select() -> None:
    """A Haystack Document may hold no text (a blob, a table): it is read as an empty
    passage, and the others are still ranked, pointing back to their own Documents."""
    docs = [Document(content=None), Document(content="Bees dance."), Document(content=TEXT)]
    out = RagsieveRanker().run(QUESTION, docs)["documents"]
    assert out and all(d.meta["ragsieve_source_id"] != docs[0].id for d in out)
    assert any("1822" in d.content for d in out)
    assert RagsieveRanker().run(QUESTION, [Document(content=None)]) == {"documents": []}


def test_a_bad_query_on_the_index_retriever_is_one_line(sample_index_dir: Path) -> None:
    r = RagsieveRetriever(index=str(sample_index_dir), method="naive", k=1)
    with pytest.raises(InputError, match="query must be a string, got None"):
        r.run(None)  # type: ignore[arg-type]
    assert r.run(QUESTION)["documents"]  # and the retriever still answers


def test_each_document_says_where_it_sits(
    located: Any, assert_located: Any, sample_index_dir: Path
) -> None:
    """``ragsieve_where``: a piece's heading or page, read from its source Document's own text
    (a Markdown file's headings, a PDF's pages split by form feeds), "" where the text has
    neither; over an index, from the indexed document (the sample corpus's headings)."""
    docs = [Document(content=located.markdown), Document(content=located.pdf)]
    by_id = {d.id: d.content for d in docs}
    ranker = RagsieveRanker()
    try:
        assert_located(
            lambda q: [(d.content, d.meta) for d in ranker.run(q, docs)["documents"]],
            lambda m: by_id[m["ragsieve_source_id"]],
        )
        plain = [Document(content="Champollion announced the decipherment in 1822.")]
        out = ranker.run(QUESTION, plain)["documents"]
        assert out and all(d.meta["ragsieve_where"] == "" for d in out)
    finally:
        ranker.selector.close()
    out = RagsieveRetriever(index=str(sample_index_dir), method="tagger").run(QUESTION)
    answer = next(d for d in out["documents"] if is_answer(d.content))
    assert answer.meta["ragsieve_where"] == "Decipherment"
