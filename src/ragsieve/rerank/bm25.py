"""BM25 as a reranker, and a small sparse BM25 index for mining training negatives.

:class:`BM25Reranker` scores the candidate passages against each other: document frequencies and
the average length come from the candidates themselves (the reranker sees nothing else). Raw BM25
scores are unbounded, so they are squashed to [0, 1) with ``s / (s + k)`` (``k = 5`` by default):
monotone, so the ranking is BM25's own, and absolute (a passage's score does not depend on how
good the best candidate is, unlike max-normalisation). ``s = 0`` (no query term) maps to 0.

Tokens are lowercased ``\\w+`` runs minus a short English stop-word list; Okapi BM25 with
``k1 = 1.2``, ``b = 0.75`` and the non-negative idf ``ln(1 + (N - n + 0.5) / (n + 0.5))``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_TOKEN = re.compile(r"\w+", re.UNICODE)
STOPWORDS = frozenset(
    (  # noqa: SIM905
        "a an and are as at be by for from has have he her his how i in is it its of on or she "
        "that the their them they this to was were what when where which who whom why will with "
        "you your do does did not can"
    ).split()
)


def tokenize(text: str) -> list[str]:
    """Lowercased word tokens without stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class BM25Index:
    """Okapi BM25 over a fixed list of texts, as postings: per term, the texts that hold it and
    their term weights (numpy arrays sorted by term, like a CSC matrix; no scipy)."""

    def __init__(self, texts: list[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        lengths = np.zeros(len(texts), dtype=np.float64)
        for i, text in enumerate(texts):
            toks = tokenize(text)
            lengths[i] = len(toks)
            counts: dict[int, int] = {}
            for t in toks:
                j = vocab.setdefault(t, len(vocab))
                counts[j] = counts.get(j, 0) + 1
            rows.extend([i] * len(counts))
            cols.extend(counts.keys())
            vals.extend(counts.values())
        self.vocab = vocab
        n_docs = len(texts)
        row = np.asarray(rows, dtype=np.int64)
        col = np.asarray(cols, dtype=np.int64)
        tf = np.asarray(vals, dtype=np.float64)
        df = np.bincount(col, minlength=max(1, len(vocab)))
        self.idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        avgdl = float(lengths.mean()) if n_docs and lengths.mean() > 0 else 1.0
        norm = k1 * (1.0 - b + b * lengths / avgdl)
        weights = tf * (k1 + 1.0) / (tf + norm[row]) * self.idf[col]
        order = np.argsort(col, kind="stable")
        #: term j's texts are ``_rows[_start[j]:_start[j + 1]]`` (each once), weights ``_w``
        self._rows, self._w = row[order], weights[order]
        self._start = np.concatenate([[0], np.cumsum(df)])
        self.n_docs = n_docs

    def scores(self, query: str) -> np.ndarray:
        """Raw BM25 score of every text for ``query`` (a repeated query term counts once per
        occurrence)."""
        out = np.zeros(self.n_docs, dtype=np.float64)
        for j in (self.vocab[t] for t in tokenize(query) if t in self.vocab):
            a, z = self._start[j], self._start[j + 1]
            out[self._rows[a:z]] += self._w[a:z]
        return out

    def top(self, query: str, k: int) -> np.ndarray:
        """Indices of the ``k`` best texts, best first (ties by index)."""
        s = self.scores(query)
        k = min(k, len(s))
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        part = np.argpartition(-s, k - 1)[:k]
        return part[np.lexsort((part, -s[part]))]


class BM25Reranker:
    """BM25 over the candidate passages themselves, squashed with ``s / (s + k)``."""

    def __init__(self, k: float = 5.0, k1: float = 1.2, b: float = 0.75) -> None:
        self.name = "bm25"
        self.k, self.k1, self.b = k, k1, b

    def raw_scores(self, query: str, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float64)
        return BM25Index(texts, k1=self.k1, b=self.b).scores(query)

    def anchored(self, query: str, pool: Sequence[str]) -> AnchoredBM25:
        """BM25 with idf and average length fixed by ``pool`` (a concatenation of pool texts
        holds no other term, so its idf is exact)."""
        return AnchoredBM25(query, pool, self.k1, self.b, self.k)

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        s = self.raw_scores(query, texts)
        return (s / (s + self.k)).astype(np.float32)


class AnchoredBM25:
    """Okapi BM25 with idf and average length fixed by the candidate pool.

    CARROT scores concatenations of pool texts joined by blank lines, so the same pieces come
    back at every MCTS step. A word token never spans a blank line, so a text's tokens are its
    blank-line pieces' tokens in order: each distinct piece is tokenised once per question
    (its length and query-term counts cached) and a text's statistics are summed over its
    pieces, exactly."""

    def __init__(
        self, query: str, pool: Sequence[str], k1: float = 1.2, b: float = 0.75, k: float = 5.0
    ) -> None:
        self.k1, self.b, self.k = k1, b, k
        self.terms = tokenize(query)
        docs = [tokenize(t) for t in pool]
        n = len(docs)
        self.avgdl = float(np.mean([len(d) for d in docs])) if n else 1.0
        self.avgdl = self.avgdl if self.avgdl > 0 else 1.0
        self.idf: dict[str, float] = {}
        for term in set(self.terms):
            df = sum(term in set(d) for d in docs)
            self.idf[term] = float(np.log1p((n - df + 0.5) / (df + 0.5)))
        #: piece -> (tokens, counts of the query terms it holds)
        self._pieces: dict[str, tuple[int, dict[str, int]]] = {}

    def score(self, texts: list[str]) -> tuple[np.ndarray, int]:
        raw = self.raw(texts)
        return raw / (raw + self.k), 0

    def _piece(self, piece: str) -> tuple[int, dict[str, int]]:
        stats = self._pieces.get(piece)
        if stats is None:
            toks = tokenize(piece)
            counts: dict[str, int] = {}
            for t in toks:
                if t in self.idf:
                    counts[t] = counts.get(t, 0) + 1
            stats = self._pieces[piece] = (len(toks), counts)
        return stats

    def raw(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros(len(texts), dtype=np.float64)
        if not self.terms:
            return out
        for i, text in enumerate(texts):
            n_toks = 0
            counts: dict[str, int] = {}
            for piece in text.split("\n\n"):
                n, c = self._piece(piece)
                n_toks += n
                for t, v in c.items():
                    counts[t] = counts.get(t, 0) + v
            norm = self.k1 * (1.0 - self.b + self.b * n_toks / self.avgdl)
            # A repeated query term counts once per occurrence, as BM25Index.scores does.
            out[i] = sum(
                self.idf[t] * counts[t] * (self.k1 + 1.0) / (counts[t] + norm)
                for t in self.terms
                if t in counts
            )
        return out
