"""How long ``index`` will take over a large file, said before it starts.

A 50 MB one-line file took over 9 minutes to embed, with progress but no word up front of how
long it would run. A file holding at least :data:`LARGE_FILE_CHARS` characters of new or
changed text gets one line first: about how many chunks it makes (the index's own chunker run
on a sample of it, scaled to its size) and at what rate they embed (this embedder, timed just
now on :data:`SAMPLE_CHUNKS` of those chunks), so the whole takes about so long.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragsieve.errors import ConfigError
from ragsieve.index.sync import document_file
from ragsieve.index.tables import sha256_text
from ragsieve.segment import Segmenter, segment_checked
from ragsieve.types import Document

#: Characters of new or changed text in one file from which ``index`` says up front how long
#: it will take (5 MB of text: about 4,000 chunks of 200 tokens, minutes on 2 cores);
#: ``$RAGSIEVE_LARGE_FILE_CHARS`` sets another.
LARGE_FILE_CHARS = 5_000_000
LARGE_FILE_ENV = "RAGSIEVE_LARGE_FILE_CHARS"
#: Chunks of the file's own text embedded to time the embedder.
SAMPLE_CHUNKS = 16
#: Characters of the file on which its tokens per character are counted.
SAMPLE_CHARS = 200_000


@dataclass(frozen=True)
class Estimate:
    """One large file: its characters, the chunks it will make and the embedding rate."""

    file: str
    chars: int
    chunks: int
    chunks_per_second: float

    @property
    def seconds(self) -> float:
        return self.chunks / self.chunks_per_second if self.chunks_per_second > 0 else math.inf

    def line(self) -> str:
        """``PATH holds 50.0 MB of text: about 62,000 chunks to embed at about 21 chunks/s
        (timed on 16 of them), about 49 min``."""
        return (
            f"{self.file} holds {self.chars / 1e6:.1f} MB of text: about {self.chunks:,} chunks "
            f"to embed at about {self.chunks_per_second:,.0f} chunks/s (timed on "
            f"{SAMPLE_CHUNKS} of them), about {_duration(self.seconds)}; Ctrl-C stops it and "
            "leaves the index as it was"
        )


def large_file_chars() -> int:
    """:data:`LARGE_FILE_CHARS`, or ``$RAGSIEVE_LARGE_FILE_CHARS`` (a positive integer)."""
    raw = os.environ.get(LARGE_FILE_ENV, "").strip()
    if not raw:
        return LARGE_FILE_CHARS
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{LARGE_FILE_ENV} must be a positive integer, got {raw[:40]!r}")
    return int(raw)


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "an unknown time"
    minutes = seconds / 60
    if minutes < 1:
        return f"{seconds:.0f} s"
    if minutes < 90:
        return f"{minutes:.0f} min"
    return f"{minutes / 60:.1f} h"


def _rate(embedder: Any, chunks: list[str]) -> float:
    """Chunks per second ``embedder`` embeds, timed on :data:`SAMPLE_CHUNKS` of ``chunks`` (one
    first, untimed, so that loading the model is not counted)."""
    pieces = (chunks * SAMPLE_CHUNKS)[:SAMPLE_CHUNKS] if chunks else ["text"] * SAMPLE_CHUNKS
    embedder.embed(pieces[:1])
    t0 = time.perf_counter()
    embedder.embed(pieces)
    return SAMPLE_CHUNKS / max(time.perf_counter() - t0, 1e-9)


def large_files(
    docs: Sequence[Document],
    known: Mapping[str, str],
    segmenter: Segmenter,
    embedder: Any,
    threshold: int | None = None,
) -> list[Estimate]:
    """An :class:`Estimate` for each file whose new or changed documents (``known``: the
    index's id -> sha256) hold at least ``threshold`` characters; the embedder is timed once,
    and only when there is such a file. ``threshold``: :func:`large_file_chars` if None."""
    threshold = large_file_chars() if threshold is None else threshold
    by_file: dict[str, list[Document]] = {}
    for d in docs:
        key = document_file({"doc_id": d.id, "source": d.source}) or d.source or d.id
        by_file.setdefault(key, []).append(d)
    out: list[Estimate] = []
    rate: float | None = None
    for file, every in by_file.items():
        if sum(len(d.text) for d in every) < threshold:
            continue  # small: not hashed here (the write hashes every document anyway)
        group = [d for d in every if known.get(d.id) != sha256_text(d.text)]
        chars = sum(len(d.text) for d in group)
        if chars < threshold:
            continue
        text = "".join(d.text for d in group)[:SAMPLE_CHARS]
        sample = Document(id=f"{file}#sample", text=text, title="", source=file)
        (pieces,) = segment_checked(segmenter, [sample])
        chunks = math.ceil(chars * max(len(pieces), 1) / max(len(text), 1))
        if rate is None:
            rate = _rate(embedder, [c.text for c in pieces])
        out.append(Estimate(file, chars, chunks, rate))
    return out
