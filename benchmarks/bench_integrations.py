"""ragsieve against the frameworks' own context-selection recipes (issue 20, part 3).

    .venv/bin/python -m benchmarks bench_integrations     # dev sweep + 50 test q/dataset
    .venv/bin/python -m benchmarks bench_integrations --limit 10 --dev-limit 20  # smaller

Every recipe gets the same questions, the same pools of passages and the same embedder
(ragsieve's packaged all-MiniLM-L6-v2, fp32, ``get_embedder("minilm")``), and every recipe's
output is cut to ``--budget`` cl100k tokens (default 450) in its own score order, by the rule of
ragsieve's ``cap_context`` (drop the lowest-scored unit until the joined context fits). The
contexts are scored by the harness's ``context_metrics``: tokens, evidence precision and recall,
ie (mean recall x mean precision, as the harness reports it) and answer recall.

Recipes (each one's documented form; see BENCHMARKS.md for the settings):

* LangChain ``EmbeddingsFilter`` over the pool split into sentences by ragsieve's splitter, and
  the documented ``DocumentCompressorPipeline`` (``CharacterTextSplitter(chunk_size=300,
  separator=". ")`` -> ``EmbeddingsRedundantFilter`` -> ``EmbeddingsFilter``) over the pool;
* LlamaIndex ``VectorStoreIndex`` + ``SentenceEmbeddingOptimizer``, and
  ``SentenceWindowNodeParser`` + ``SimilarityPostprocessor`` + ``MetadataReplacementPostProcessor``;
  the retriever and the postprocessors are called directly (what ``RetrieverQueryEngine.retrieve``
  does), so no LLM is resolved and ``Settings`` is never touched;
* Chonkie's ``SemanticChunker`` on each passage, chunks ranked by cosine to the question;
* ragsieve ``naive`` through the evaluation harness (its own fixed 200-token chunks);
* ragsieve method specs through the three adapters (``ragsieve.integrations``), which run them
  over the caller's passages (``ragsieve.pool.PoolSelector``).

Each recipe's threshold is chosen on a development split (HotpotQA *train* questions with
sentence gold, ``train_extra``), maximising ie; the test tables report the default and the
dev-chosen setting. Test questions: HotpotQA AMOR (pool: the question's 10 paragraphs) and SQuAD
dev, the first 20 questions of each of articles 0-4 (``common.questions``; no training reads
them; pool: the question's article, split into its paragraphs). Writes
``benchmarks/results/integrations.json.gz`` (``--out``; its per-question rows, gzipped) and
``integrations.md`` beside it, and prints markdown tables. Lines of glue
code per recipe are counted from the ``# glue[...]`` blocks of this file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import re
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    RESULTS,
    fmt,
    hotpot_train_dataset,
    interval,
    paired,
    questions,
    read_json,
    write_text,
)

logging.getLogger("langchain_text_splitters.base").setLevel(logging.ERROR)  # "chunk > 300"
COLUMNS = ("context_tokens", "evidence_precision", "evidence_recall", "ie", "answer_recall")
BOOTSTRAP = 2000


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Passage:
    """One passage of a question's pool."""

    id: str
    title: str
    text: str


def pool_of(q: Any) -> tuple[str, list[Passage]]:
    """(pool key, passages): HotpotQA's 10 paragraphs, or the SQuAD article's paragraphs."""
    if len(q.documents) == 1:  # SQuAD: the whole article, paragraphs joined by blank lines
        d = q.documents[0]
        paras = [p.strip() for p in d.text.split("\n\n") if p.strip()]
        return d.id, [Passage(f"{d.id}#{i}", d.title, p) for i, p in enumerate(paras)]
    return q.id, [Passage(d.id, d.title, d.text) for d in q.documents]


# ----------------------------------------------------------------------------- embedder
class MiniLM:
    """ragsieve's packaged MiniLM (fp32) with an optional text -> vector memo (on for the dev
    sweep, where every setting re-embeds the same sentences; off for the timed test runs)."""

    def __init__(self) -> None:
        from ragsieve.embed import get_embedder

        self.model = get_embedder("minilm")
        self.memo: dict[str, np.ndarray] | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if self.memo is None:
            return self.model.embed(texts)
        todo = list(dict.fromkeys(t for t in texts if t not in self.memo))
        if todo:
            self.memo.update(zip(todo, self.model.embed(todo), strict=True))
        return np.stack([self.memo[t] for t in texts]) if texts else np.zeros((0, 384))


EMB: MiniLM | None = None


def emb() -> MiniLM:
    global EMB
    EMB = EMB or MiniLM()
    return EMB


# glue[lc-embeddings]: LangChain Embeddings over ragsieve's MiniLM
def lc_embeddings() -> Any:
    from langchain_core.embeddings import Embeddings

    class MiniLMEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return emb().embed(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return emb().embed([text])[0].tolist()

    return MiniLMEmbeddings()


# end glue


# glue[li-embedding]: LlamaIndex BaseEmbedding over ragsieve's MiniLM
def li_embedding() -> Any:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    class MiniLMEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return emb().embed([query])[0].tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return emb().embed([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return emb().embed(texts).tolist()

    return MiniLMEmbedding(model_name="ragsieve-minilm", embed_batch_size=64)


# end glue


# ----------------------------------------------------------------------------- budget
def cap(units: Sequence[tuple[str, float]], budget: int) -> list[str]:
    """``cap_context``'s rule on (text, score) units in presentation order: drop the lowest
    score (the later unit on ties) until the texts joined by blank lines fit ``budget``.
    The kept units are the longest score-order prefix that fits (found by bisection)."""
    from ragsieve.text import count_tokens

    order = sorted(range(len(units)), key=lambda i: (-units[i][1], i))

    def texts(n: int) -> list[str]:
        keep = set(order[:n])
        return [units[i][0] for i in range(len(units)) if i in keep]

    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens("\n\n".join(texts(mid))) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return texts(lo)


# ----------------------------------------------------------------------------- recipes
@dataclass
class Recipe:
    """A context selector: ``prepare`` (indexing, cached per pool) and ``select`` (per
    question) returning (text, score) units; ``glue`` names the glue blocks it needs."""

    label: str
    family: str
    params: dict[str, Any]
    prepare: Callable[[list[Passage]], Any]
    select: Callable[[str, Any], list[tuple[str, float]]]
    glue: tuple[str, ...]
    prepare_key: str = ""  # recipes sharing a key share the prepared state of a pool
    notes: list[str] = field(default_factory=list)


# glue[lc-filter]: pool -> sentence Documents -> EmbeddingsFilter -> (text, score)
def lc_filter(threshold: float | None, k: int | None = 20) -> Recipe:
    from langchain_classic.retrievers.document_compressors import EmbeddingsFilter
    from langchain_core.documents import Document

    from ragsieve.text import sentence_texts

    filt = EmbeddingsFilter(embeddings=lc_embeddings(), similarity_threshold=threshold, k=k)

    def prepare(pool: list[Passage]) -> list[Any]:
        return [Document(page_content=s) for p in pool for s in sentence_texts(p.text)]

    def select(question: str, docs: list[Any]) -> list[tuple[str, float]]:
        kept = filt.compress_documents(docs, question)
        return [(d.page_content, float(d.state["query_similarity_score"])) for d in kept]

    return Recipe(
        f"LangChain EmbeddingsFilter (threshold {threshold}, k {k}) over sentences",
        "lc-filter",
        {"similarity_threshold": threshold, "k": k},
        prepare,
        select,
        ("lc-embeddings", "lc-filter"),
        prepare_key="lc-sentences",
    )


# end glue


# glue[lc-pipeline]: pool -> Documents -> DocumentCompressorPipeline -> (text, score)
def lc_pipeline(threshold: float | None, k: int | None = 20) -> Recipe:
    from langchain_classic.retrievers.document_compressors import (
        DocumentCompressorPipeline,
        EmbeddingsFilter,
    )
    from langchain_community.document_transformers import EmbeddingsRedundantFilter
    from langchain_core.documents import Document
    from langchain_text_splitters import CharacterTextSplitter

    e = lc_embeddings()
    pipe = DocumentCompressorPipeline(
        transformers=[
            CharacterTextSplitter(chunk_size=300, chunk_overlap=0, separator=". "),
            EmbeddingsRedundantFilter(embeddings=e),
            EmbeddingsFilter(embeddings=e, similarity_threshold=threshold, k=k),
        ]
    )

    def prepare(pool: list[Passage]) -> list[Any]:
        return [Document(page_content=p.text) for p in pool]

    def select(question: str, docs: list[Any]) -> list[tuple[str, float]]:
        kept = pipe.compress_documents(docs, question)
        return [(d.page_content, float(d.state["query_similarity_score"])) for d in kept]

    return Recipe(
        f"LangChain DocumentCompressorPipeline (threshold {threshold}, k {k})",
        "lc-pipeline",
        {"similarity_threshold": threshold, "k": k},
        prepare,
        select,
        ("lc-embeddings", "lc-pipeline"),
        prepare_key="lc-docs",
    )


# end glue


# glue[li-index]: pool -> LlamaIndex Documents -> VectorStoreIndex with the MiniLM embedding
def li_index(pool: list[Passage]) -> Any:
    from llama_index.core import Document, VectorStoreIndex

    docs = [
        Document(text=p.text, id_=p.id, metadata={"title": p.title}) for p in pool
    ]  # the title is embedded (LlamaIndex's default), kept out of the LLM's text
    for d in docs:
        d.excluded_llm_metadata_keys = ["title"]
    return VectorStoreIndex.from_documents(docs, embed_model=li_embedding())


# end glue


# glue[li-optimizer]: retriever + SentenceEmbeddingOptimizer, called as the query engine does
def li_optimizer(top_k: int, percentile: float | None, threshold: float | None) -> Recipe:
    from llama_index.core.postprocessor import SentenceEmbeddingOptimizer

    opt = SentenceEmbeddingOptimizer(
        embed_model=li_embedding(), percentile_cutoff=percentile, threshold_cutoff=threshold
    )
    failures = [0]

    def select(question: str, index: Any) -> list[tuple[str, float]]:
        nodes = index.as_retriever(similarity_top_k=top_k).retrieve(question)
        try:
            nodes = opt.postprocess_nodes(nodes, query_str=question)
        except ValueError:  # "Optimizer returned zero sentences." on some node: drop that node
            failures[0] += 1
            nodes = index.as_retriever(similarity_top_k=top_k).retrieve(question)
            kept = []
            for n in nodes:
                with contextlib.suppress(ValueError):
                    kept += opt.postprocess_nodes([n], query_str=question)
            nodes = kept
        return [(n.node.get_content(), float(n.score or 0.0)) for n in nodes]

    r = Recipe(
        f"LlamaIndex SentenceEmbeddingOptimizer (top {top_k}, percentile {percentile}, "
        f"threshold {threshold})",
        "li-optimizer",
        {"similarity_top_k": top_k, "percentile_cutoff": percentile, "threshold_cutoff": threshold},
        li_index,
        select,
        ("li-embedding", "li-index", "li-optimizer"),
        prepare_key="li-index",
    )
    r.params["_failures"] = failures
    return r


# end glue


# glue[li-window]: SentenceWindowNodeParser index + SimilarityPostprocessor + replacement
def li_window(top_k: int, cutoff: float | None) -> Recipe:
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.node_parser import SentenceWindowNodeParser
    from llama_index.core.postprocessor import (
        MetadataReplacementPostProcessor,
        SimilarityPostprocessor,
    )

    parser = SentenceWindowNodeParser.from_defaults(
        window_size=3, window_metadata_key="window", original_text_metadata_key="original_text"
    )
    post: list[Any] = [] if cutoff is None else [SimilarityPostprocessor(similarity_cutoff=cutoff)]
    post.append(MetadataReplacementPostProcessor(target_metadata_key="window"))

    def prepare(pool: list[Passage]) -> Any:
        docs = [Document(text=p.text, metadata={"title": p.title}) for p in pool]
        for d in docs:
            d.excluded_llm_metadata_keys = ["title"]
        nodes = parser.get_nodes_from_documents(docs)
        return VectorStoreIndex(nodes, embed_model=li_embedding())

    def select(question: str, index: Any) -> list[tuple[str, float]]:
        nodes = index.as_retriever(similarity_top_k=top_k).retrieve(question)
        for p in post:
            nodes = p.postprocess_nodes(nodes, query_str=question)
        return [(n.node.get_content(), float(n.score or 0.0)) for n in nodes]

    return Recipe(
        f"LlamaIndex SentenceWindow + SimilarityPostprocessor (top {top_k}, cutoff {cutoff})",
        "li-window",
        {"similarity_top_k": top_k, "similarity_cutoff": cutoff},
        prepare,
        select,
        ("li-embedding", "li-window"),
        prepare_key="li-window",
    )


# end glue


# glue[chonkie]: SemanticChunker with our MiniLM, chunks ranked by cosine to the question
def chonkie_semantic(threshold: float) -> Recipe:
    from chonkie import SemanticChunker
    from chonkie.embeddings import SentenceTransformerEmbeddings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SentenceTransformerEmbeddings(emb().model._model)  # type: ignore[attr-defined]
    chunker = SemanticChunker(embedding_model=model, threshold=threshold)

    def prepare(pool: list[Passage]) -> tuple[list[str], np.ndarray]:
        chunks = [c.text for p in pool for c in chunker.chunk(p.text)]
        return chunks, emb().embed(chunks)

    def select(question: str, state: tuple[list[str], np.ndarray]) -> list[tuple[str, float]]:
        chunks, vecs = state
        sims = vecs @ emb().embed([question])[0]
        return list(zip(chunks, map(float, sims), strict=True))

    return Recipe(
        f"Chonkie SemanticChunker (threshold {threshold}) + top chunks by cosine",
        "chonkie",
        {"threshold": threshold},
        prepare,
        select,
        ("chonkie",),
        prepare_key=f"chonkie-{threshold}",
    )


# end glue


# ----------------------------------------------------------------------------- ours
ADAPTERS = ("langchain", "llamaindex", "haystack")


# glue[ours-langchain]: RagsieveCompressor on the pool's passages
def ours_langchain(
    spec: str, budget: int
) -> Callable[[str, list[Passage]], list[tuple[str, float]]]:
    from langchain_core.documents import Document

    from ragsieve.integrations.langchain import RagsieveCompressor

    comp = RagsieveCompressor(method=spec, budget=budget)

    def run(question: str, pool: list[Passage]) -> list[tuple[str, float]]:
        docs = [
            Document(page_content=p.text, metadata={"title": p.title, "id": p.id}) for p in pool
        ]
        out = comp.compress_documents(docs, question)
        return [(d.page_content, float(d.metadata["ragsieve_score"])) for d in out]

    return run


# end glue


# glue[ours-llamaindex]: RagsievePostprocessor on the pool's passages as nodes
def ours_llamaindex(
    spec: str, budget: int
) -> Callable[[str, list[Passage]], list[tuple[str, float]]]:
    from llama_index.core.schema import NodeWithScore, TextNode

    from ragsieve.integrations.llamaindex import RagsievePostprocessor

    pp = RagsievePostprocessor(method=spec, budget=budget)

    def run(question: str, pool: list[Passage]) -> list[tuple[str, float]]:
        nodes = [
            NodeWithScore(node=TextNode(text=p.text, id_=p.id, metadata={"title": p.title}))
            for p in pool
        ]
        out = pp.postprocess_nodes(nodes, query_str=question)
        return [(n.node.get_content(), float(n.score or 0.0)) for n in out]

    return run


# end glue


# glue[ours-haystack]: the Haystack component on the pool's passages
def ours_haystack(
    spec: str, budget: int
) -> Callable[[str, list[Passage]], list[tuple[str, float]]]:
    from haystack import Document

    from ragsieve.integrations import haystack as hs

    comp = hs.RagsieveRanker(method=spec, budget=budget)
    comp.warm_up()

    def run(question: str, pool: list[Passage]) -> list[tuple[str, float]]:
        docs = [Document(content=p.text, id=p.id, meta={"title": p.title}) for p in pool]
        out = comp.run(query=question, documents=docs)["documents"]
        return [(d.content, float(d.score or 0.0)) for d in out]

    return run


# end glue

OURS = {"langchain": ours_langchain, "llamaindex": ours_llamaindex, "haystack": ours_haystack}


# ----------------------------------------------------------------------------- running
def evaluate(
    recipe: Recipe, questions: Sequence[Any], budget: int, states: dict[tuple[str, str], Any]
) -> dict[str, Any]:
    """Run ``recipe`` on ``questions``: per-question metrics and timings, and the means.
    ``states`` caches prepared pools by (prepare key, pool key) across recipes."""
    from ragsieve.metrics import context_metrics

    rows: list[dict[str, Any]] = []
    index_s = 0.0
    for q in questions:
        key, pool = pool_of(q)
        t0 = time.perf_counter()
        skey = (recipe.prepare_key or recipe.label, key)
        if skey not in states:
            states[skey] = recipe.prepare(pool)
            index_s += time.perf_counter() - t0
        t1 = time.perf_counter()
        texts = cap(recipe.select(q.question, states[skey]), budget)
        dt = time.perf_counter() - t1
        rows.append({"id": q.id, "seconds": dt, "texts": texts, **context_metrics(texts, q)})
    return summarise(recipe.label, rows, index_s, len({pool_of(q)[0] for q in questions}))


def timing(recipe: Recipe, questions: Sequence[Any], budget: int) -> tuple[float, float]:
    """(query s/q, indexing s/q) of ``recipe`` with no embedding memo and nothing prepared."""
    memo, emb().memo = emb().memo, None
    try:
        res = evaluate(recipe, questions, budget, {})
    finally:
        emb().memo = memo
    return res["s_per_q"], res["index_s_per_q"]


def summarise(label: str, rows: list[dict[str, Any]], index_s: float, pools: int) -> dict[str, Any]:
    """Means (the harness's ``aggregate``), seconds per question, empty contexts."""
    from ragsieve.metrics import aggregate

    m = aggregate([{k: v for k, v in r.items() if k != "texts"} for r in rows])
    n = len(rows)
    return {
        "label": label,
        "n": n,
        **{c: m.get(c) for c in COLUMNS},
        "s_per_q": float(np.mean([r["seconds"] for r in rows])),
        "index_s_per_q": index_s / n,
        "pools": pools,
        "empty": sum(1 for r in rows if not r["texts"]),
        "per_question": rows,
    }


def evaluate_ours(spec: str, adapter: str, questions: Sequence[Any], budget: int) -> dict[str, Any]:
    """A ragsieve spec through one adapter (indexing happens inside each call)."""
    from ragsieve.metrics import context_metrics

    run = OURS[adapter](spec, budget)
    rows = []
    for q in questions:
        _, pool = pool_of(q)
        t0 = time.perf_counter()
        texts = cap(run(q.question, pool), budget)
        dt = time.perf_counter() - t0
        rows.append({"id": q.id, "seconds": dt, "texts": texts, **context_metrics(texts, q)})
    return summarise(f"ragsieve `{spec}` via {adapter}", rows, 0.0, len(rows))


def harness_naive(dataset: str, questions: Any, budget: int) -> dict[str, Any]:
    """ragsieve ``naive`` through the evaluation harness (its cached index, 200-token chunks)."""
    from ragsieve.evaluate.runner import EvalConfig, run_eval
    from ragsieve.methods import parse_methods

    res = run_eval(
        questions, EvalConfig(methods=parse_methods("naive"), no_llm=True, budget=budget)
    )
    per = res["per_question"]
    rows = [
        {
            "id": r["id"],
            "seconds": float(sum(r.get("timings", {}).values())),
            "texts": ["x"],  # the harness keeps no texts; its contexts are never empty here
            **{c: r.get(c) for c in (*COLUMNS, "evidence_token_precision")},
        }
        for r in per
    ]
    build = float(res.get("index", {}).get("build_seconds") or 0.0)
    out = summarise(f"ragsieve `naive[budget={budget}]` (harness)", rows, build, 0)
    out["note"] = "index built once for the dataset (cached between runs)"
    return out


# ----------------------------------------------------------------------------- grids
def defaults() -> list[Recipe]:
    """Each recipe as its documentation shows it."""
    return [
        lc_filter(0.76),  # the LangChain docs' EmbeddingsFilter example (k keeps its default 20)
        lc_pipeline(0.76),  # the docs' pipeline: splitter -> redundant filter -> filter(0.76)
        li_optimizer(2, 0.5, None),  # docs: as_query_engine (top 2) + percentile_cutoff=0.5
        li_window(2, 0.7),  # docs: window 3, top 2; SimilarityPostprocessor's example 0.7
        chonkie_semantic(0.8),  # Chonkie's default threshold
    ]


def sweeps() -> dict[str, list[Recipe]]:
    """The settings each family is swept over on the dev split."""
    ths = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
    return {
        "lc-filter": [lc_filter(t) for t in ths],
        "lc-pipeline": [lc_pipeline(t) for t in ths],
        "li-optimizer": [li_optimizer(k, p, None) for k in (2, 5, 10) for p in (0.1, 0.2, 0.3, 0.5)]
        + [li_optimizer(10, None, t) for t in (0.2, 0.3, 0.4, 0.5, 0.6)],
        "li-window": [li_window(k, c) for k in (2, 5, 10) for c in (None, 0.2, 0.3, 0.4, 0.5)],
        "chonkie": [chonkie_semantic(t) for t in (0.5, 0.6, 0.7, 0.8, 0.9)],
    }


def rebuild(family: str, params: dict[str, Any]) -> Recipe:
    """The recipe of ``family`` with ``params`` (as saved in the JSON)."""
    p = {k: v for k, v in params.items() if not k.startswith("_")}
    if family == "lc-filter":
        return lc_filter(p["similarity_threshold"], p["k"])
    if family == "lc-pipeline":
        return lc_pipeline(p["similarity_threshold"], p["k"])
    if family == "li-optimizer":
        return li_optimizer(p["similarity_top_k"], p["percentile_cutoff"], p["threshold_cutoff"])
    if family == "li-window":
        return li_window(p["similarity_top_k"], p["similarity_cutoff"])
    return chonkie_semantic(p["threshold"])


# ----------------------------------------------------------------------------- reporting
def glue_lines() -> dict[str, int]:
    """Code lines (not blank, not comments) of each ``# glue[name]`` block of this file."""
    out: dict[str, int] = {}
    name = None
    for line in Path(__file__).read_text().splitlines():
        m = re.match(r"# glue\[([\w-]+)\]", line)
        if m:
            name = m.group(1)
            out[name] = 0
        elif line.startswith("# end glue"):
            name = None
        elif name and line.strip() and not line.strip().startswith("#"):
            out[name] += 1
    return out


#: Each row of the glue table: the glue blocks it needs and what they do.
GLUE_ROWS: dict[str, tuple[tuple[str, ...], str]] = {
    "LangChain EmbeddingsFilter": (
        ("lc-embeddings", "lc-filter"),
        "an `Embeddings` class over MiniLM; the pool split into sentence `Document`s; "
        "the score read back from the filter's document state",
    ),
    "LangChain DocumentCompressorPipeline": (
        ("lc-embeddings", "lc-pipeline"),
        "the same `Embeddings`; splitter, redundancy filter and filter wired into the pipeline",
    ),
    "LlamaIndex SentenceEmbeddingOptimizer": (
        ("li-embedding", "li-index", "li-optimizer"),
        "a `BaseEmbedding` over MiniLM; the pool as `Document`s in a `VectorStoreIndex`; "
        "retriever + optimizer called without a query engine (no LLM), and a per-node retry "
        "when the optimizer raises on a node with no sentence above the threshold",
    ),
    "LlamaIndex SentenceWindow + SimilarityPostprocessor": (
        ("li-embedding", "li-window"),
        "the same `BaseEmbedding`; window parser, index, retriever and the two postprocessors",
    ),
    "Chonkie SemanticChunker": (
        ("chonkie",),
        "Chonkie's `SentenceTransformerEmbeddings` around our loaded model; chunk every "
        "passage; embed the chunks and rank them by cosine (Chonkie has no retriever)",
    ),
    "ragsieve via LangChain `RagsieveCompressor`": (
        ("ours-langchain",),
        "the pool as `Document`s with a `title` metadata key; `compress_documents`",
    ),
    "ragsieve via LlamaIndex `RagsievePostprocessor`": (
        ("ours-llamaindex",),
        "the pool as `NodeWithScore`s with a `title`; `postprocess_nodes`",
    ),
    "ragsieve via Haystack `RagsieveRanker`": (
        ("ours-haystack",),
        "the pool as Haystack `Document`s with a `title`; `run`",
    ),
}


def glue_table() -> list[str]:
    """The markdown glue table, with each row's code lines counted from this file."""
    counts = glue_lines()
    lines = ["| recipe | glue lines | glue blocks | what the glue does |", "|---|---|---|---|"]
    for row, (blocks, what) in GLUE_ROWS.items():
        n = sum(counts.get(b, 0) for b in blocks)
        lines.append(f"| {row} | {n} | {', '.join(blocks)} | {what} |")
    return [*lines, ""]


def bootstrap_diff(a: dict[str, Any], base: dict[str, Any]) -> tuple[float, ...]:
    """Paired 95% interval of mean answer recall minus the baseline's (questions with a span
    answer in both)."""
    rows = {r["id"]: r for r in a["per_question"]}
    x, y = paired(rows, {r["id"]: r for r in base["per_question"]}, "answer_recall")
    return interval(x, y, n=BOOTSTRAP) if len(x) else (float("nan"),) * 3


def table(title: str, rows: list[dict[str, Any]], base: dict[str, Any] | None) -> list[str]:
    """One markdown table; the answer-recall difference from ``base`` with its interval."""
    head = (
        "| recipe | setting | tokens | ev. precision | ev. recall | ie | answer recall "
        "| ans. recall - naive [95% CI] | s/q (query) | s/q index | empty |"
    )
    lines = [f"#### {title}", "", head, "|" + "---|" * 11]
    for r in rows:
        diff = "-"
        if base is not None and r is not base:
            d, lo, hi = bootstrap_diff(r, base)
            diff = f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        idx = f"{r['index_s_per_q']:.2f}" if r.get("index_s_per_q") else "-"
        lines.append(
            f"| {r['label']} | {r.get('setting', '')} | {fmt(r['context_tokens'], True)} "
            f"| {fmt(r['evidence_precision'])} | {fmt(r['evidence_recall'])} | {fmt(r['ie'])} "
            f"| {fmt(r['answer_recall'])} | {diff} | {r['s_per_q']:.2f} | {idx} | {r['empty']} |"
        )
    return [*lines, ""]


def strip(r: dict[str, Any], keep_texts: bool = False) -> dict[str, Any]:
    """``r`` for the JSON: per-question rows without their texts (unless ``keep_texts``)."""
    rows = r.get("per_question", [])
    return {
        **{k: v for k, v in r.items() if k != "per_question"},
        "per_question": [{k: v for k, v in q.items() if keep_texts or k != "texts"} for q in rows],
    }


# ----------------------------------------------------------------------------- main
def dev_sweep(limit: int | None, budget: int) -> dict[str, Any]:
    """Every family's grid on the dev split (embeddings memoised); the best ie per family."""
    ds = hotpot_train_dataset()
    ds = type(ds)(ds.name, ds.questions[:limit] if limit else ds.questions)
    emb().memo = {}
    states: dict[tuple[str, str], Any] = {}
    out: dict[str, Any] = {"split": f"{ds.name} ({len(ds.questions)} questions)", "families": {}}
    t0 = time.perf_counter()
    for family, grid in sweeps().items():
        runs = []
        for recipe in grid:
            res = evaluate(recipe, ds.questions, budget, states)
            params = {k: v for k, v in recipe.params.items() if not k.startswith("_")}
            runs.append({"params": params, **{c: res[c] for c in COLUMNS}, "empty": res["empty"]})
            print(
                f"dev {family} {params}: tokens {res['context_tokens']:.0f} "
                f"R {res['evidence_recall']:.3f} P {res['evidence_precision']:.3f} "
                f"ie {res['ie']:.3f} AR {res['answer_recall']:.3f}",
                file=sys.stderr,
                flush=True,
            )
        best = max(runs, key=lambda r: (r["ie"], r["evidence_recall"]))
        out["families"][family] = {"runs": runs, "best": best["params"]}
    out["seconds"] = time.perf_counter() - t0
    emb().memo = None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--limit", type=int, default=50, help="test questions per dataset")
    ap.add_argument("--dev-limit", type=int, default=100, help="dev questions for the sweeps")
    ap.add_argument("--datasets", default="hotpotqa-sent,squad")
    ap.add_argument("--budget", type=int, default=450)
    ap.add_argument("--specs", default="naive,full,sage", help="ragsieve specs via adapters")
    ap.add_argument("--adapters", default=",".join(ADAPTERS), help="the first runs every question")
    ap.add_argument("--check-n", type=int, default=5, help="questions the others check it on")
    ap.add_argument("--timing-n", type=int, default=10, help="questions timed per recipe")
    ap.add_argument("--dev-from", type=Path, default=None, help="reuse a saved dev sweep (JSON)")
    ap.add_argument("--dev-only", action="store_true", help="only the dev sweep (to --out)")
    ap.add_argument("--no-frameworks", action="store_true", help="only naive and the adapters")
    ap.add_argument("--frameworks-from", type=Path, default=None, help="reuse saved naive/recipes")
    ap.add_argument("--ours-from", type=Path, default=None, help="reuse saved adapter rows")
    ap.add_argument("--no-ours", action="store_true", help="skip the adapters")
    ap.add_argument("--out", type=Path, default=RESULTS / "integrations.json.gz")
    args = ap.parse_args()
    t_all = time.perf_counter()

    if args.no_frameworks and not args.dev_from:
        dev = {"families": {}}
    elif args.dev_from:
        dev = read_json(args.dev_from)["dev"]
    else:
        dev = dev_sweep(args.dev_limit, args.budget)
    if args.dev_only:
        write_text(args.out, json.dumps({"dev": dev}, indent=1, default=float))
        return
    out: dict[str, Any] = {
        "budget": args.budget,
        "embedder": "ragsieve get_embedder('minilm') (all-MiniLM-L6-v2, fp32)",
        "dev": dev,
        "glue_lines": glue_lines(),
        "command": " ".join(sys.argv),
        "datasets": {},
    }
    lines: list[str] = []
    for dataset in args.datasets.split(","):
        ds = questions(dataset, args.limit)
        qs = list(ds.questions)
        rows: list[dict[str, Any]] = []
        fw_saved = None
        if args.frameworks_from:  # naive and framework rows of an earlier run
            fw_saved = read_json(args.frameworks_from)["datasets"][dataset]["rows"]
            fw_saved = [r for r in fw_saved if not str(r.get("family", "")).startswith("ours:")]
        base = fw_saved[0] if fw_saved else harness_naive(dataset, ds, args.budget)
        rows.append(base)
        rows += fw_saved[1:] if fw_saved else []
        states: dict[tuple[str, str], Any] = {}
        emb().memo = {}  # metrics with memoised vectors; seconds from a separate timed pass
        skip = args.no_frameworks or fw_saved is not None
        for recipe in [] if skip else defaults():
            fam = recipe.family
            chosen = rebuild(fam, dev["families"][fam]["best"])
            for kind, r in (("default", recipe), ("dev-chosen", chosen)):
                t0 = time.perf_counter()
                res = evaluate(r, qs, args.budget, states)
                res["setting"] = kind
                res["family"] = fam
                res["params"] = {k: v for k, v in r.params.items() if not k.startswith("_")}
                if "_failures" in r.params:
                    res["optimizer_zero_sentence_errors"] = r.params["_failures"][0]
                timed = qs[: args.timing_n]
                res["s_per_q"], res["index_s_per_q"] = timing(r, timed, args.budget)
                res["timed_on"] = len(timed)
                rows.append(res)
                print(
                    f"{dataset} {r.label} [{kind}]: {time.perf_counter() - t0:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
        emb().memo = None
        agree: dict[str, Any] = {}
        if args.ours_from:  # adapter rows of an earlier run on the same questions
            saved = read_json(args.ours_from)["datasets"][dataset]
            rows += [r for r in saved["rows"] if str(r.get("family", "")).startswith("ours:")]
            agree = saved["adapter_agreement"]
        elif not args.no_ours:
            adapters = args.adapters.split(",")
            for spec in args.specs.split(","):
                t0 = time.perf_counter()
                first = evaluate_ours(spec, adapters[0], qs, args.budget)
                first["setting"] = "-"
                first["family"] = f"ours:{spec}"
                rows.append(first)
                print(f"{dataset} {spec} via {adapters[0]}: {time.perf_counter() - t0:.0f} s")
                ref = {r["id"]: r["texts"] for r in first["per_question"]}
                for other in adapters[1:]:
                    try:
                        res = evaluate_ours(spec, other, qs[: args.check_n], args.budget)
                    except Exception as e:  # report, do not lose the run
                        agree[f"{spec} {other}"] = f"error: {type(e).__name__}: {e}"
                        continue
                    same = sum(
                        sorted(r["texts"]) == sorted(ref[r["id"]]) for r in res["per_question"]
                    )
                    agree[f"{spec} {other}"] = {
                        "identical": same,
                        "of": len(res["per_question"]),
                        "s_per_q": res["s_per_q"],
                    }
        title = f"{dataset}: {len(qs)} test questions, budget {args.budget}"
        lines += table(title, rows, base)
        if agree:
            lines += [f"Adapters against {args.adapters.split(',')[0]}: {json.dumps(agree)}", ""]
        out["datasets"][dataset] = {
            "n": len(qs),
            "rows": [strip(r) for r in rows],
            "adapter_agreement": agree,
        }
    if dev.get("families"):
        lines += [
            f"#### Dev-chosen settings ({dev.get('split', 'dev split')}), best ie per recipe",
            "",
            "| recipe | chosen setting | settings tried | tokens | ev. precision | ev. recall "
            "| ie | answer recall |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for fam, d in dev["families"].items():
            best = next(r for r in d["runs"] if r["params"] == d["best"])
            lines.append(
                f"| {fam} | {d['best']} | {len(d['runs'])} | {fmt(best['context_tokens'], True)} "
                f"| {fmt(best['evidence_precision'])} | {fmt(best['evidence_recall'])} "
                f"| {fmt(best['ie'])} | {fmt(best['answer_recall'])} |"
            )
        lines.append("")
    lines += ["#### Glue code per recipe (lines of this file)", "", *glue_table()]
    out["wall_seconds"] = time.perf_counter() - t_all
    lines.append(f"Wall time {out['wall_seconds']:.0f} s.")
    write_text(args.out, json.dumps(out, indent=1, default=float))
    md = args.out.name.removesuffix(".gz").removesuffix(".json") + ".md"
    (args.out.parent / md).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
