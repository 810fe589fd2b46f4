"""Cosines of chunk concatenations pooled from each chunk's own token states (CARROT, fast).

MiniLM embeds a text as the mean of its last hidden states over at most 256 positions
([CLS], 254 word pieces, [SEP]). CARROT's benefit embeds every distinct combination window:
about 30 forward passes of 256 pieces a question, 85% of ``carrot``'s time on 2 cores
(docs/carrot.md). Here a combination of two or more chunks is embedded from its parts instead: each
distinct chunk is read once, alone, and the combination's vector is the mean of the first
part's [CLS] state, the parts' word-piece states in order up to the same 254-piece window,
and the [SEP] state of the last part that reaches into it. WordPiece splits at whitespace, so
these are exactly the concatenation's pieces and window; what is lost is attention across
parts (a piece's state is read in its own chunk's context). A single chunk is embedded exactly
(or seeded from the index), so the singles' ranking is unchanged, and so is a combination whose
first chunk fills the window. The cost per question falls from one 256-piece pass per distinct
window to one pass per candidate chunk.

Read alone, each part keeps its own context's focus, and pooled cosines run higher than the
joined text's: +0.028 on average over 5,062 combinations of training questions (Pearson 0.97).
:data:`CALIBRATION` maps them back, fitted by ``carrot_pooled.py`` (retired: 906193b) on the
tagger's dev split (held-out HotpotQA train questions, SQuAD-train dev articles), never on an
evaluation file. Without it, CARROT's MCTS took longer combinations than with exact cosines
(+9-11% tokens on HotpotQA test questions, BENCHMARKS.md "Fast at query time").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np


class ExactCosines(Protocol):
    """What pooling needs of the exact scorer (:class:`~ragsieve.rerank.base.CachedCosines`):
    its embedder, its cached cosines of whole texts and the query's vector."""

    embedder: Any

    def seed(self, texts: Sequence[str], cosines: Sequence[float | None]) -> None: ...

    def cosines(self, texts: list[str]) -> tuple[np.ndarray, int]: ...

    def score(self, texts: list[str]) -> tuple[np.ndarray, int]: ...

    def query_vector(self) -> np.ndarray: ...


#: ``exact ~ a * pooled + b`` for combinations of two or more parts (least squares on the dev
#: split: ``carrot_pooled.py``, commit 906193b; mean absolute error 0.036 -> 0.027).
CALIBRATION = (0.9532, -0.003)


class PooledCosines:
    """Exact cosines (``exact``) for single texts; combinations pooled from their parts' states.

    ``cosines_parts`` takes each combination as its parts (pool texts in order). An embedder
    without ``token_states`` or a known window (``max_text_tokens``) falls back to embedding
    the joined text exactly. As an :class:`~ragsieve.rerank.base.Anchored` scorer (the
    bi-encoder's), scores are the cosines clipped to [0, 1]."""

    def __init__(self, exact: ExactCosines, calibration: tuple[float, float] = CALIBRATION) -> None:
        self.exact, self.calibration = exact, calibration
        self.kind = "pooled"
        self.embedder = exact.embedder
        self.window = int(getattr(self.embedder, "max_text_tokens", 0) or 0)
        self.states: dict[str, np.ndarray] = {}
        self.cache: dict[tuple[str, ...], float] = {}

    @property
    def can_pool(self) -> bool:
        return self.window > 0 and callable(getattr(self.embedder, "token_states", None))

    def seed(self, texts: Sequence[str], cosines: Sequence[float | None]) -> None:
        self.exact.seed(texts, cosines)

    def cosines(self, texts: list[str]) -> tuple[np.ndarray, int]:
        return self.exact.cosines(texts)

    def _states(self, text: str) -> tuple[np.ndarray, int]:
        """The last hidden states of ``text`` read alone (one text per run: the int8 model's
        dynamic quantisation makes batched outputs depend on the batch)."""
        if text in self.states:
            return self.states[text], 0
        ((_, hidden),) = self.embedder.token_states([text])
        self.states[text] = np.asarray(hidden, dtype=np.float64)
        return self.states[text], 1

    def _pooled(self, parts: tuple[str, ...]) -> tuple[np.ndarray, int, int]:
        """The pooled unit vector, the model runs it took and how many parts the window
        reached."""
        ran, pieces, last_sep = 0, [], None
        first_cls = None
        room = self.window
        for part in parts:
            if room <= 0:
                break
            h, n = self._states(part)
            ran += n
            if first_cls is None:
                first_cls = h[0]
            body = h[1:-1][:room]
            if len(body) == 0:
                continue
            pieces.append(body)
            room -= len(body)
            last_sep = h[-1]
        rows = [r for r in (first_cls, *pieces, last_sep) if r is not None]
        vec = np.vstack([np.atleast_2d(r) for r in rows]).mean(axis=0)
        return vec / max(float(np.linalg.norm(vec)), 1e-12), ran, len(pieces)

    def cosines_parts(
        self, parts: Sequence[tuple[str, ...]], separator: str
    ) -> tuple[np.ndarray, int]:
        """Query cosines of ``parts`` joined by ``separator``; how many model runs it took."""
        if not self.can_pool:
            return self.exact.cosines([separator.join(p) for p in parts])
        out = np.zeros(len(parts), dtype=np.float64)
        ran = 0
        singles = [i for i, p in enumerate(parts) if len(p) == 1]
        if singles:
            cos, n = self.exact.cosines([parts[i][0] for i in singles])
            out[singles], ran = cos, ran + n
        qvec = self.exact.query_vector()
        a, b = self.calibration
        for i, p in enumerate(parts):
            if len(p) == 1:
                continue
            if p not in self.cache:
                vec, n, reached = self._pooled(tuple(p))
                if reached > 1:
                    self.cache[p] = a * float(vec @ qvec) + b
                else:  # the first part fills the window: the joined text's model input
                    (cos,), m = self.exact.cosines([p[0]])
                    self.cache[p], n = float(cos), n + m
                ran += n
            out[i] = self.cache[p]
        return out, ran

    def score(self, texts: list[str]) -> tuple[np.ndarray, int]:
        return self.exact.score(texts)

    def score_parts(
        self, parts: Sequence[tuple[str, ...]], separator: str
    ) -> tuple[np.ndarray, int]:
        cos, n = self.cosines_parts(parts, separator)
        return np.clip(cos, 0.0, 1.0), n
