"""Layout junk is never evidence, in every method (issue 44, item 3): a PDF with a table of bare
numbers and rules inside its pages, an HTML page with table cells, pipes, a rule and a lone page
number, and a Markdown page with a table, fences alone and a page count, read by ragsieve's
readers into real indexes (with and without the sentence table). No retriever returns a chunk
without words, no Pareto ranking holds a sentence without words, and no method keeps one, while
every unit with words stays a candidate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragsieve.index import Index, IndexConfig
from ragsieve.methods import get_method
from ragsieve.retrieve import get_retriever
from ragsieve.retrieve.chunk_sentences import ChunkSentences
from ragsieve.retrieve.pareto import ParetoRetriever
from ragsieve.text import has_words

pytestmark = pytest.mark.integration

QUESTIONS = [
    "How much memory does the level flag -9 need?",
    "What were the tonnage figures by quarter: 17 or 3.5?",
    "When was the dredger Albatross commissioned?",
]


def _pdf(path: Path) -> None:
    """Two pages with a running head, a page number and a table of bare numbers and rules
    inside the page (which the reader keeps: numbers inside a page are text to it)."""
    from reportlab.pdfgen import canvas

    pages = [
        [
            "The harbour authority met on the first Monday of the month.",
            "Tonnage by quarter:",
            "42",
            "17",
            "3.5",
        ],
        [
            "The pilot station asked for a second launch before the winter.",
            "---",
            "| 7 | 9 |",
            "The dredger Albatross was commissioned in March 2019.",
        ],
    ]
    c = canvas.Canvas(str(path))
    for n, lines in enumerate(pages, start=1):
        c.drawString(72, 810, "Harbour Report 2019")
        y = 770
        for line in lines:
            c.drawString(72, y, line)
            y -= 16
        c.drawString(290, 30, str(n))
        c.showPage()
    c.save()


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True)
    _pdf(folder / "harbour.pdf")
    (folder / "sizes.html").write_text(
        "<html><head><title>Block sizes</title></head><body><article><h1>Block sizes</h1>"
        "<p>The block size affects the compression ratio and the memory needed.</p>"
        "<table><tr><th>flag</th><th>memory</th></tr><tr><td>-1</td><td>1200k</td></tr>"
        "<tr><td>|</td><td>9</td></tr><tr><td>2</td><td>3400k</td></tr></table><hr>"
        "<pre><code>\n</code></pre><p>14</p>"
        "<p>Larger block sizes give rapidly diminishing marginal returns.</p>"
        "</article></body></html>",
        encoding="utf-8",
    )
    (folder / "levels.md").write_text(
        "# Compression levels\n\nThe level flag sets the memory the compressor uses.\n\n"
        "| flag | memory |\n|---|---|\n| -1 | 1200k |\n| -9 | 7600k |\n\n```\n9\n```\n\n"
        "Higher levels compress better but need more memory.\n\n---\n\n3 / 12\n",
        encoding="utf-8",
    )
    return folder


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Index]:
    """The corpus in two-sentence chunks, with the sentence table and without it; both hold
    chunks and sentences without words (else these tests would prove nothing)."""
    root = tmp_path_factory.mktemp("junk")
    corpus = _corpus(root / "corpus")
    out = {}
    for name, table in (("table", True), ("chunks", False)):
        idx = Index.create(root / name, IndexConfig(chunker="sentences", sentences=table))
        idx.add_paths([corpus])
        out[name] = idx
    texts = _chunk_texts(out["table"])
    assert len([t for t in texts.values() if not has_words(t)]) >= 4, texts
    rows = out["table"].sentence_rows(None).column("text").to_pylist()
    assert len([t for t in rows if not has_words(t)]) >= 8, rows
    return out


def _chunk_texts(index: Index) -> dict[str, str]:
    rows = index.chunks_table.to_table(columns=["id", "text"]).to_pylist()
    return {r["id"]: r["text"] for r in rows}


@pytest.mark.parametrize("name", ["dense", "bm25", "hybrid"])
def test_retrievers_return_every_chunk_with_words_and_none_without(
    indexes: dict[str, Index], name: str
) -> None:
    index = indexes["chunks"]
    texts = _chunk_texts(index)
    words = {i for i, t in texts.items() if has_words(t)}
    r = get_retriever(name, index)
    for q in QUESTIONS:
        everything = r.retrieve([q], len(texts))[0]
        assert all(has_words(s.chunk.text) for s in everything)
        if name == "dense":  # the deeper search fills k: every chunk with words is found
            assert {s.chunk.id for s in everything} == words
        top = r.retrieve([q], 3)[0]
        assert top and all(has_words(s.chunk.text) for s in top)
        assert [s.chunk.id for s in top] == [s.chunk.id for s in everything[: len(top)]]


def test_pareto_ranks_every_sentence_with_words_and_none_without(
    indexes: dict[str, Index],
) -> None:
    table = indexes["table"]
    rows = table.sentence_rows(None).to_pylist()
    docs = sorted({r["doc_id"] for r in rows})
    words = {r["id"] for r in rows if has_words(r["text"])}
    q = table.embedder.embed(QUESTIONS[:1])
    ranked = ParetoRetriever(table).rank(q, [docs])[0]
    assert {s.chunk.id for s in ranked} == words
    plain = indexes["chunks"]
    chunks = [c for d in docs for c in plain.chunks_of(d)]
    built = ChunkSentences(plain).build(chunks)
    assert built.num_rows == len(rows)  # junk keeps its row (passages, links, the tagger)
    ranked = ParetoRetriever(plain).rank_rows(q, [built])[0]
    assert {s.chunk.id for s in ranked} == words


#: full's reranker path with every candidate over its cut.
FULL_ALL = {"scorer": "reranker", "min_k": 100, "floor": 0.0}
#: Each method with options that keep nearly everything, so junk would be kept if it could be.
METHODS: list[Any] = [
    ("naive", "chunks", {"k": 50}),
    ("sage", "chunks", {"k": 50, "N": 50, "g": 1.0}),
    ("pareto", "table", {"k": 100}),
    ("pareto", "chunks", {"k": 100, "source_chunks": 50}),
    ("saki", "table", {"k": 50, "judge": "none", "links": 5}),
    ("saki", "chunks", {"k": 50, "judge": "none", "links": 5}),
    ("full", "table", {**FULL_ALL, "chunks": 50, "expand": 5}),
    ("full", "chunks", {**FULL_ALL, "source_chunks": 50, "expand": 5}),
    ("full", "table", {**FULL_ALL, "chunks": 50, "unit": "passage"}),
    ("full", "table", {"scorer": "tagger", "min_k": 100}),
    ("full", "chunks", {"scorer": "tagger", "min_k": 100, "source_chunks": 50}),
]


@pytest.mark.parametrize(("method", "source", "options"), METHODS)
def test_no_method_keeps_a_unit_without_words(
    indexes: dict[str, Index], method: str, source: str, options: dict[str, Any]
) -> None:
    m = get_method(method, indexes[source], **options)
    for r in m.retrieve(QUESTIONS):
        units = [s.chunk.text for s in r.context.chunks]
        assert units, (method, r.question)
        assert all(has_words(u) for u in units), (method, source, units)
        if options.get("scorer") == "tagger":  # it reads every sentence, junk at 0
            assert all(s.score == 0 for s in r.candidates if not has_words(s.chunk.text))
        else:
            assert all(has_words(s.chunk.text) for s in r.candidates), (method, source)
