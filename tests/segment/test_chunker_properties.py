"""Property tests: any text through the loaders and every chunker, no crash, exact coverage.

"Spans cover the input exactly" means: chunk spans are in document order, never overlap, each
chunk's text is the exact slice of the document at its offsets, and every non-whitespace
character of the document lies inside some chunk (only the whitespace between sentences may be
left out). The SAGE chunker runs the real packaged embedder and segmenter head, so it gets fewer
examples.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragsieve.errors import InputError
from ragsieve.io import read_file
from ragsieve.segment import get_segmenter
from ragsieve.segment.base import Segmenter
from ragsieve.text import count_tokens
from ragsieve.types import Chunk, Document

_TOKENS = [
    "Hello",
    "world",
    "Dr.",
    "e.g.",
    "3.14",
    " ",
    "  ",
    ".",
    "?",
    "!",
    "\n",
    "\n\n",
    "\t",
    "# Heading\n",
    "- item\n",
    "```\ncode\n```",
    "| a | b |\n",
    "Ça",
    "中文。",
    "😀",
    "\u00a0",
    "x" * 90,
    "word " * 30,
]

any_text = st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(_TOKENS), max_size=120).map("".join),
)


def assert_exact_cover(doc: Document, chunks: list[Chunk]) -> None:
    text = doc.text
    prev_end = 0
    for i, c in enumerate(chunks):
        assert c.doc_id == doc.id
        assert c.index == i
        assert 0 <= c.start < c.end <= len(text)
        assert c.text == text[c.start : c.end]
        assert c.start >= prev_end, "chunks overlap or are out of order"
        assert text[prev_end : c.start].strip() == "", "non-whitespace text left out"
        assert c.sent_start < c.sent_end
        prev_end = c.end
    assert text[prev_end:].strip() == "", "non-whitespace text left out at the end"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text, st.sampled_from([8, 40, 200]))
def test_fixed_chunker_covers_any_text(text: str, tokens: int) -> None:
    doc = Document("d", text)
    chunks = get_segmenter("fixed", chunk_tokens=tokens).segment([doc])[0]
    assert_exact_cover(doc, chunks)
    for c in chunks:
        # Only a single unbreakable "word" may exceed the limit (words are never cut).
        assert c.n_tokens <= tokens or not any(ch.isspace() for ch in c.text.strip())
        assert c.n_tokens == count_tokens(c.text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text, st.sampled_from([16, 512]))
def test_paragraph_chunker_covers_any_text(text: str, tokens: int) -> None:
    doc = Document("d", text)
    chunks = get_segmenter("paragraph", chunk_tokens=tokens).segment([doc])[0]
    assert_exact_cover(doc, chunks)


@pytest.fixture(scope="module")
def sage_chunker() -> Segmenter:
    return get_segmenter("sage")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(any_text, min_size=1, max_size=3))
def test_sage_chunker_covers_any_text(sage_chunker: Segmenter, texts: list[str]) -> None:
    docs = [Document(f"d{i}", t) for i, t in enumerate(texts)]
    out = sage_chunker.segment(docs)
    assert len(out) == len(docs)
    for doc, chunks in zip(docs, out, strict=True):
        assert_exact_cover(doc, chunks)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.binary(max_size=300) | any_text.map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_text_loader_reads_or_refuses_any_bytes(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(raw)
    try:
        docs = read_file(path)
    except InputError as e:
        msg = str(e)
        assert "\n" not in msg.strip() and str(path) in msg
        return
    assert len(docs) == 1
    text = raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    assert docs[0].text == text
    chunks = get_segmenter("fixed").segment(docs)[0]
    assert_exact_cover(docs[0], chunks)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.one_of(
            st.builds(lambda t, i: {"id": i, "text": t}, any_text, st.integers(0, 5)),
            st.text(max_size=40),  # not JSON at all, or JSON of the wrong shape
        ),
        max_size=5,
    )
)
def test_jsonl_loader_reads_or_refuses_any_records(tmp_path: Path, records: list) -> None:
    path = tmp_path / "input.jsonl"
    lines = [json.dumps(r) if isinstance(r, dict) else r.replace("\n", " ") for r in records]
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    try:
        docs = read_file(path)
    except InputError as e:
        assert "\n" not in str(e).strip()
        return
    assert docs and len({d.id for d in docs}) == len(docs)
    for d in docs:
        assert d.text.strip()
        assert_exact_cover(d, get_segmenter("fixed").segment([d])[0])
