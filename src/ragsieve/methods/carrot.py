"""The ``carrot`` method: retrieve N chunks -> (agent) -> score -> MCTS under a token budget.

CARROT (docs/carrot.md): a query's top ``N`` chunks are scored one by one (the "rerank"), sorted,
and an MCTS over their ordered combinations (:mod:`ragsieve.select.mcts`) picks the order with
the highest reranker benefit that fits the budget. With ``agent=true`` the configuration agent
(:mod:`ragsieve.agent`) first predicts, from the query and its retrieved chunks, which scorer to
use and the MCTS hyper-parameters (iterations, ``c``, ``lambda_``).

``search`` swaps the MCTS for the exhaustive "upper" bound (top 5, 325 orders) or for the beam
search of Table VI, over the same scorer and budget, so ablations are ``carrot[...]`` specs.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from ragsieve.errors import ConfigError
from ragsieve.methods.base import Method, MethodDef, Retrieval, first_stage
from ragsieve.methods.trace import scored_trace, selection_trace, timed
from ragsieve.rerank import get_reranker
from ragsieve.rerank.base import DEFAULT_RERANKER, check_combination_cosine
from ragsieve.retrieve import get_retriever
from ragsieve.retrieve.base import DocFilter
from ragsieve.select.base import Selection
from ragsieve.select.benefit import BenefitScorer
from ragsieve.select.mcts import (
    DEFAULT_CANDIDATES,
    MCTSConfig,
    MCTSSelector,
)
from ragsieve.select.search import (
    DEFAULT_BEAM_WIDTH,
    UPPER_CANDIDATES,
    BeamSelector,
    ExhaustiveSelector,
)
from ragsieve.types import Scored

if TYPE_CHECKING:
    from ragsieve.index import Index

SEARCHES = ("mcts", "upper", "beam")


@dataclass(frozen=True)
class CarrotConfig(MCTSConfig):
    """CARROT's options: the search's own (:class:`MCTSConfig`: ``iterations``, ``c``,
    ``lambda_``, ``budget``, ``seed``) and the method's; defaults are the paper's (Sec. VII-A)."""

    #: Candidates retrieved, scored and searched (the tree's branching factor).
    N: int = DEFAULT_CANDIDATES
    #: The benefit scorer: ensemble | cross-encoder | bi-encoder | bm25 | a cross-encoder name.
    #: None: the agent's choice with ``agent=true``, else the project default.
    reranker: str | None = None
    #: Let the configuration agent predict reranker, iterations, c and lambda per query.
    agent: bool = False
    #: A trained agent folder (``ragsieve train-agent --out DIR``); None: the shipped one.
    agent_dir: str | None = None
    #: mcts (CARROT) | upper (exhaustive over the top 5) | beam (Table VI baseline).
    search: str = "mcts"
    beam_width: int = DEFAULT_BEAM_WIDTH
    retriever: str = "dense"
    #: How the benefit's MiniLM cosine reads a combination of two or more chunks. All embed
    #: the concatenation's window (one pass per distinct 256-piece window, the paper's
    #: reading) except ``pooled``: ``int8`` (default) with int8 activations, 1.7x faster a
    #: question than ``exact`` (the index's fp32-activation build) at the same dev quality;
    #: ``pooled`` from each chunk's own token states (one pass per candidate, about 4x
    #: faster, at 6% more tokens on dev: opt-in). Chosen on dev: docs/carrot.md.
    combination_cosine: str = "int8"

    def __post_init__(self) -> None:
        for name in ("N", "budget", "beam_width"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"{name} must be a positive integer, got {v!r}")
        if not isinstance(self.agent, bool):
            raise ConfigError(f"agent must be true or false, got {self.agent!r}")
        check_combination_cosine(self.combination_cosine)
        if self.search not in SEARCHES:
            raise ConfigError(f"search must be one of {', '.join(SEARCHES)}, got {self.search!r}")
        super().__post_init__()  # iterations, c, lambda_, seed

    def mcts(self) -> MCTSConfig:
        """The search's own settings alone (what :class:`MCTSSelector` takes)."""
        return MCTSConfig(**{f.name: getattr(self, f.name) for f in fields(MCTSConfig)})


class CarrotMethod(Method):
    """CARROT: top-``N`` -> per-chunk benefit -> MCTS (or upper/beam) within ``budget`` tokens."""

    name = "carrot"

    def __init__(self, index: Index, config: CarrotConfig | None = None) -> None:
        super().__init__(index)
        self.config = config or CarrotConfig()
        c = self.config
        self.retriever = get_retriever(c.retriever, index)
        self.agent: Any = None
        if c.agent:
            from ragsieve.agent.predict import ConfigAgent

            self.agent = ConfigAgent.load(c.agent_dir, embedder=index.config.embedder)
        if c.reranker is not None:
            get_reranker(c.reranker, index.config.embedder)  # fail early on a bad name

    def _reranker(self, name: str) -> Any:
        return get_reranker(name, self.index.config.embedder)

    def _retrieve(self, questions: list[str], doc_ids: DocFilter) -> list[Retrieval]:
        hits, per_q = first_stage(self.retriever, questions, self.config.N, doc_ids)
        return [self._one(q, cands, per_q) for q, cands in zip(questions, hits, strict=True)]

    def _one(self, q: str, cands: list[Scored], retrieve_s: float) -> Retrieval:
        c = self.config
        t: dict[str, float] = {"retrieve": retrieve_s}
        cfg = c
        predicted: dict[str, Any] | None = None
        if self.agent is not None and cands:
            stop = timed(t, "agent")
            pred = self.agent.predict(q, [s.chunk.text for s in cands])
            stop()
            predicted = pred.to_dict()
            cfg = replace(
                c,
                reranker=c.reranker or pred.reranker,
                iterations=pred.iterations,
                c=pred.c,
                lambda_=pred.lambda_,
            )
        reranker_name = cfg.reranker or DEFAULT_RERANKER
        reranker = self._reranker(reranker_name)
        # "Rerank": the single chunks' benefits, one call (MCTS's root expansion reuses them).
        stop = timed(t, "rerank")
        scorer = BenefitScorer(reranker, q, [s.chunk.text for s in cands], cfg.combination_cosine)
        scorer.seed([s.scores.get("dense") for s in cands])  # the index's vectors: no re-embed
        singles = scorer.score([(i,) for i in range(len(cands))]) if cands else []
        order = sorted(range(len(cands)), key=lambda i: -float(singles[i]))
        ranked = [
            Scored(
                cands[i].chunk,
                float(singles[i]),
                {**cands[i].scores, "rerank": float(singles[i])},
            )
            for i in order
        ]
        scorer = scorer.reordered(order)
        stop()
        stop = timed(t, "select")
        sel = self._search(cfg, scorer, ranked)
        stop()
        sel.trace["scorer_stats"] = scorer.stats()
        if predicted is not None:
            sel.trace["agent"] = predicted
        trace = {
            "method": self.name,
            "retriever": c.retriever,
            "reranker": reranker_name,
            "N": c.N,
            "candidates": scored_trace(ranked),
            **selection_trace(sel),
        }
        return Retrieval(q, sel.context, ranked, trace, t)

    def _search(self, cfg: CarrotConfig, scorer: BenefitScorer, ranked: list[Scored]) -> Selection:
        """The selection stage of ``search`` over the scored, sorted candidates; it reuses the
        scorer that ranked them, so no text is scored twice."""
        n = max(1, len(ranked))
        selector: MCTSSelector | ExhaustiveSelector | BeamSelector
        if cfg.search == "mcts":
            selector = MCTSSelector(scorer.reranker, cfg.mcts(), candidates=n)
        elif cfg.search == "upper":
            selector = ExhaustiveSelector(scorer.reranker, cfg.budget, UPPER_CANDIDATES)
        else:
            selector = BeamSelector(scorer.reranker, cfg.budget, candidates=n, width=cfg.beam_width)
        return selector.select_with(scorer, ranked)


CARROT = MethodDef(
    "carrot",
    CarrotConfig,
    CarrotMethod,
    aliases={"n": "N", "candidates": "N", "lambda": "lambda_", "scorer": "reranker"},
    summary="CARROT: MCTS over ordered chunk combinations under a token budget",
)
