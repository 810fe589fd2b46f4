"""The Segmenter protocol, sentence extraction, and the registry of chunkers.

All chunkers work on whole sentences (from :func:`ragsieve.text.split_sentences`) so that a chunk
is always a sentence range ``[sent_start, sent_end)`` of its document with exact character
offsets. Sentence-level stages (Pareto vectors, SAKI links) can then map chunks back to sentences.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from ragsieve.errors import ConfigError, InputError, RagsieveError
from ragsieve.text import count_tokens_batch, split_sentences
from ragsieve.types import Chunk, Document, Sentence

_WORD = re.compile(r"\S+")


def sentences_of(doc: Document) -> list[Sentence]:
    """The sentences of ``doc`` with their spans."""
    return [
        Sentence(doc.id, i, a, b, doc.text[a:b])
        for i, (a, b) in enumerate(split_sentences(doc.text))
    ]


def chunk_id(doc_id: str, index: int) -> str:
    """A short, stable chunk id: a hash of the document id plus the chunk's ordinal."""
    h = hashlib.sha1(doc_id.encode("utf-8")).hexdigest()[:12]
    return f"{h}:{index}"


def make_chunk(
    doc: Document,
    index: int,
    sents: list[Sentence],
    n_tokens: int,
    start: int | None = None,
    end: int | None = None,
) -> Chunk:
    """A chunk covering ``sents`` (optionally only ``[start, end)`` inside them)."""
    a = sents[0].start if start is None else start
    b = sents[-1].end if end is None else end
    return Chunk(
        id=chunk_id(doc.id, index),
        doc_id=doc.id,
        index=index,
        text=doc.text[a:b],
        start=a,
        end=b,
        sent_start=sents[0].index,
        sent_end=sents[-1].index + 1,
        n_tokens=n_tokens,
        title=doc.title,
    )


@runtime_checkable
class Segmenter(Protocol):
    """Cuts documents into chunks. Batch-first: one list of chunks per document."""

    name: str

    def segment(self, docs: list[Document]) -> list[list[Chunk]]: ...


def pack_sentences(
    doc: Document, sents: list[Sentence], max_tokens: int, first_index: int = 0
) -> list[Chunk]:
    """Greedy packing of whole sentences into chunks of at most ``max_tokens`` tokens.

    This is Naive RAG as SAGE (Section VII-A) and CARROT define it: "contiguous sentences less
    than a fixed length", a sentence that would overflow moves intact to the next chunk. A single
    sentence longer than ``max_tokens`` (tables, code, run-on text) is cut at whitespace into
    pieces of at most ``max_tokens`` tokens, so no chunk exceeds the limit.
    """
    if not sents:
        return []
    counts = count_tokens_batch([s.text for s in sents])
    chunks: list[Chunk] = []
    cur: list[Sentence] = []
    cur_tokens = 0
    idx = first_index

    def flush() -> None:
        nonlocal cur, cur_tokens, idx
        while cur:
            # Count the joined span: separators between sentences can add a token or two.
            n = count_tokens_batch([doc.text[cur[0].start : cur[-1].end]])[0]
            if n > max_tokens and len(cur) > 1:
                # Rare overshoot of the estimate: emit all but the last sentence, carry it.
                last = cur.pop()
                flush()
                cur = [last]
                continue
            chunks.append(make_chunk(doc, idx, cur, n))
            idx += 1
            cur = []
        cur_tokens = 0

    last_n = 0
    for s, n in zip(sents, counts, strict=True):
        if n > max_tokens:
            flush()
            for a, b, pn in _split_long(doc.text, s.start, s.end, max_tokens):
                chunks.append(make_chunk(doc, idx, [s], pn, a, b))
                idx += 1
            continue
        # +1 allows for the separator token between sentences.
        if cur and cur_tokens + n + 1 > max_tokens:
            # A term line ("[Function] int f (...)", "-k --keep") goes with its description.
            term = cur.pop() if len(cur) > 1 and is_term_line(cur[-1].text) else None
            flush()
            if term is not None and last_n + n + 1 <= max_tokens:
                cur, cur_tokens = [term], last_n
            elif term is not None:
                cur = [term]
                flush()
        cur.append(s)
        cur_tokens += n + (1 if len(cur) > 1 else 0)
        last_n = n
    flush()
    return chunks


#: A definition's term line: a bracketed category first ("[Function] int f (...)", "[Macro]"),
#: or command-line options alone ("-k --keep", "--level=N, -L N").
_OPTION = r"-{1,2}[\w?][\w-]*(?:[ =]\S+)?"
_TERM_LINE = re.compile(rf"^\s*(?:\[[A-Z][\w ]{{1,30}}\]\s+\S.*|{_OPTION}(?:,?\s+{_OPTION})*)\s*$")


def is_term_line(text: str) -> bool:
    """Whether ``text`` is a definition's term line, one line that names what the next text
    describes (:data:`_TERM_LINE`): a chunk never ends with one while its description opens the
    next chunk."""
    return (
        "\n" not in text.strip()
        and not text.rstrip().endswith((".", "!", "?"))
        and bool(_TERM_LINE.match(text))
    )


def _words(
    text: str, start: int, end: int, max_tokens: int
) -> tuple[list[tuple[int, int]], list[int]]:
    """Whitespace-separated words of ``text[start:end]`` and their token counts.

    Counts are cached per distinct word (natural text repeats its words), so a multi-megabyte
    run-on "sentence" costs one pass. A word longer than ``max_tokens`` is cut at token
    boundaries into word pieces, so no piece can exceed a chunk.
    """
    from ragsieve.text.tokens import token_cuts

    words: list[tuple[int, int]] = []
    counts: list[int] = []
    cache: dict[str, int] = {}
    for m in _WORD.finditer(text, start, end):
        a, b = m.span()
        w = m.group()
        n = cache.get(w)
        if n is None:
            n = count_tokens_batch([w])[0]
            if len(cache) < 200_000:
                cache[w] = n
        if n <= max_tokens:
            words.append((a, b))
            counts.append(n)
            continue
        bounds = [a, *(a + c for c in token_cuts(w, max_tokens)), b]
        for x, y in itertools.pairwise(bounds):
            words.append((x, y))
            counts.append(count_tokens_batch([text[x:y]])[0])
    return words, counts


def _split_long(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int, int]]:
    """Cut ``text[start:end]`` at whitespace into pieces of at most ``max_tokens`` tokens.

    Linear in the span's length: a 20 MB line with no sentence end takes seconds, not hours.
    """
    words, counts = _words(text, start, end, max_tokens)
    # Greedy packing on per-word counts (+1 per separator) is only an estimate: tokenisers merge
    # across whitespace differently ("0  0000:0:0" counts 9, its words 1 + 6 + 1 separator).
    # Each piece is therefore recounted as a whole and shrunk word by word until it fits, so the
    # stored n_tokens is exact and budgets downstream (CARROT, fill-to-budget) can trust it.
    groups: list[list[int]] = []
    cur: list[int] = []
    pt = 0
    for w, n in enumerate(counts):
        if cur and pt + n + 1 > max_tokens:
            groups.append(cur)
            cur, pt = [], 0
        pt = n if not cur else pt + n + 1
        cur.append(w)
    if cur:
        groups.append(cur)
    pieces: list[tuple[int, int, int]] = []
    pending = [g for g in reversed(groups)]
    while pending:
        g = pending.pop()
        a, b = words[g[0]][0], words[g[-1]][1]
        n = count_tokens_batch([text[a:b]])[0]
        if n > max_tokens and len(g) > 1:
            cut = max(1, len(g) - max(1, (n - max_tokens)))
            pending.append(g[cut:])
            pending.append(g[:cut])
            continue
        pieces.append((a, b, n))
    return pieces


#: The smallest chunk a segmenter makes: fewer tokens than this hold no whole sentence.
MIN_CHUNK_TOKENS = 8


def checked_chunk_tokens(chunk_tokens: int) -> int:
    """``chunk_tokens`` when it is at least :data:`MIN_CHUNK_TOKENS`, else one clear
    :class:`ConfigError` (every segmenter's size option is checked the same way)."""
    if chunk_tokens < MIN_CHUNK_TOKENS:
        raise ConfigError(
            f"chunk size must be at least {MIN_CHUNK_TOKENS} tokens, got {chunk_tokens}"
        )
    return chunk_tokens


_REGISTRY: dict[str, Callable[..., Segmenter]] = {}


def register(name: str) -> Callable[[Callable[..., Segmenter]], Callable[..., Segmenter]]:
    def deco(cls: Callable[..., Segmenter]) -> Callable[..., Segmenter]:
        _REGISTRY[name] = cls
        return cls

    return deco


def known_segmenters() -> list[str]:
    return sorted(_REGISTRY)


def get_segmenter(name: str, **options: Any) -> Segmenter:
    """Instantiate a registered segmenter by short name (``fixed``, ``paragraph``, ...)."""
    if name not in _REGISTRY:
        raise ConfigError(f"unknown chunker {name!r}: use one of {', '.join(known_segmenters())}")
    return _REGISTRY[name](**options)


def segment_checked(segmenter: Segmenter, docs: list[Document]) -> list[list[Chunk]]:
    """``segmenter.segment(docs)``, where any failure (even a tokenizer's Rust panic, which is
    no ``Exception``) becomes one :class:`InputError` line naming the document that caused it,
    instead of a traceback: the write it was part of stops before committing, so the index
    keeps its previous version. The readers cut what is known to break a tokenizer (whitespace
    runs); this is the guard for what is not known yet."""
    try:
        return segmenter.segment(docs)
    except (KeyboardInterrupt, SystemExit, RagsieveError):
        raise
    except BaseException as batch_error:  # pyo3's PanicException is no Exception
        for d in docs:  # which document: chunk them one at a time
            try:
                segmenter.segment([d])
            except (KeyboardInterrupt, SystemExit, RagsieveError):
                raise
            except BaseException as e:
                why = " ".join(str(e)[:500].split())[:200] or type(e).__name__
                raise InputError(
                    f"{d.id}: cannot chunk this document ({type(e).__name__}: {why}); nothing "
                    "was written: remove or fix the file and index again"
                ) from e
        raise InputError(
            f"cannot chunk {len(docs)} documents together ({type(batch_error).__name__}); "
            "nothing was written"
        ) from batch_error
