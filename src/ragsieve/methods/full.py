"""The ``full`` method: every ragsieve stage composed at sentence level (``--method full``).

No single paper combines SAGE, CARROT, SAKI-RAG and ParetoRAG; this module does, one stage per
step, each switchable so that the ablation (``bench_full.py``, since retired) can remove it:

1. **Candidates** (ParetoRAG + hybrid retrieval). The question's top ``N`` sentences by
   ParetoRAG's sentence-context vectors (``alpha`` from the index, 0.8 by default; ``pareto=false``
   scores the plain sentence vectors, alpha = 1), joined by every sentence of the top ``chunks``
   chunks of the chunk-level retriever (``hybrid``: dense + BM25 by RRF), which brings in
   exact-term matches that a sentence vector misses. The index's chunker is the SAGE segmenter
   when built with ``--chunker sage``; Pareto's passage is then the SAGE segment.
2. **Reranker** (the shipped ``ensemble`` by default). A sentence is scored as
   ``"title: sentence"`` when its document has a title (``title=false`` drops it): a sentence
   alone often names its subject only by a pronoun ("He was born in ..."), which the title
   restores at the cost of a few tokens the LLM never sees.
3. **SAKI expansion**. The ``expand`` best-scored sentences bring in their ``links``
   attention-linked sentences (SentenceAttnLinker links stored in the index), which are scored
   by the same reranker; the reranker is the relevance judge (SAKI's cross-encoder judge with
   the gradient cut as its threshold), so a linked sentence enters the context only on merit.
4. **Gradient cut** (SAGE). Sorted scores, at least ``min_k`` sentences, extended while a score
   has not dropped by more than ``g`` from its predecessor; ``budget`` is a ceiling, never a
   quota. ``selection=top-k`` keeps exactly ``min_k`` (the "no cut" ablation).
5. **Order**. ``source`` (default) groups the chosen sentences per document, best document
   first, in source order (sentences read as text). ``mcts`` runs CARROT's MCTS over the top
   ``mcts_n`` chosen sentences under the budget and hands the LLM its best ordered path.
6. **Feedback** (SAGE), off by default (``feedback=true`` turns it on). With an LLM, the
   answer is judged and the selection re-run with more or fewer sentences, with the same stage
   as ``sage`` (:mod:`ragsieve.methods.feedback`); with the tagger the re-run moves the
   tagger's keep rule (:class:`~ragsieve.methods.tagger.TaggerCut`). Off because each round
   re-sends the whole context to the judge: measured with Qwen2.5 0.5B it multiplied the
   prompt tokens without raising F1 (BENCHMARKS.md, "Answers with every LLM call counted").

Defaults (``min_k``, ``chunks``, ``expand``, ``order``) were chosen by the ablation in
BENCHMARKS.md, not by any paper: ``min_k`` counts sentences here, not SAGE's chunks.

**Without a sentence table** (an index built without ``--sentences``, the default) the sentences
of step 1 are built at query time from the top ``source_chunks`` chunks of ``retriever``
(:mod:`ragsieve.retrieve.chunk_sentences`, the same vectors and links as the table): the
Pareto ranking, the passages and the links are then limited to those chunks. ``source=table``
or ``source=chunks`` forces one; docs/full.md measures the difference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.methods.base import Method, MethodDef, Retrieval
from ragsieve.methods.feedback import SelfFeedback
from ragsieve.methods.sage import SageOptions, sage_cut
from ragsieve.methods.tagger import TaggerCut, get_tagger, tag_and_select
from ragsieve.methods.trace import scored_trace, selection_trace, timed
from ragsieve.rerank import get_reranker
from ragsieve.rerank.base import DEFAULT_RERANKER
from ragsieve.retrieve import get_retriever
from ragsieve.retrieve.base import DocFilter
from ragsieve.retrieve.chunk_sentences import (
    ChunkSentences,
    check_source,
    rows_by_doc,
    use_table,
)
from ragsieve.retrieve.pareto import ParetoRetriever, group_in_source_order, row_sentence_chunk
from ragsieve.select.base import Selection, Selector, make_context
from ragsieve.select.benefit import BenefitScorer
from ragsieve.select.mcts import DEFAULT_BUDGET, DEFAULT_CANDIDATES, MCTSConfig, MCTSSelector
from ragsieve.tag.model import shipped_model_present
from ragsieve.tag.prune import operating_point
from ragsieve.tag.settings import TaggerSettings
from ragsieve.text import has_words
from ragsieve.types import Scored

if TYPE_CHECKING:
    from ragsieve.index import Index

ORDERS = ("source", "mcts")
UNITS = ("sentence", "passage")
SCORERS = ("tagger", "reranker")


def default_scorer() -> str:
    """``tagger`` when the shipped tagger model is installed, else ``reranker``."""
    return "tagger" if shipped_model_present() else "reranker"


@dataclass
class FullConfig(SageOptions):
    """Options of ``full``; SAGE's fields keep their meaning (``N``, ``g``, ``fs``, feedback).

    ``N`` counts Pareto sentence candidates and ``min_k`` sentences (SAGE's 7 are chunks).
    """

    N: int = 30
    min_k: int = 1
    #: SAGE's self-feedback; off here (see the module docstring), on in ``sage``.
    feedback: bool = False
    retriever: str = "hybrid"
    reranker: str = DEFAULT_RERANKER
    #: False: plain sentence vectors (alpha = 1), the "without Pareto" ablation.
    pareto: bool = True
    #: Chunk hits of ``retriever`` whose sentences join the candidates (0: none).
    chunks: int = 3
    #: Best-scored sentences expanded with their linked sentences (0: no SAKI expansion).
    expand: int = 0
    #: Linked sentences taken per expanded sentence.
    links: int = 3
    #: Prefix a sentence with its document title for the reranker.
    title: bool = True
    order: str = "source"
    #: Sentences the MCTS orders (``order=mcts``).
    mcts_n: int = DEFAULT_CANDIDATES
    #: Relative floor: candidates scoring below ``floor`` x the best score are never selected
    #: (0: off). Calibrated probabilities decay smoothly, so SAGE's relative-drop rule alone
    #: can run long on a flat tail.
    floor: float = 0.3
    #: ``sentence``: the cut sentences are the context; ``passage``: each brings its whole
    #: passage (small-to-big), for corpora whose evidence is a paragraph.
    unit: str = "sentence"
    #: 2: a second reranker pass scores the other documents' sentences against the question
    #: joined with the best sentence (a bridge hop for multi-hop questions); a sentence keeps
    #: the better of its two scores.
    hops: int = 2
    #: With ``unit=passage``: True runs the floor and the gradient cut over passages (each
    #: represented by its best sentence), as SAGE cuts over chunks; False cuts over sentences
    #: and then widens every chosen one, so five good sentences in five passages bring five.
    passage_cut: bool = True
    #: ``tagger``: the evidence tagger reads each candidate passage whole and its threshold
    #: replaces the reranker and the cut (the default when the shipped tagger is installed);
    #: ``reranker`` (or a reranker's name, e.g. ``ensemble``): the sentence reranker + SAGE cut.
    scorer: str = field(default_factory=default_scorer)
    #: The tagger's keep threshold, passage threshold, stacker and open point
    #: (:class:`~ragsieve.tag.settings.TaggerSettings`, whose defaults these are; the whole
    #: settings: :meth:`settings_for_tagger`).
    threshold: float | None = TaggerSettings.threshold
    passage_threshold: float | None = TaggerSettings.passage_threshold
    stack: bool = TaggerSettings.stack
    open_point: bool = TaggerSettings.open_point
    #: A tagger folder (None: the shipped model).
    tagger_model: str | None = None
    #: Where the sentences come from: auto (the sentence table when the index has one, else
    #: built from the retrieved chunks), table or chunks.
    source: str = "auto"
    #: Without a table: the top chunks of ``retriever`` whose sentences are the candidates
    #: (naive's default top-k; each costs two embeddings of its text per question).
    source_chunks: int = 10

    def __post_init__(self) -> None:
        super().__post_init__()
        check_source(self.source, self.source_chunks)
        if not isinstance(self.scorer, str) or not self.scorer:
            raise ConfigError(
                f"scorer must be tagger, reranker or a reranker name, got {self.scorer!r}"
            )
        if self.scorer not in SCORERS:
            self.reranker, self.scorer = self.scorer, "reranker"
        self.tagger_settings = self.settings_for_tagger()
        if self.scorer == "tagger" and self.order == "mcts":
            raise ConfigError("order=mcts orders reranker scores: use it with scorer=reranker")
        for name in ("chunks", "expand", "links"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ConfigError(f"{name} must be an integer >= 0, got {v!r}")
        if not isinstance(self.mcts_n, int) or self.mcts_n < 1:
            raise ConfigError(f"mcts_n must be a positive integer, got {self.mcts_n!r}")
        for name in ("pareto", "title", "passage_cut"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, got {getattr(self, name)!r}")
        if not isinstance(self.floor, int | float) or not 0.0 <= self.floor < 1.0:
            raise ConfigError(f"floor must be in [0, 1), got {self.floor!r}")
        if self.unit not in UNITS:
            raise ConfigError(f"unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if self.order not in ORDERS:
            raise ConfigError(f"order must be one of {', '.join(ORDERS)}, got {self.order!r}")

    def settings_for_tagger(self) -> TaggerSettings:
        """The tagger's settings from this config (checked as they are made, ``hops`` too,
        which the reranker's hop shares). ``full`` carries no links and no leads, stated here
        by name: link and lead carrying were measured and adopted for the ``tagger`` method
        only (docs/tagger.md, "Link carrying" and "Lead carrying on today's code")."""
        return TaggerSettings(
            threshold=self.threshold,
            passage_threshold=self.passage_threshold,
            stack=self.stack,
            open_point=self.open_point,
            hops=self.hops,
            min_keep=self.min_k,
            lead=False,
            link=False,
        )


class _Grouped:
    """A selector whose chosen sentences are handed on grouped per document, source order;
    candidates under ``floor`` x the best score are dropped first, and ``widen`` (the
    ``unit=passage`` step) may replace each chosen sentence by its passage."""

    def __init__(
        self,
        inner: Selector,
        floor: float = 0.0,
        widen: Callable[[str, list[Scored]], tuple[list[Scored], dict[str, Any]]] | None = None,
        collapse: Callable[[str, list[Scored]], list[Scored]] | None = None,
    ) -> None:
        self.inner = inner
        self.floor = floor
        self.widen = widen
        self.collapse = collapse
        self.name = getattr(inner, "name", "selector")

    def select(self, query: str, ranked: list[Scored]) -> Selection:
        dropped = 0
        n_ranked = len(ranked)
        if self.collapse is not None:
            ranked = self.collapse(query, ranked)
        if self.floor > 0 and ranked:
            top = max(s.score for s in ranked)
            kept = [s for s in ranked if s.score >= self.floor * top]
            dropped = len(ranked) - len(kept)
            ranked = kept
        sel = self.inner.select(query, ranked)
        chosen = list(sel.context.chunks)
        trace = {**sel.trace, "order": "document, source"}
        if self.collapse is not None:
            trace["passage_cut"] = {"sentences": n_ranked, "passages": len(ranked) + dropped}
        if self.widen is not None:
            chosen, trace["passages"] = self.widen(query, chosen)
        grouped = group_in_source_order(chosen)
        if self.floor > 0:
            trace["floor"] = {"floor": self.floor, "dropped": dropped}
        return Selection(make_context(grouped), trace)


def _key(s: Scored) -> tuple[str, int]:
    return (s.chunk.doc_id, s.chunk.index)


class FullMethod(Method):
    """Pareto + hybrid candidates -> reranker -> SAKI expansion -> gradient cut -> order
    (-> SAGE feedback with an LLM). See the module docstring."""

    name = "full"

    def __init__(self, index: Index, config: FullConfig | None = None) -> None:
        super().__init__(index)
        self.config: FullConfig = config or FullConfig()
        c = self.config
        alpha = None if c.pareto else 1.0
        self.table = use_table(index, c.source)
        self.pareto = ParetoRetriever(index, alpha, depth=max(200, 4 * c.N))
        self.retriever = get_retriever(c.retriever, index) if c.chunks or not self.table else None
        self.built = None if self.table else ChunkSentences(index)
        #: Without a table: each question's rows built from its chunks (the passage steps of
        #: the cut read them again, also when feedback re-runs it after the batch).
        self._views: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
        self.tagger = get_tagger(c.tagger_model) if c.scorer == "tagger" else None
        self.reranker = (
            get_reranker(c.reranker, index.config.embedder) if self.tagger is None else None
        )
        self.feedback = (
            SelfFeedback(c, self.selector_for) if c.feedback and c.max_rounds >= 1 else None
        )

    def gives_spans(self) -> bool:
        return self.tagger is not None and self.tagger.has_span

    def selector_for(self, min_k: int, max_k: int | None = None) -> Selector:
        """SAGE's cut for ``min_k`` over sentences (or passages), grouped per document; with
        the tagger, its keep rule for ``min_k`` / ``max_k`` (what feedback moves)."""
        c = self.config
        if self.tagger is not None:
            th, pth, _ = operating_point(self.tagger, c.tagger_settings)
            return TaggerCut(th, min_k, max_k, c.budget, c.unit, pth)
        passage = self.config.unit == "passage"
        widen = self._passages if passage else None
        collapse = self._best_per_passage if passage and self.config.passage_cut else None
        return _Grouped(sage_cut(self.config, min_k, max_k), self.config.floor, widen, collapse)

    def _rows(
        self, q: str, docs: list[str], columns: list[str] | None = None
    ) -> list[dict[str, Any]]:
        """The sentence rows of ``docs``: the table's (only ``columns`` converted, when named:
        the vectors and links stay in Arrow), or those built for question ``q``."""
        if self.built is None:
            table = self.index.sentence_rows(docs)
            return (table.select(columns) if columns else table).to_pylist()
        view = self._views.get(q, {})
        return [r for d in docs for _, r in sorted(view.get(d, {}).items())]

    def _passage_of(self, q: str, sents: list[Scored]) -> dict[tuple[str, int], tuple[str, int]]:
        """(doc_id, sentence index) -> (doc_id, passage number), from the sentence rows."""
        docs = sorted({s.chunk.doc_id for s in sents})
        return {
            (r["doc_id"], int(r["idx"])): (r["doc_id"], int(r["passage"]))
            for r in self._rows(q, docs, ["doc_id", "idx", "passage"])
        }

    def _best_per_passage(self, q: str, ranked: list[Scored]) -> list[Scored]:
        """Each passage's best sentence, best first: the units the cut then runs over, so that
        ``min_k`` and the gradient count passages. Why: after widening, a passage is what the
        context pays for, and sentences of one passage are not separate evidence."""
        if not ranked:
            return []
        of = self._passage_of(q, ranked)
        seen: set[tuple[str, int]] = set()
        out = []
        for s in sorted(ranked, key=lambda x: -x.score):
            key = of.get(_key(s), (f"{s.chunk.doc_id}\0sentence", s.chunk.index))
            if key not in seen:
                seen.add(key)
                out.append(s)
        return out

    def _passages(self, q: str, chosen: list[Scored]) -> tuple[list[Scored], dict[str, Any]]:
        """Small-to-big: each chosen sentence (best first) brings its whole passage (the
        paragraph or SAGE segment the Pareto context came from) while the budget allows;
        otherwise it stays alone. Every sentence of a passage carries the best score that
        brought it."""
        budget = self.config.budget
        docs = sorted({s.chunk.doc_id for s in chosen})
        rows: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for r in self._rows(q, docs):
            rows.setdefault((r["doc_id"], int(r["passage"])), []).append(r)
        of = {(r["doc_id"], int(r["idx"])): key for key, rs in rows.items() for r in rs}
        out: dict[tuple[str, int], Scored] = {}
        used = widened = 0
        for s in sorted(chosen, key=lambda x: -x.score):
            if _key(s) in out:
                continue
            members = rows.get(of.get(_key(s), ("", -1)), [])
            new = [
                r
                for r in members
                if (r["doc_id"], int(r["idx"])) not in out and has_words(str(r["text"]))
            ]
            cost = sum(int(r["n_tokens"]) for r in new)
            if new and (budget is None or used + cost <= budget):
                for r in new:
                    out[(r["doc_id"], int(r["idx"]))] = Scored(
                        row_sentence_chunk(r), s.score, {"passage_of": float(s.chunk.index)}
                    )
                used += cost
                widened += 1
            elif budget is None or used + s.chunk.n_tokens <= budget:
                out[_key(s)] = s
                used += s.chunk.n_tokens
        return list(out.values()), {"widened": widened, "sentences": len(out)}

    def _text(self, s: Scored) -> str:
        title = s.chunk.title.strip()
        if self.config.title and title:
            return f"{title}: {s.chunk.text.strip()}"
        return s.chunk.text

    def _score(self, q: str, cands: list[Scored]) -> list[Scored]:
        """Reranker scores; ``scores`` keeps where a sentence came from (``pareto``: its Pareto
        score, ``chunk``: its chunk hit's score, ``link``: the link weight)."""
        if not cands:
            return []
        assert self.reranker is not None
        scores = self.reranker.score(q, [self._text(s) for s in cands])
        return [
            replace(s, score=float(v), scores={**s.scores, "rerank": float(v)})
            for s, v in zip(cands, scores, strict=True)
        ]

    def _retrieve(self, questions: list[str], doc_ids: DocFilter) -> list[Retrieval]:
        c = self.config
        if self.built is not None:
            return self._retrieve_built(questions, doc_ids)
        t0 = time.perf_counter()
        qv = self.index.embedder.embed(questions)
        with self.stage("rank the sentence table"):
            ranked = self.pareto.rank(qv, doc_ids)
        t_pareto = (time.perf_counter() - t0) / max(1, len(questions))
        t0 = time.perf_counter()
        hits = (
            self.retriever.retrieve(questions, c.chunks, doc_ids)
            if self.retriever is not None
            else [[] for _ in questions]
        )
        docs = {s.chunk.doc_id for h in hits for s in h}
        docs |= {s.chunk.doc_id for r in ranked for s in r[: c.N]}
        by_doc = rows_by_doc(self.index.sentence_rows(sorted(docs)))
        t_chunks = (time.perf_counter() - t0) / max(1, len(questions))
        return [
            self._one(q, r[: c.N], h, by_doc, {"retrieve": t_pareto, "chunks": t_chunks})
            for q, r, h in zip(questions, ranked, hits, strict=True)
        ]

    def _retrieve_built(self, questions: list[str], doc_ids: DocFilter) -> list[Retrieval]:
        """Without a sentence table: the sentences of each question's top ``source_chunks``
        chunks, built at query time, ranked by their Pareto vectors (see the module doc)."""
        c = self.config
        assert self.retriever is not None and self.built is not None
        t0 = time.perf_counter()
        qv = self.index.embedder.embed(questions)
        n = max(c.source_chunks, c.chunks)
        with self.stage(f"retrieve {n} chunks ({c.retriever})"):
            hits = self.retriever.retrieve(questions, n, doc_ids)
        t_chunks = (time.perf_counter() - t0) / max(1, len(questions))
        out: list[Retrieval] = []
        for q, qvec, h in zip(questions, qv, hits, strict=True):
            t0 = time.perf_counter()
            rows = self.built.build(
                [s.chunk for s in h], links=c.expand > 0, progress=self.progress, label="full: "
            )
            ranked = self.pareto.rank_rows(qvec[None, :], [rows])[0]
            by_doc = rows_by_doc(rows)
            if len(self._views) >= 4096:
                self._views.pop(next(iter(self._views)))
            self._views[q] = by_doc
            t = {"retrieve": time.perf_counter() - t0, "chunks": t_chunks}
            out.append(self._one(q, ranked[: c.N], h[: c.chunks], by_doc, t))
        return out

    def _pool(
        self,
        pareto_hits: list[Scored],
        chunk_hits: list[Scored],
        by_doc: dict[str, dict[int, dict[str, Any]]],
    ) -> tuple[list[Scored], int]:
        """The Pareto sentences joined by every sentence of the chunk hits; returns the pool
        and how many sentences the chunks added."""
        pool: dict[tuple[str, int], Scored] = {_key(s): s for s in pareto_hits}
        from_chunks = 0
        for h in chunk_hits:
            sents = by_doc.get(h.chunk.doc_id, {})
            for i in range(h.chunk.sent_start, h.chunk.sent_end):
                row = sents.get(i)
                if row is not None and (h.chunk.doc_id, i) not in pool and has_words(row["text"]):
                    pool[(h.chunk.doc_id, i)] = Scored(
                        row_sentence_chunk(sents[i]), h.score, {"chunk": h.score}
                    )
                    from_chunks += 1
        return list(pool.values()), from_chunks

    def _strongest_links(self, row: dict[str, Any]) -> list[tuple[int, float]]:
        """A sentence row's ``links`` strongest (target index, weight) links."""
        pairs = list(zip(row.get("link_idx") or [], row.get("link_w") or [], strict=True))
        pairs.sort(key=lambda p: -float(p[1]))
        return pairs[: self.config.links]

    def _linked(
        self, q: str, scored: list[Scored], by_doc: dict[str, dict[int, dict[str, Any]]]
    ) -> list[Scored]:
        """SAKI expansion: the ``expand`` best sentences' strongest ``links`` linked
        sentences not yet candidates, scored by the same reranker."""
        c = self.config
        have = {_key(s) for s in scored}
        linked: list[Scored] = []
        for s in scored[: c.expand]:
            row = by_doc.get(s.chunk.doc_id, {}).get(s.chunk.index)
            if row is None:
                continue
            for j, w in self._strongest_links(row):
                target = by_doc[s.chunk.doc_id].get(int(j))
                key = (s.chunk.doc_id, int(j))
                if target is None or key in have or not has_words(str(target["text"])):
                    continue
                have.add(key)
                info = {"link": float(w), "linked_from": s.chunk.index}
                linked.append(Scored(row_sentence_chunk(target), 0.0, info))
        return self._score(q, linked)

    def _one(
        self,
        q: str,
        pareto_hits: list[Scored],
        chunk_hits: list[Scored],
        by_doc: dict[str, dict[int, dict[str, Any]]],
        t: dict[str, float],
    ) -> Retrieval:
        c = self.config
        pool, from_chunks = self._pool(pareto_hits, chunk_hits, by_doc)
        if self.tagger is not None:
            return self._tag_one(q, pool, by_doc, t, len(pareto_hits), from_chunks)
        stop = timed(t, "rerank")
        with self.stage(f"rerank {len(pool)} sentences"):
            scored = sorted(self._score(q, pool), key=lambda s: -s.score)
            bridge = scored[0] if c.hops == 2 and scored else None
            if bridge is not None:
                scored = self._bridge(q, scored)
        stop()
        stop = timed(t, "expand")
        linked = self._linked(q, scored, by_doc)
        cands = sorted(scored + linked, key=lambda s: -s.score)
        stop()
        stop = timed(t, "select")
        sel = self.selector_for(c.min_k).select(q, cands)
        if c.order == "mcts" and sel.context.chunks:
            sel = self._mcts_order(q, sel)
        stop()
        trace = {
            "method": self.name,
            "scorer": "reranker",
            "alpha": 1.0 if not c.pareto else self.pareto.alpha,
            "retriever": c.retriever if c.chunks else None,
            "reranker": c.reranker,
            "pool": {"pareto": len(pareto_hits), "from_chunks": from_chunks, "linked": len(linked)},
            "bridge": bridge.chunk.id if bridge is not None else None,
            "candidates": scored_trace(cands),
            **selection_trace(sel),
        }
        return Retrieval(q, sel.context, cands, trace, t)

    def _tag_one(
        self,
        q: str,
        pool: list[Scored],
        by_doc: dict[str, dict[int, dict[str, Any]]],
        t: dict[str, float],
        n_pareto: int,
        from_chunks: int,
    ) -> Retrieval:
        """The tagger path: every passage holding a candidate (and, with ``expand``, the
        passages of the best candidates' linked sentences) is read whole by the tagger;
        its kept sentences are the context (:func:`ragsieve.methods.tagger.tagged_selection`)."""
        c = self.config
        assert self.tagger is not None
        stop = timed(t, "tag")
        keys: dict[tuple[str, int], None] = {}
        ranked = sorted(pool, key=lambda s: -s.score)
        for s in ranked:
            row = by_doc.get(s.chunk.doc_id, {}).get(s.chunk.index)
            if row is not None:
                keys.setdefault((s.chunk.doc_id, int(row["passage"])), None)
        linked = 0
        for s in ranked[: c.expand]:
            row = by_doc.get(s.chunk.doc_id, {}).get(s.chunk.index) or {}
            for j, _ in self._strongest_links(row):
                target = by_doc[s.chunk.doc_id].get(int(j))
                key = (s.chunk.doc_id, int(target["passage"])) if target else None
                if key is not None and key not in keys:
                    keys[key] = None
                    linked += 1
        units = [
            [
                row_sentence_chunk(r)
                for _, r in sorted(by_doc[d].items())
                if int(r["passage"]) == p and str(r["text"]).strip()
            ]
            for d, p in keys
        ]
        stop()
        with self.stage(f"tag {sum(len(u) for u in units)} sentences of {len(units)} passages"):
            sel, cands = tag_and_select(
                self.tagger, q, units, c.tagger_settings, c.budget, c.unit, t
            )
        trace = {
            "method": self.name,
            "scorer": "tagger",
            "alpha": 1.0 if not c.pareto else self.pareto.alpha,
            "retriever": c.retriever if c.chunks else None,
            "tagger": str(self.tagger.model_dir),
            "pool": {"pareto": n_pareto, "from_chunks": from_chunks, "linked_passages": linked},
            "candidates": scored_trace(cands),
            **selection_trace(sel),
        }
        return Retrieval(q, sel.context, cands, trace, t, sel.span)

    def _bridge(self, q: str, scored: list[Scored]) -> list[Scored]:
        """Second hop: re-score the candidates against ``q`` + the best sentence; sentences of
        other documents keep the better of their two scores (``hop`` records the second).

        Every candidate but the bridge itself is in the second call, not only the other
        documents' sentences: the ensemble's BM25 and cosine features are relative to the best
        text of a call, and a call made of other documents alone would crown its best (however
        unrelated) with full relative features.
        """
        best = scored[0]
        rest = scored[1:]
        if not any(s.chunk.doc_id != best.chunk.doc_id for s in rest):
            return scored
        q2 = f"{q} {best.chunk.text.strip()}"
        assert self.reranker is not None
        hop = self.reranker.score(q2, [self._text(s) for s in rest])
        out = [best]
        for s, h in zip(rest, hop, strict=True):
            if s.chunk.doc_id != best.chunk.doc_id:
                s = replace(s, score=max(s.score, float(h)), scores={**s.scores, "hop": float(h)})
            out.append(s)
        return sorted(out, key=lambda s: -s.score)

    def _mcts_order(self, q: str, sel: Selection) -> Selection:
        """CARROT's MCTS over the best ``mcts_n`` chosen sentences: its best ordered path."""
        c = self.config
        assert self.reranker is not None
        top = sorted(sel.context.chunks, key=lambda s: -s.score)[: c.mcts_n]
        scorer = BenefitScorer(self.reranker, q, [self._text(s) for s in top])
        budget = c.budget or max(DEFAULT_BUDGET, int(np.sum([s.chunk.n_tokens for s in top])))
        mcts = MCTSSelector(self.reranker, MCTSConfig(budget=budget), candidates=len(top))
        found = mcts.select_with(scorer, top)
        trace = {**sel.trace, "order": "mcts", "mcts": found.trace}
        return Selection(found.context, trace)


FULL = MethodDef(
    "full",
    FullConfig,
    FullMethod,
    aliases={"n": "N", "candidates": "N", "pth": "passage_threshold", "open": "open_point"},
    needs_sentences=True,
    summary="every stage at sentence level: Pareto + hybrid, rerank, SAKI links, cut, order",
)
