"""SAGE semantic segmentation (Sections IV-D and IV-E): coarse chunks, then model-guided splits.

1. Coarse: whole sentences packed up to ``l`` tokens (400 in the paper), exactly as the
   ``fixed`` chunker does; ``l`` is therefore also the largest chunk this segmenter emits.
2. Fine: every adjacent sentence pair inside a coarse chunk is scored by the segmentation
   model (:mod:`ragsieve.segment.model`); the chunk is cut wherever the score < ``ss`` (0.55).
3. What users of semantic chunkers ask for and the paper leaves open: a segment shorter than
   ``min_tokens`` (a lone fragment such as "Yes." or a heading) is merged into the neighbour it
   is more strongly tied to (the higher pair score), inside its coarse chunk.

Cost: every sentence of the batch of documents is embedded exactly once (a pair reuses its two
vectors) and all pairs are scored in one batched numpy pass, so segmentation costs one
sentence-embedding pass plus a negligible MLP (``benchmarks/bench_segmenter.py``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.segment.base import (
    checked_chunk_tokens,
    make_chunk,
    pack_sentences,
    register,
    sentences_of,
)
from ragsieve.text import count_tokens_batch
from ragsieve.types import Chunk, Document, Sentence


@dataclass(frozen=True)
class SageSegConfig:
    ss: float = 0.55  # segmentation score threshold (paper: 0.55)
    l: int = 400  # coarse chunk length in tokens (paper: 400); also the maximum chunk size  # noqa: E741
    min_tokens: int = 24  # merge shorter segments into a neighbour (ours; 0 disables)
    model_dir: str | None = None  # a `ragsieve train-segmenter` output; None = shipped


@register("sage")
class SageSegmenter:
    """SAGE's trained semantic segmenter.

    ``chunk_tokens`` is the coarse length ``l`` (the index's generic chunk-size option, so
    ``ragsieve index --chunker sage --chunk-tokens N`` bounds chunks at N tokens as with the
    other chunkers); the index's default for ``sage`` is the paper's 400.
    """

    name = "sage"

    def __init__(
        self,
        chunk_tokens: int | None = None,
        ss: float = SageSegConfig.ss,
        min_tokens: int = SageSegConfig.min_tokens,
        model_dir: str | None = None,
    ) -> None:
        size = checked_chunk_tokens(chunk_tokens or SageSegConfig.l)
        if not 0.0 <= ss <= 1.0:
            raise ConfigError(f"ss must be in [0, 1], got {ss}")
        if min_tokens < 0 or min_tokens >= size:
            raise ConfigError(f"min_tokens must be in [0, {size}), got {min_tokens}")
        self.config = SageSegConfig(ss=ss, l=size, min_tokens=min_tokens, model_dir=model_dir)
        from ragsieve.segment.model import load_head

        self.head = load_head(model_dir)
        self._embedder = None

    @property
    def embedder(self):
        if self._embedder is None:
            from ragsieve.embed import get_embedder

            self._embedder = get_embedder(self.head.embedder)
        return self._embedder

    def pair_scores(self, docs_sents: list[list[Sentence]]) -> list[np.ndarray]:
        """Score of each adjacent pair (i, i+1) of every document, all in one batch."""
        texts = [s.text for sents in docs_sents for s in sents]
        vecs = self.embedder.embed(texts) if texts else np.zeros((0, 384), np.float32)
        left, right, offsets = [], [], [0]
        base = 0
        for sents in docs_sents:
            n = len(sents)
            left.extend(range(base, base + n - 1))
            right.extend(range(base + 1, base + n))
            base += n
            offsets.append(len(left))
        scores = self.head.score(vecs[left], vecs[right]) if left else np.zeros(0, np.float32)
        return [scores[offsets[i] : offsets[i + 1]] for i in range(len(docs_sents))]

    def segment(self, docs: list[Document]) -> list[list[Chunk]]:
        all_sents = [sentences_of(d) for d in docs]
        all_scores = self.pair_scores(all_sents)
        return [
            self._segment_doc(d, sents, scores)
            for d, sents, scores in zip(docs, all_sents, all_scores, strict=True)
        ]

    def _segment_doc(self, doc: Document, sents: list[Sentence], scores: np.ndarray) -> list[Chunk]:
        cfg = self.config
        coarse = pack_sentences(doc, sents, cfg.l)
        counts = count_tokens_batch([s.text for s in sents]) if sents else []
        # Each coarse chunk becomes a list of segments: [first, last] sentence index ranges, or
        # the coarse chunk itself when it is a piece of one over-long sentence.
        pieces: list[tuple[int, int] | Chunk] = []
        for c in coarse:
            whole = c.start == sents[c.sent_start].start and c.end == sents[c.sent_end - 1].end
            if not whole or c.sent_end - c.sent_start < 2:
                pieces.append(c if not whole else (c.sent_start, c.sent_end))
                continue
            cuts = [i + 1 for i in range(c.sent_start, c.sent_end - 1) if scores[i] < cfg.ss]
            bounds = [c.sent_start, *cuts, c.sent_end]
            segs = [(a, b) for a, b in itertools.pairwise(bounds)]
            pieces.extend(self._merge_small(segs, counts, scores))
        out: list[Chunk] = []
        spans = [p for p in pieces if isinstance(p, tuple)]
        n_tok = iter(
            count_tokens_batch([doc.text[sents[a].start : sents[b - 1].end] for a, b in spans])
        )
        for p in pieces:
            if isinstance(p, tuple):
                a, b = p
                out.append(make_chunk(doc, len(out), sents[a:b], next(n_tok)))
            else:
                out.append(
                    make_chunk(doc, len(out), [sents[p.sent_start]], p.n_tokens, p.start, p.end)
                )
        return out

    def _merge_small(
        self, segs: list[tuple[int, int]], counts: list[int], scores: np.ndarray
    ) -> list[tuple[int, int]]:
        """Merge segments under ``min_tokens`` into the neighbour with the stronger tie."""
        if self.config.min_tokens <= 0:
            return segs
        segs = list(segs)

        def size(s: tuple[int, int]) -> int:
            return sum(counts[s[0] : s[1]]) + (s[1] - s[0] - 1)

        while len(segs) > 1:
            small = [i for i, s in enumerate(segs) if size(s) < self.config.min_tokens]
            if not small:
                break
            i = min(small, key=lambda j: size(segs[j]))
            # Tie strength to each side = the model's score on the pair across that cut.
            left = float(scores[segs[i][0] - 1]) if i > 0 else -1.0
            right = float(scores[segs[i][1] - 1]) if i < len(segs) - 1 else -1.0
            j = i - 1 if left >= right else i + 1
            a, b = min(i, j), max(i, j)
            segs[a : b + 1] = [(segs[a][0], segs[b][1])]
        return segs
