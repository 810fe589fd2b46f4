"""The ``sentences`` table: one row per sentence, for sentence-level retrieval.

Written by :meth:`ragsieve.index.Index.add` when the index was created with
``IndexConfig(sentences=True)`` (``ragsieve index --sentences``), inside the same write as the
chunks, so it is committed by the same manifest replacement (see :mod:`ragsieve.index.store`).

Per sentence it holds:

* ``vector``: the core vector, the embedding of the sentence (ParetoRAG's ``h_core``; SAKI-RAG's
  ``Omega_i`` with MiniLM in place of SentenceVAE);
* ``context``: ParetoRAG's ``h_context``, the vector of the rest of its *passage*: ``exact``
  embeds the concatenated other sentences (the paper's definition, one long embedding per
  sentence), ``mean`` is the re-normalised mean of the other sentences' core vectors (no extra
  embedding), ``late`` pools the token outputs of the other sentences from one reading of the
  whole passage (one embedding per passage, see :func:`late_context_vectors`). All zeros for a
  one-sentence passage, where the paper's context is NULL;
* ``pareto``: ``alpha * vector + (1 - alpha) * context`` (just ``vector`` without a context),
  ParetoRAG Sec. 3.2, for the index's ``alpha``;
* ``link_idx`` / ``link_w``: its top-T linked sentences of the same document with weights
  (SAKI-RAG Eq. 4, from :mod:`ragsieve.link`);
* ``passage``: the ordinal of its passage within the document: the blank-line paragraph
  (``paragraph``), the index chunk (``chunk``; with ``--chunker sage`` a SAGE segment) or the
  whole document (``document``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ragsieve.checks import check_int, check_real
from ragsieve.embed import Embedder, truncation_of
from ragsieve.errors import ConfigError
from ragsieve.segment.base import sentences_of
from ragsieve.segment.paragraph import group_by_paragraph
from ragsieve.text import count_tokens_batch
from ragsieve.types import Chunk, Document, Sentence

SENTENCES = "sentences"
PASSAGES = ("auto", "paragraph", "chunk", "document")
CONTEXT_FORMS = ("mean", "exact", "late")
#: The shares of a sentence build's time taken by the core vectors, the (late) contexts and the
#: links (bench_sentence_build.py on documentation pages: 28%, 25%, 47%), for progress within
#: one batch of documents.
STAGE_SHARES = (0.28, 0.25, 0.47)
#: Passage pieces whose token outputs the ``late`` context holds at once (at most about 100 MB).
LATE_PIECES = 256
SENTENCE_COLUMNS = [
    "id",
    "doc_id",
    "idx",
    "passage",
    "title",
    "text",
    "start",
    "end",
    "n_tokens",
    "link_idx",
    "link_w",
]


def sentence_id(doc_id: str, idx: int) -> str:
    from ragsieve.segment.base import chunk_id

    return chunk_id(doc_id, idx).replace(":", ":s", 1)


def unit_fields(between: Sequence[tuple[str, pa.DataType]] = ()) -> list[tuple[str, pa.DataType]]:
    """The columns a chunk row and a sentence row share, in their on-disk order: id, document,
    ordinal, ``between`` (the sentence's passage), title, text and character offsets."""
    head = [("id", pa.string()), ("doc_id", pa.string()), ("idx", pa.int32()), *between]
    return [*head, ("title", pa.string()), ("text", pa.string()), *OFFSETS]


#: A text unit's character span in its document's text.
OFFSETS = [("start", pa.int64()), ("end", pa.int64())]


def sentence_schema(dim: int) -> pa.Schema:
    vec = pa.list_(pa.float32(), dim)
    fields = unit_fields([("passage", pa.int32())])
    fields += [("n_tokens", pa.int32()), ("vector", vec), ("context", vec), ("pareto", vec)]
    links = [("link_idx", pa.list_(pa.int32())), ("link_w", pa.list_(pa.float32()))]
    return pa.schema(fields + links)


@dataclass(frozen=True)
class SentenceOptions:
    """How the sentence table is built (the ``sentence_*`` fields of ``IndexConfig``)."""

    passage: str = "paragraph"
    context: str = "late"
    alpha: float = 0.8
    links: int = 8
    link_distance: int = 8
    linker: str = "minilm-attn"

    def __post_init__(self) -> None:
        for what, value, kinds in (
            ("sentence passage", self.passage, PASSAGES),
            ("pareto context", self.context, CONTEXT_FORMS),
        ):
            if value not in kinds:
                raise ConfigError(f"{what} must be one of {', '.join(kinds)}")
        check_real("alpha", self.alpha, lo=0, hi=1)  # the checks IndexConfig makes too
        check_int("links", self.links, lo=0)
        check_int("link distance", self.link_distance)


@dataclass
class SentenceTimings:
    """Seconds spent per stage of building sentence rows (the indexing-cost benchmark)."""

    n_sentences: int = 0
    split: float = 0.0
    core: float = 0.0
    context: float = 0.0
    links: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


def passages_of(
    doc: Document, sents: list[Sentence], passage: str, chunks: Sequence[Chunk] = ()
) -> list[int]:
    """The passage ordinal of each sentence (see the module doc for the three kinds)."""
    if passage == "document" or not sents:
        return [0] * len(sents)
    if passage == "chunk":
        out = [0] * len(sents)
        # A sentence longer than a chunk is cut into several chunks: it belongs to the first.
        for c in sorted(chunks, key=lambda c: -c.index):
            for i in range(c.sent_start, min(c.sent_end, len(sents))):
                out[i] = c.index
        return out
    out = []
    for p, group in enumerate(group_by_paragraph(doc, sents)):
        out.extend([p] * len(group))
    if len(out) != len(sents):  # sentences outside any paragraph span (cannot happen)
        out = (out + [out[-1] if out else 0] * len(sents))[: len(sents)]
    return out


def context_vectors(
    core: np.ndarray,
    passages: Sequence[int],
    texts: Sequence[str],
    form: str,
    embedder: Embedder | None = None,
) -> np.ndarray:
    """ParetoRAG's context vector of every sentence of one document (zeros: no context).

    ``mean``: the mean of the other sentences' core vectors of the passage, re-normalised to
    unit length like an embedding. ``exact``: the embedding of the other sentences' text joined
    by spaces; in a two-sentence passage that text is the other sentence, whose core vector is
    reused.

    The model reads only the first word pieces of a text (MiniLM: 254 after [CLS] and [SEP]), so
    where the embedder says how it truncates (:func:`~ragsieve.embed.truncation_of`) the join
    stops at the sentence that reaches that limit: the same input ids, so the same vector. Every
    sentence past the limit then has the same context text, embedded once. Without this, a
    paragraph of n sentences made n copies of itself: 1,500 sentences in one paragraph took
    6.5 GB and 140 s.
    """
    n, dim = core.shape
    out = np.zeros((n, dim), dtype=np.float32)
    if form == "late":
        if embedder is None:
            raise ConfigError("the late Pareto context needs an embedder")
        return late_context_vectors([list(texts)], [list(passages)], embedder, dim)[0]
    pas = np.asarray(passages)
    jobs: dict[str, list[int]] = {}  # context text -> the sentences it is the context of
    cut = truncation_of(embedder) if embedder is not None and form != "mean" else None
    for p in np.unique(pas):
        members = [int(i) for i in np.nonzero(pas == p)[0]]
        if len(members) < 2:
            continue
        if form == "mean":
            total = core[members].sum(axis=0)
            for i in members:
                v = total - core[i]
                norm = float(np.linalg.norm(v))
                out[i] = v / norm if norm > 0 else 0.0
        elif len(members) == 2:
            # The rest of a two-sentence passage is the other sentence: its core vector is
            # already that exact embedding (a saving, not an approximation).
            out[members[0]], out[members[1]] = core[members[1]], core[members[0]]
        else:
            lengths = cut[0]([texts[j] for j in members]) if cut else None
            for i in members:
                parts: list[str] = []
                used = 0
                for pos, j in enumerate(members):
                    if j == i:
                        continue
                    parts.append(texts[j])
                    if lengths is not None and cut is not None:
                        used += lengths[pos]
                        if used >= cut[1]:
                            break  # the model would cut inside this sentence
                jobs.setdefault(" ".join(parts), []).append(i)
    if jobs:
        if embedder is None:
            raise ConfigError("the exact Pareto context needs an embedder")
        keys = list(jobs)
        vecs = embedder.embed(keys)
        for key, v in zip(keys, vecs, strict=True):
            out[jobs[key]] = v
    return out


def late_context_vectors(
    texts: Sequence[Sequence[str]],
    passages: Sequence[Sequence[int]],
    embedder: Embedder,
    dim: int,
    step: Callable[[float], None] | None = None,
) -> list[np.ndarray]:
    """The ``late`` context vector of every sentence of several documents (zeros: no context).

    Each passage of two or more sentences is embedded once, its sentences joined by spaces (in
    consecutive pieces that fit the model, 254 word pieces for MiniLM), and the context of a
    sentence is the re-normalised mean of the token outputs that belong to the *other*
    sentences: the rest of the passage as the model read it in place, beside the sentence.

    Why: the paper's ``exact`` context embeds the rest of the passage once per sentence, so a
    passage of n sentences is read n - 1 times (4.9x a plain build on HotpotQA); ``mean``
    averages vectors of sentences each read alone. ``late`` reads each passage once, as
    late chunking does (Guenther et al., 2024), and keeps what the others say in context.
    Deviation from ParetoRAG's definition: the rest of the passage is not embedded apart from
    the sentence, so its tokens have also attended to the sentence itself.

    ``step`` hears the fraction of the passages read after each batch of them (progress).
    """
    token_states = getattr(embedder, "token_states", None)
    cut = truncation_of(embedder)
    if token_states is None or cut is None:
        raise ConfigError(
            f"the late Pareto context needs an embedder with token outputs (minilm), "
            f"not {embedder.name}"
        )
    jobs, job_texts, groups = _late_pieces(texts, passages, *cut)
    sums, counts = _late_sums(texts, jobs, job_texts, token_states, dim, step)
    outs = [np.zeros((len(t), dim), dtype=np.float32) for t in texts]
    for d, members in groups:
        total = sums[d][members].sum(axis=0)
        n_total = int(counts[d][members].sum())
        for i in members:
            if n_total - counts[d][i] <= 0:
                continue  # the others were cut off by the model: no context
            v = total - sums[d][i]
            norm = float(np.linalg.norm(v))
            if norm > 0:
                outs[d][i] = v / norm
    return outs


#: One piece of a passage to read: (document, member sentence ids, their character starts in
#: the piece's text).
LatePiece = tuple[int, list[int], np.ndarray]


def _late_pieces(
    texts: Sequence[Sequence[str]],
    passages: Sequence[Sequence[int]],
    lengths_of: Callable[[list[str]], list[int]],
    limit: int,
) -> tuple[list[LatePiece], list[str], list[tuple[int, list[int]]]]:
    """The pieces the ``late`` context reads: every passage of two or more sentences cut into
    consecutive runs of at most ``limit`` word pieces (as ``lengths_of`` counts them); the
    pieces, their texts (the sentences joined by one space) and each passage's
    (document, sentences)."""
    jobs: list[LatePiece] = []
    job_texts: list[str] = []
    groups: list[tuple[int, list[int]]] = []  # (document, the sentences of one passage)

    def read(d: int, piece: list[int]) -> None:
        parts = [texts[d][j] for j in piece]
        starts = np.cumsum([0] + [len(t) + 1 for t in parts[:-1]])  # joined by one space
        jobs.append((d, piece, starts))
        job_texts.append(" ".join(parts))

    for d, (doc_texts, doc_passages) in enumerate(zip(texts, passages, strict=True)):
        pas = np.asarray(doc_passages)
        for p in np.unique(pas):
            members = [int(i) for i in np.nonzero(pas == p)[0]]
            if len(members) < 2:
                continue
            groups.append((d, members))
            lengths = lengths_of([doc_texts[j] for j in members])
            piece: list[int] = []
            used = 0
            for j, n_tok in zip(members, lengths, strict=True):
                if piece and used + n_tok > limit:
                    read(d, piece)
                    piece, used = [], 0
                piece.append(j)
                used += n_tok
            read(d, piece)
    return jobs, job_texts, groups


def _late_sums(
    texts: Sequence[Sequence[str]],
    jobs: list[LatePiece],
    job_texts: list[str],
    token_states: Callable[[list[str]], Any],
    dim: int,
    step: Callable[[float], None] | None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per sentence of every document, the sum of its token outputs and their count, from
    the pieces read by ``token_states``; ``step`` hears the fraction read after each batch."""
    sums = [np.zeros((len(t), dim), dtype=np.float64) for t in texts]
    counts = [np.zeros(len(t), dtype=np.int64) for t in texts]
    # Token outputs are 1.5 kB a word piece: read LATE_PIECES pieces at a time (by length, so
    # that batches stay evenly padded) and keep only the per-sentence sums.
    order = sorted(range(len(jobs)), key=lambda i: len(job_texts[i]))
    for b in range(0, len(order), LATE_PIECES):
        part = order[b : b + LATE_PIECES]
        for i, (spans, hidden) in zip(
            part, token_states([job_texts[i] for i in part]), strict=True
        ):
            d, piece, starts = jobs[i]
            text = spans[:, 1] > spans[:, 0]  # [CLS] and [SEP] belong to no sentence
            owner = np.searchsorted(starts, spans[:, 0], side="right") - 1
            for k, j in enumerate(piece):
                mine = text & (owner == k)
                sums[d][j] += hidden[mine].sum(axis=0)
                counts[d][j] += int(mine.sum())
        if step is not None:
            step(min(1.0, (b + LATE_PIECES) / len(order)))
    return sums, counts


def pareto_vectors(core: np.ndarray, context: np.ndarray, alpha: float) -> np.ndarray:
    """``alpha * core + (1 - alpha) * context``; ``core`` where there is no context."""
    has = np.any(context != 0, axis=1, keepdims=True)
    mixed = alpha * core + (1.0 - alpha) * context
    return np.where(has, mixed, core).astype(np.float32)


def build_sentence_rows(
    docs: Sequence[Document],
    chunks_of: dict[str, list[Chunk]],
    opts: SentenceOptions,
    embedder: Embedder,
    dim: int,
    timings: SentenceTimings | None = None,
    progress: Callable[[float], None] | None = None,
) -> pa.Table:
    """The ``sentences`` rows of ``docs`` (their chunks give the ``chunk`` passages).

    ``progress`` hears the fraction of the work done (0 to 1) as the stages finish: core
    vectors, contexts (the ``late`` form after each batch of passages), links; each stage
    counts for its share of a build's time (:data:`STAGE_SHARES`)."""
    tell = progress or (lambda frac: None)
    core_share, context_share, _ = STAGE_SHARES
    tm = timings or SentenceTimings()
    t0 = time.perf_counter()
    per_doc = [sentences_of(d) for d in docs]
    all_sents = [s for sents in per_doc for s in sents]
    texts = [s.text for s in all_sents]
    counts = count_tokens_batch(texts) if texts else []
    tm.split += time.perf_counter() - t0
    if not all_sents:
        return sentence_schema(dim).empty_table()
    t0 = time.perf_counter()
    core = embedder.embed(texts)
    tm.core += time.perf_counter() - t0
    tell(core_share)

    def late_step(frac: float) -> None:  # the late contexts' share of the progress
        tell(core_share + context_share * frac)

    t0 = time.perf_counter()
    passages, context = _passages_and_contexts(
        docs, per_doc, chunks_of, core, opts, embedder, dim, late_step
    )
    pareto = pareto_vectors(core, context, float(opts.alpha))
    tm.context += time.perf_counter() - t0
    tell(core_share + context_share)

    t0 = time.perf_counter()
    links = _sentence_links(per_doc, len(all_sents), opts)
    tm.links += time.perf_counter() - t0
    tm.n_sentences += len(all_sents)
    tell(1.0)
    return _sentence_table(docs, all_sents, passages, counts, (core, context, pareto), links, dim)


def _passages_and_contexts(
    docs: Sequence[Document],
    per_doc: list[list[Sentence]],
    chunks_of: dict[str, list[Chunk]],
    core: np.ndarray,
    opts: SentenceOptions,
    embedder: Embedder,
    dim: int,
    late_step: Callable[[float], None],
) -> tuple[list[list[int]], np.ndarray]:
    """Each document's passage ordinals and every sentence's context vector (of the form
    ``opts.context``; ``late`` reads one batch of passages for all documents, and
    ``late_step`` hears its progress)."""
    texts = [s.text for sents in per_doc for s in sents]
    passages: list[list[int]] = []
    contexts: list[np.ndarray] = []
    pos = 0
    for d, sents in zip(docs, per_doc, strict=True):
        n = len(sents)
        ps = passages_of(d, sents, opts.passage, chunks_of.get(d.id, ()))
        passages.append(ps)
        if opts.context != "late":
            contexts.append(
                context_vectors(
                    core[pos : pos + n], ps, texts[pos : pos + n], opts.context, embedder
                )
            )
        pos += n
    if opts.context == "late":  # one batch of passages for all documents
        doc_texts = [[s.text for s in sents] for sents in per_doc]
        contexts = late_context_vectors(doc_texts, passages, embedder, dim, late_step)
    context = np.concatenate(contexts) if contexts else np.zeros_like(core)
    return passages, context


def _sentence_links(
    per_doc: list[list[Sentence]], n_sentences: int, opts: SentenceOptions
) -> tuple[list[list[int]], list[list[float]]]:
    """Every sentence's top ``opts.links`` linked sentences of its document and their weights
    (empty lists when the index keeps no links)."""
    from ragsieve.link import get_linker

    link_idx: list[list[int]] = []
    link_w: list[list[float]] = []
    if opts.links > 0:
        linker = get_linker(opts.linker, opts.link_distance)
        for links in linker.link([[s.text for s in sents] for sents in per_doc]):
            for row in links.top(opts.links):
                link_idx.append([j for j, _ in row])
                link_w.append([w for _, w in row])
    else:
        link_idx = [[] for _ in range(n_sentences)]
        link_w = [[] for _ in range(n_sentences)]
    return link_idx, link_w


def _sentence_table(
    docs: Sequence[Document],
    all_sents: list[Sentence],
    passages: list[list[int]],
    counts: list[int],
    vectors: tuple[np.ndarray, np.ndarray, np.ndarray],
    links: tuple[list[list[int]], list[list[float]]],
    dim: int,
) -> pa.Table:
    """The ``sentences`` rows as one Arrow table: ``vectors`` are the core, context and
    Pareto vectors, ``links`` the link ids and weights, both in sentence order."""
    titles = {d.id: d.title for d in docs}

    def vec(a: np.ndarray) -> pa.FixedSizeListArray:
        flat = pa.array(np.asarray(a, dtype=np.float32).reshape(-1), type=pa.float32())
        return pa.FixedSizeListArray.from_arrays(flat, dim)

    core, context, pareto = vectors
    link_idx, link_w = links
    return pa.Table.from_arrays(
        [
            pa.array([sentence_id(s.doc_id, s.index) for s in all_sents]),
            pa.array([s.doc_id for s in all_sents]),
            pa.array([s.index for s in all_sents], type=pa.int32()),
            pa.array([p for ps in passages for p in ps], type=pa.int32()),
            pa.array([titles[s.doc_id] for s in all_sents]),
            pa.array([s.text for s in all_sents]),
            pa.array([s.start for s in all_sents], type=pa.int64()),
            pa.array([s.end for s in all_sents], type=pa.int64()),
            pa.array(counts, type=pa.int32()),
            vec(core),
            vec(context),
            vec(pareto),
            pa.array(link_idx, type=pa.list_(pa.int32())),
            pa.array(link_w, type=pa.list_(pa.float32())),
        ],
        schema=sentence_schema(dim),
    )
