"""SAKI-RAG's Dual-Axis Retriever (Sec. 3.2, Algorithm 1), ``--method saki``.

1. Static axis: dense top ``k`` fine-grained chunks (SAKI's setup: two sentences each, i.e. an
   index built with ``--chunker sentences``; any chunker works).
2. Dynamic axis: for each chunk ``c``, its related sentences ``R_c``: the links stored in the
   sentence table (:mod:`ragsieve.link`) of the chunk's sentences, weights summed per target,
   the chunk's own sentences excluded, strongest ``links`` first. Each ``k_c = c (+) r`` is a
   candidate (a chunk with no linked sentence is its own candidate, so a one-sentence document
   can still be found).
3. Relevance judge on every ``k_c`` (Eq. 6): ``cross-encoder`` (the shipped cross-encoder's
   probability >= ``threshold``; fast, the default), ``llm`` (the yes/no prompt of
   :func:`ragsieve.llm.prompts.build_judge_messages` through the project's LLM layer) or
   ``none`` (keep all: the "Naive + SentenceAttnLinker" ablation of Table 5).
4. Rerank the kept candidates (Eq. 7) and keep the top ``k``. If the judge rejected every
   candidate, the static hits are reranked instead and the trace says ``fallback``.

The ranked candidates (``Retrieval.candidates``) are the ``k_c`` texts, as Algorithm 1 returns
them; the context handed to the LLM is the union of their sentences, sentence-sized chunks
grouped per document in source order (no sentence twice), filled up to ``budget`` if given.

Sentences and links come from the index's sentence table when it has one. On an index without
it (the default build) they are built at query time (:mod:`ragsieve.retrieve.chunk_sentences`)
from the static hits and their chunks ``radius`` positions away on either side, so that a link
can still cross a chunk boundary; a link never reaches further (``source=table`` or ``chunks``
forces one; measured in docs/full.md, "Sentences from the handed chunks").

A sentence without words (a bare number, a rule, pipes, a code fence alone:
:func:`ragsieve.text.has_words`) is layout: never a related sentence, never in the context (its
stored links still count for its chunk), and no static hit consists of it alone
(:mod:`ragsieve.retrieve.base`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.methods.base import Method, MethodDef, Retrieval
from ragsieve.methods.trace import scored_trace, selection_trace, timed
from ragsieve.rerank import get_reranker
from ragsieve.retrieve import get_retriever
from ragsieve.retrieve.base import DocFilter
from ragsieve.retrieve.chunk_sentences import (
    ChunkSentences,
    check_source,
    rows_by_doc,
    use_table,
)
from ragsieve.retrieve.pareto import group_in_source_order, row_sentence_chunk
from ragsieve.select.base import Selection, make_context
from ragsieve.text import has_words
from ragsieve.types import Chunk, Scored

if TYPE_CHECKING:
    from ragsieve.index import Index
    from ragsieve.llm import LLM

JUDGES = ("cross-encoder", "llm", "none")


@dataclass
class SakiConfig:
    """Dual-Axis Retriever options (Algorithm 1's ``Top_k``, the judge, the reranker)."""

    k: int = 5
    #: Related sentences concatenated per static chunk (``R_c``'s length).
    links: int = 3
    judge: str = "cross-encoder"
    #: Cross-encoder judge: keep ``k_c`` when its relevance probability is at least this.
    threshold: float = 0.5
    #: Final ranking (Eq. 7); "bi-encoder" ranks by cosine (the Naive+SAL ablation).
    reranker: str = "cross-encoder"
    #: LLM judge backend (``ragsieve.llm.get_llm`` spec).
    llm: str = "local"
    #: At most this many final candidates from one static chunk (None: Algorithm 1 as is).
    per_chunk: int | None = None
    budget: int | None = None
    retriever: str = "dense"
    #: Where sentences and links come from: auto (the sentence table when the index has one,
    #: else built from the static hits), table or chunks.
    source: str = "auto"
    #: Without a table: the static hits' neighbouring chunks this far away join the sentences.
    radius: int = 1

    def __post_init__(self) -> None:
        for name in ("k", "links"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < (1 if name == "k" else 0):
                raise ConfigError(
                    f"{name} must be an integer >= {1 if name == 'k' else 0}, got {v!r}"
                )
        if self.judge not in JUDGES:
            raise ConfigError(f"judge must be one of {', '.join(JUDGES)}, got {self.judge!r}")
        if not isinstance(self.threshold, int | float) or not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be in [0, 1], got {self.threshold!r}")
        if self.per_chunk is not None and (
            not isinstance(self.per_chunk, int) or self.per_chunk < 1
        ):
            raise ConfigError(f"per_chunk must be a positive integer, got {self.per_chunk!r}")
        if self.budget is not None and (not isinstance(self.budget, int) or self.budget < 1):
            raise ConfigError(f"budget must be a positive number of tokens, got {self.budget!r}")
        check_source(self.source)
        if not isinstance(self.radius, int) or isinstance(self.radius, bool) or self.radius < 0:
            raise ConfigError(f"radius must be an integer >= 0, got {self.radius!r}")


def related_sentences(
    chunk: Chunk, sentences: dict[int, dict[str, Any]], t: int
) -> list[tuple[int, float]]:
    """``R_c``: the chunk's sentences' stored links merged (weights summed per target), its own
    sentences and sentences without words excluded, strongest first (ties: nearer first), at
    most ``t``."""
    own = set(range(chunk.sent_start, chunk.sent_end))
    merged: dict[int, float] = {}
    for i in own:
        row = sentences.get(i)
        if row is None:
            continue
        for j, w in zip(row["link_idx"] or [], row["link_w"] or [], strict=True):
            if j not in own and j in sentences and has_words(str(sentences[j]["text"])):
                merged[j] = merged.get(j, 0.0) + float(w)
    mid = (chunk.sent_start + chunk.sent_end - 1) / 2
    order = sorted(merged, key=lambda j: (-merged[j], abs(j - mid), j))
    return [(j, merged[j]) for j in order[:t]]


def expanded_chunk(chunk: Chunk, rel: dict[str, Any]) -> Chunk:
    """``k_c = c (+) r`` (Algorithm 1 line 6) as a chunk: the texts concatenated, offsets and
    sentence range spanning both (the text itself is not a contiguous slice)."""
    r = row_sentence_chunk(rel)
    return Chunk(
        id=f"{chunk.id}+{r.index}",
        doc_id=chunk.doc_id,
        index=chunk.index,
        text=f"{chunk.text.strip()} {r.text.strip()}",
        start=min(chunk.start, r.start),
        end=max(chunk.end, r.end),
        sent_start=min(chunk.sent_start, r.index),
        sent_end=max(chunk.sent_end, r.index + 1),
        n_tokens=chunk.n_tokens + r.n_tokens,
        title=chunk.title,
    )


class DualAxisMethod(Method):
    """SAKI-RAG: static dense top-k -> linked-sentence expansion -> judge -> rerank -> top-k."""

    name = "saki"
    needs_sentences = True

    def __init__(self, index: Index, config: SakiConfig | None = None, llm: LLM | None = None):
        super().__init__(index)
        self.config = config or SakiConfig()
        c = self.config
        #: None: the index's sentence table; else sentences built from the static hits.
        self.built = None if use_table(index, c.source) else ChunkSentences(index)
        self.retriever = get_retriever(c.retriever, index)
        self.reranker = get_reranker(c.reranker, index.config.embedder)
        self.judge_model = (
            get_reranker("cross-encoder", index.config.embedder)
            if c.judge == "cross-encoder"
            else None
        )
        self._llm = llm

    # ------------------------------------------------------------------ judge
    def _llm_judge(self, question: str, texts: list[str]) -> np.ndarray:
        from ragsieve.llm import build_judge_messages, get_llm, parse_judge

        if self._llm is None:
            self._llm = get_llm(self.config.llm)
        verdicts = []
        for text in texts:  # the LLM protocol is one call per prompt; the batch is this loop
            gen = self._llm.generate(
                build_judge_messages(question, text), max_tokens=3, temperature=0.0
            )
            verdicts.append(1.0 if parse_judge(gen.text) else 0.0)
        return np.asarray(verdicts, dtype=np.float32)

    def judge(self, question: str, texts: list[str]) -> np.ndarray:
        """Eq. 6 for each candidate text: a relevance score; kept when >= the threshold
        (LLM verdicts are 0/1; ``none`` keeps all with 1)."""
        c = self.config
        if not texts:
            return np.zeros(0, dtype=np.float32)
        if c.judge == "none":
            return np.ones(len(texts), dtype=np.float32)
        if c.judge == "llm":
            return self._llm_judge(question, texts)
        assert self.judge_model is not None
        return self.judge_model.score(question, texts)

    def _threshold(self) -> float:
        return 0.5 if self.config.judge == "llm" else float(self.config.threshold)

    # ------------------------------------------------------------------ retrieval
    def _retrieve(self, questions: list[str], doc_ids: DocFilter) -> list[Retrieval]:
        c = self.config
        t0 = time.perf_counter()
        with self.stage(f"retrieve {c.k} chunks"):
            static = self.retriever.retrieve(questions, c.k, doc_ids)
        if self.built is None:
            docs = sorted({s.chunk.doc_id for hits in static for s in hits})
            shared = rows_by_doc(self.index.sentence_rows(docs))
            views = [shared] * len(questions)
        else:
            views = [self._built_rows(hits) for hits in static]
        per_q = (time.perf_counter() - t0) / max(1, len(questions))
        return [
            self._one(q, hits, by_doc, {"retrieve": per_q})
            for q, hits, by_doc in zip(questions, static, views, strict=True)
        ]

    def _built_rows(self, static: list[Scored]) -> dict[str, dict[int, dict[str, Any]]]:
        """The sentence rows (with links) of the static hits and their neighbours, built at
        query time for an index without a sentence table."""
        assert self.built is not None
        chunks: dict[str, Chunk] = {}
        for s in static:
            near = self.index.neighbours(s.chunk, self.config.radius) if self.config.radius else []
            for c in [s.chunk, *near]:
                chunks.setdefault(c.id, c)
        with self.stage(f"link the sentences of {len(chunks)} chunks"):
            rows = self.built.build(list(chunks.values()), vectors=False, links=True)
        return rows_by_doc(rows)

    def _expand(
        self, static: list[Scored], by_doc: dict[str, dict[int, dict[str, Any]]]
    ) -> tuple[list[Scored], list[int], dict[str, list[int]]]:
        """Each static chunk joined with each of its related sentences (``k_c = c (+) r``); a
        chunk without links is its own candidate. Returns the candidates, the static hit each
        came from, and each candidate's sentence indices (not one contiguous range)."""
        cands: list[Scored] = []
        origin: list[int] = []
        members: dict[str, list[int]] = {}
        for n, s in enumerate(static):
            sents = by_doc.get(s.chunk.doc_id, {})
            own = list(range(s.chunk.sent_start, s.chunk.sent_end))
            members[s.chunk.id] = own
            rel = related_sentences(s.chunk, sents, self.config.links)
            if not rel:
                cands.append(s)
                origin.append(n)
            for j, w in rel:
                x = expanded_chunk(s.chunk, sents[j])
                members[x.id] = sorted({*own, j})
                cands.append(Scored(x, s.score, {**s.scores, "link": w}))
                origin.append(n)
        return cands, origin, members

    def _rerank(
        self,
        q: str,
        static: list[Scored],
        cands: list[Scored],
        origin: list[int],
        verdict: np.ndarray,
        keep: list[int],
    ) -> list[Scored]:
        """Eq. 7 over the kept candidates (the static hits when the judge kept none), at most
        ``per_chunk`` per static hit."""
        c = self.config
        fallback = not keep
        pool = list(static) if fallback else [cands[i] for i in keep]
        pool_origin = list(range(len(static))) if fallback else [origin[i] for i in keep]
        if (
            not fallback
            and c.judge == "cross-encoder"
            and c.reranker in ("cross-encoder", "crossencoder")
        ):
            scores = verdict[keep]  # the judge already ran the reranker's model
        else:
            scores = self.reranker.score(q, [x.chunk.text for x in pool]) if pool else []
        order = sorted(range(len(pool)), key=lambda i: -float(scores[i]))
        ranked: list[Scored] = []
        taken: dict[int, int] = {}
        for i in order:
            if c.per_chunk is not None and taken.get(pool_origin[i], 0) >= c.per_chunk:
                continue
            taken[pool_origin[i]] = taken.get(pool_origin[i], 0) + 1
            s = pool[i]
            sc = float(scores[i])
            extra = {"judge": float(verdict[keep[i]])} if not fallback else {}
            ranked.append(replace(s, score=sc, scores={**s.scores, "rerank": sc, **extra}))
        return ranked

    def _one(
        self,
        q: str,
        static: list[Scored],
        by_doc: dict[str, dict[int, dict[str, Any]]],
        t: dict[str, float],
    ) -> Retrieval:
        c = self.config
        stop = timed(t, "expand")
        cands, origin, members = self._expand(static, by_doc)
        stop()
        stop = timed(t, "judge")
        with self.stage(f"judge {len(cands)} candidates ({c.judge})"):
            verdict = self.judge(q, [x.chunk.text for x in cands])
        keep = [i for i in range(len(cands)) if verdict[i] >= self._threshold()]
        stop()
        stop = timed(t, "rerank")
        ranked = self._rerank(q, static, cands, origin, verdict, keep)
        stop()
        stop = timed(t, "select")
        sel = self._context(ranked, by_doc, members)
        stop()
        trace = {
            "method": self.name,
            "judge": c.judge,
            "threshold": self._threshold(),
            "reranker": c.reranker,
            "static": scored_trace(static),
            "expanded": len(cands),
            "kept": len(keep),
            "fallback": not keep,
            "candidates": scored_trace(ranked),
            **selection_trace(sel),
        }
        if not keep:
            trace["fallback_reason"] = (
                f"the {c.judge} judge rejected all {len(cands)} candidates: "
                "returning the reranked static hits"
            )
        return Retrieval(q, sel.context, ranked, trace, t)

    def _context(
        self,
        ranked: list[Scored],
        by_doc: dict[str, dict[int, dict[str, Any]]],
        members: dict[str, list[int]],
    ) -> Selection:
        """The sentences with words of the top-k candidates (or of as many as fit the budget),
        each once, grouped per document in source order; a sentence's score is its best
        candidate's."""
        c = self.config
        chosen: dict[tuple[str, int], Scored] = {}
        used = 0
        taken = skipped = 0
        for s in ranked:
            if c.budget is None and taken >= c.k:
                break
            sents = by_doc.get(s.chunk.doc_id, {})
            idxs = [
                i
                for i in members[s.chunk.id]
                if i in sents
                and (s.chunk.doc_id, i) not in chosen
                and has_words(str(sents[i]["text"]))
            ]
            cost = sum(int(sents[i]["n_tokens"]) for i in idxs)
            if c.budget is not None and used + cost > c.budget:
                skipped += 1
                continue
            for i in idxs:
                chosen[(s.chunk.doc_id, i)] = Scored(
                    row_sentence_chunk(sents[i]), s.score, {"saki": s.score}
                )
            used += cost
            taken += 1
        ordered = group_in_source_order(list(chosen.values()))
        return Selection(
            make_context(ordered),
            {
                "selector": "saki-union",
                "k": c.k,
                "budget": c.budget,
                "candidates_used": taken,
                "skipped_over_budget": skipped,
                "order": "document, source",
            },
        )


SAKI = MethodDef(
    "saki",
    SakiConfig,
    DualAxisMethod,
    needs_sentences=True,
    summary="SAKI-RAG: dense hits expanded with attention-linked sentences, judged, reranked",
)
