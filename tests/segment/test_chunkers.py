from __future__ import annotations

from pathlib import Path

import pytest

from ragsieve.errors import ConfigError, InputError
from ragsieve.segment import get_segmenter, segment_checked, sentences_of
from ragsieve.text import count_tokens
from ragsieve.types import Document

TEXT = (
    "# Title\n\nThe first paragraph has a sentence. It has another one too.\n\n"
    "The second paragraph talks about bees. Bees make honey from nectar. "
    "They dance to share directions.\n\nA third, short paragraph."
)


def _check_offsets(doc: Document, chunks: list) -> None:
    for c in chunks:
        assert c.text == doc.text[c.start : c.end]
        assert c.doc_id == doc.id
        assert c.n_tokens == count_tokens(c.text)
    # Chunks are in order and cover every sentence exactly once.
    sents = sentences_of(doc)
    covered = [i for c in chunks for i in range(c.sent_start, c.sent_end)]
    assert sorted(set(covered)) == list(range(len(sents)))


@pytest.mark.parametrize("tokens", [12, 20, 200])
def test_fixed_packs_whole_sentences_up_to_the_limit(tokens: int) -> None:
    doc = Document("d", TEXT)
    chunks = get_segmenter("fixed", chunk_tokens=tokens).segment([doc])[0]
    _check_offsets(doc, chunks)
    assert all(c.n_tokens <= tokens for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    if tokens == 200:
        assert len(chunks) == 1


def test_fixed_splits_an_overlong_sentence_at_whitespace() -> None:
    doc = Document("d", "word " * 300 + "end.")
    chunks = get_segmenter("fixed", chunk_tokens=50).segment([doc])[0]
    assert len(chunks) >= 6
    assert all(c.n_tokens <= 50 for c in chunks)
    assert all(c.text == doc.text[c.start : c.end] for c in chunks)
    assert "".join(c.text.replace(" ", "") for c in chunks) == doc.text.replace(" ", "")


def test_paragraph_chunker_keeps_paragraphs_and_attaches_headings() -> None:
    doc = Document("d", TEXT)
    chunks = get_segmenter("paragraph").segment([doc])[0]
    _check_offsets(doc, chunks)
    assert len(chunks) == 3
    assert chunks[0].text.startswith("# Title")
    assert chunks[1].text.startswith("The second paragraph")
    assert chunks[2].text == "A third, short paragraph."


def test_unknown_chunker_and_bad_size() -> None:
    with pytest.raises(ConfigError, match="unknown chunker"):
        get_segmenter("nope")
    with pytest.raises(ConfigError, match="at least"):
        get_segmenter("fixed", chunk_tokens=0)


@pytest.mark.integration
def test_a_document_the_tokenizer_cannot_chunk_is_one_error_and_the_index_keeps_its_version(
    writable_index: Path,
) -> None:
    """A million spaces overflow tiktoken's stack (a Rust panic, no ``Exception``). The readers
    cut such runs; a document given through the API still has them. Chunking it is one
    InputError naming it, and the write it was part of commits nothing."""
    from ragsieve.index import Index

    good = Document("ok", "A fine note about zebras. They have stripes.")
    bad = Document("spaces", "Start." + " " * 1_000_000 + "End.")
    with pytest.raises(InputError, match=r"^spaces: cannot chunk this document") as e:
        segment_checked(get_segmenter("fixed", chunk_tokens=200), [good, bad])
    assert "\n" not in str(e.value)
    idx = Index.open(writable_index)
    before = idx.stats()["documents"]
    with pytest.raises(InputError, match="spaces: cannot chunk"):
        idx.add([good, bad])
    again = Index.open(writable_index)
    assert again.stats()["documents"] == before
    assert "ok" not in {d["doc_id"] for d in again.documents()}


def test_a_term_line_stays_with_its_description() -> None:
    """A definition's term line ("[Function] int memeql_sec (...)", "-k --keep") never ends a
    chunk whose next chunk opens with its description, at any chunk size that holds the term
    line and its description's first sentence together."""
    from ragsieve.segment.base import is_term_line, pack_sentences, sentences_of

    term = "[Function] int memeql_sec (const void *a, const void *b, size_t n)"
    text = (
        "Nettle provides many functions for hashing data. " * 6
        + f"\n\n{term}\nCompares two memory areas in constant time. Returns 1 when equal.\n"
        + "\n-k --keep\nKeep (don't delete) input files during compression.\n"
    )
    doc = Document(id="d", text=text, title="nettle")
    sents = sentences_of(doc)
    assert [s.text for s in sents if is_term_line(s.text)] == [term, "-k --keep"]
    for size in range(40, 130, 5):
        chunks = pack_sentences(doc, sents, size)
        assert "".join(c.text for c in chunks).replace(" ", "").replace("\n", "") == (
            " ".join(s.text for s in sents).replace(" ", "").replace("\n", "")
        )
        for c in chunks[:-1]:
            assert not is_term_line(c.text.rstrip().splitlines()[-1]), (size, c.text)
    for t in ("Compares two memory areas.", "[RFC-2119] says so.", "-1 (or --fast) to -9"):
        assert not is_term_line(t), t
