"""The benchmark runner behind ``ragsieve eval``.

One process, one index, every method on the same questions:

1. Every document the questions need (their own pools and/or the shared corpus) is indexed once
   into a cached index, keyed by the exact document set and the index configuration. A question
   with its own pool retrieves with a pre-filter on its documents' ids, which returns the same
   dense ranking as an index holding only that pool (cosine scores do not depend on the other
   rows). BM25 term statistics are those of the whole index, a documented deviation from
   indexing each pool separately.
2. Each method selects a context for every question (batched); context and ranked-list metrics
   are computed on exactly what would be sent to the LLM.
3. Unless ``no_llm``, the LLM answers from that context and answer metrics, tokens, cost (SAGE
   Eq. 1) and cost-efficiency (Eq. 2) are added.
4. A method that locates an answer span (the tagger with a span head,
   :meth:`~ragsieve.methods.base.Method.gives_spans`) has its span scored as an answer,
   with or without an LLM: ``span_em`` and ``span_f1`` (a question without a span counts as a
   wrong answer), beside the LLM's ``em`` and ``f1``. ``em`` and ``f1`` score the answer
   line (``Answer.text``: the span for a ``span_first`` reader where it answers,
   :mod:`ragsieve.methods.answer_line`); ``reply_em`` and ``reply_f1`` the LLM's reply alone.

Outputs: ``results.json``, ``per_question.jsonl``, ``table.md`` (also printed) and
``quality_vs_tokens.png``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsieve.defaults import DEFAULT_MAX_TOKENS
from ragsieve.embed import index_build
from ragsieve.errors import ConfigError
from ragsieve.evaluate.schema import EvalDataset, EvalQuestion
from ragsieve.index import Index, IndexConfig
from ragsieve.link.attention import AttnLinkerConfig
from ragsieve.llm.cost import (
    DEFAULT_PRICE_IN_PER_M,
    DEFAULT_PRICE_OUT_PER_M,
    cost_efficiency,
    latency_summary,
    llm_cost,
)
from ragsieve.methods import MethodSpec, build_method, method_needs_sentences
from ragsieve.metrics import aggregate, answer_metrics, context_metrics, ranked_metrics
from ragsieve.progress import Progress
from ragsieve.text.markup import plain
from ragsieve.types import Document

#: Metrics shown in the printed table, in order, when present.
TABLE_COLUMNS = [
    "context_tokens",
    "answer_recall",
    "evidence_recall",
    "evidence_precision",
    "ie",
    "recall@sum",
    "precision@sum",
    "ie@sum",
    "mrr",
    "accuracy",
    "em",
    "f1",
    "reply_f1",
    "span_em",
    "span_f1",
    "rouge_l",
    "bleu_1",
    "prompt_tokens",
    "cost",
    "cost_efficiency",
]


@dataclass
class EvalConfig:
    """Settings of one evaluation run (CLI flags of ``ragsieve eval``)."""

    methods: list[MethodSpec]
    k: int = 10
    budget: int | None = None
    #: Prompt tokens of every LLM call for one question (:mod:`ragsieve.llm.budget`).
    total_budget: int | None = None
    #: None: each method's own retriever (dense for most, hybrid for ``tagger`` and ``full``).
    retriever: str | None = None
    reranker: str | None = None
    no_llm: bool = False
    llm: str = "local"
    #: Backend options for ``get_llm`` (``timeout``, ``max_retries`` for an OpenAI endpoint).
    llm_options: dict[str, Any] = field(default_factory=dict)
    max_tokens: int = DEFAULT_MAX_TOKENS
    chunker: str = "fixed"
    chunk_tokens: int | None = None  # None: the chunker's default
    embedder: str = "minilm"
    price_in_per_m: float = DEFAULT_PRICE_IN_PER_M
    price_out_per_m: float = DEFAULT_PRICE_OUT_PER_M
    cache_dir: Path | None = None
    #: Extra IndexConfig fields of the evaluation index (``pareto_context="exact"``, ...).
    index_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.llm.strip().lower() == "none":  # ``--llm none`` is ``--no-llm``
            self.no_llm = True


def default_cache_dir() -> Path:
    base = os.environ.get("RAGSIEVE_CACHE") or os.environ.get("XDG_CACHE_HOME")
    return Path(base) / "ragsieve" if base else Path.home() / ".cache" / "ragsieve"


def _documents(dataset: EvalDataset) -> list[Document]:
    """Every document any question needs, de-duplicated by id (ids must not clash)."""
    seen: dict[str, Document] = {}
    sources = list(dataset.corpus or ()) + [d for q in dataset.questions for d in q.documents]
    for d in sources:
        prev = seen.get(d.id)
        if prev is None:
            seen[d.id] = Document(id=d.id, text=d.text, title=d.title, source=dataset.name)
        elif prev.text != d.text:
            raise ConfigError(f"dataset {dataset.name}: document id {d.id!r} has two texts")
    return list(seen.values())


def eval_index(
    dataset: EvalDataset, cfg: EvalConfig, progress: Progress | None = None
) -> tuple[Index, float]:
    """The cached index holding exactly the documents of ``dataset``; returns it and the seconds
    spent building (0 when it was cached)."""
    docs = _documents(dataset)
    h = hashlib.sha256()
    for d in sorted(docs, key=lambda d: d.id):
        h.update(d.id.encode())
        h.update(hashlib.sha256(d.text.encode()).digest())
    extra = dict(cfg.index_options)
    if any(method_needs_sentences(s.name) for s in cfg.methods):
        extra.setdefault("sentences", True)  # pareto / saki read the sentence table
    icfg = IndexConfig(
        embedder=cfg.embedder, chunker=cfg.chunker, chunk_tokens=cfg.chunk_tokens, **extra
    )
    h.update(json.dumps(icfg.to_dict(), sort_keys=True).encode())
    # The build that writes the vectors (int8 ONNX MiniLM by default, or fp32 with
    # RAGSIEVE_EXACT_EMBEDDER=1) and the linker's backend make a different index too.
    h.update(f"vectors={index_build(icfg.embedder)}".encode())
    if icfg.sentences:
        h.update(f"links={AttnLinkerConfig().backend}".encode())
    if icfg.chunker == "sage":  # a retrained segmentation model makes a new index
        from ragsieve.segment.model import shipped_segmenter_dir

        h.update((shipped_segmenter_dir() / "head.npz").read_bytes())
    safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", dataset.name)
    path = (cfg.cache_dir or default_cache_dir()) / "eval-index" / f"{safe}-{h.hexdigest()[:16]}"
    t0 = time.perf_counter()
    index = Index.open_or_create(path, icfg)
    if index.stats()["documents"] == len(docs):
        return index, 0.0  # cached: the key covers ids, texts and configuration
    index.add(docs, progress=progress)
    return index, time.perf_counter() - t0


def _run_options(cfg: EvalConfig) -> dict[str, Any]:
    """The run-level options every method's spec is built over."""
    return {"k": cfg.k, "budget": cfg.budget, "retriever": cfg.retriever, "reranker": cfg.reranker}


def _question_filter(dataset: EvalDataset, q: EvalQuestion) -> list[str] | None:
    return [d.id for d in q.documents] if q.documents else None


def run_eval(
    dataset: EvalDataset,
    cfg: EvalConfig,
    progress: Progress | None = None,
    llm: Any = None,
) -> dict[str, Any]:
    """Evaluate every method of ``cfg`` on ``dataset``; returns the results and per-question rows.

    ``llm`` may be an LLM object to reuse (else ``cfg.llm`` is loaded when answers are needed).
    """
    if not dataset.questions:
        raise ConfigError(f"dataset {dataset.name} has no questions")
    index, build_s = eval_index(dataset, cfg, progress)
    if not cfg.no_llm and llm is None:
        from ragsieve.llm import get_llm

        llm = get_llm(cfg.llm, **cfg.llm_options)
    questions = list(dataset.questions)
    filters = [_question_filter(dataset, q) for q in questions]
    summary: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    for spec in cfg.methods:
        per_q, seconds = _method_rows(spec, index, questions, filters, llm, cfg, progress)
        summary[spec.label] = _method_summary(per_q, seconds, llm)
        rows.extend(per_q)
    return {
        "dataset": dataset.name,
        "n_questions": len(questions),
        "budget": cfg.budget,
        "k": cfg.k,
        "llm": None if cfg.no_llm else cfg.llm,
        "index": {"path": str(index.path), **index.stats(), "build_seconds": round(build_s, 2)},
        "methods": summary,
        "per_question": rows,
    }


#: Questions retrieved together by one method call.
_BATCH = 32


def _method_rows(
    spec: MethodSpec,
    index: Index,
    questions: list[EvalQuestion],
    filters: list[list[str] | None],
    llm: Any,
    cfg: EvalConfig,
    progress: Progress | None,
) -> tuple[list[dict[str, Any]], float]:
    """One method's per-question rows and the seconds they took (the method built): the
    questions retrieved in batches, each answered by ``llm`` (when there is one) and scored;
    ``progress`` hears each batch, and each question when answering (the slow part)."""
    method = build_method(spec, index, **_run_options(cfg))
    spans = method.gives_spans()
    texts = [q.question for q in questions]
    per_q: list[dict[str, Any]] = []
    t_method = time.perf_counter()
    if progress:
        progress(spec.label, 0, len(questions))
    for start in range(0, len(questions), _BATCH):
        chunk_q = questions[start : start + _BATCH]
        retrievals = method.retrieve(texts[start : start + _BATCH], filters[start : start + _BATCH])
        for q, r in zip(chunk_q, retrievals, strict=True):
            per_q.append(_question_row(spec, method, q, r, llm, cfg, spans))
            if progress and llm is not None:  # answering is the slow part: per question
                progress(spec.label, len(per_q), len(questions))
        if progress:
            progress(spec.label, min(start + _BATCH, len(questions)), len(questions))
    return per_q, time.perf_counter() - t_method


def _question_row(
    spec: MethodSpec,
    method: Any,
    q: EvalQuestion,
    r: Any,
    llm: Any,
    cfg: EvalConfig,
    spans: bool,
) -> dict[str, Any]:
    """One question's row: its retrieval ``r`` answered by ``llm`` (when there is one), with
    the context, ranked-list, answer and span metrics, the chunks selected and the timings."""
    # With an LLM the method may re-select while answering (SAGE's self-feedback),
    # so context metrics are taken on the context of the answer it returns.
    ans = None
    if llm is not None:
        ans = method.answer(
            r,
            llm,
            label=spec.label,
            options=list(q.options) if q.options else None,
            max_tokens=cfg.max_tokens,
            price_in_per_m=cfg.price_in_per_m,
            price_out_per_m=cfg.price_out_per_m,
            total_budget=cfg.total_budget,
        )
    context = ans.context if ans is not None else r.context
    ctx_texts = [s.chunk.text for s in context.chunks]
    row: dict[str, Any] = {"id": q.id, "method": spec.label}
    row.update(context_metrics(ctx_texts, q))
    row.update(ranked_metrics([s.chunk.text for s in r.candidates], q.evidence))
    row["n_chunks"] = len(context.chunks)
    t = dict(r.timings)
    if ans is not None:
        _add_answer(row, ans, q, cfg)
        t = dict(ans.timings)
    if spans:
        # the span as the answer line shows it (its Markdown markup off)
        row.update(span_metrics(plain(r.span.text) if r.span is not None else "", q))
        row["span_score"] = r.span.score if r.span is not None else None
        # the product's line without a reader (cheap): its abstention and confidence
        line = ans if ans is not None else method.answer(r, None, label=spec.label)
        row.update(abstained=line.abstained, confidence=line.confidence)
    row["selected"] = [s.chunk.id for s in context.chunks]
    row["timings"] = t
    return row


def _add_answer(row: dict[str, Any], ans: Any, q: EvalQuestion, cfg: EvalConfig) -> None:
    """The LLM's answer ``ans`` scored into ``row``: the answer line and the reply alone, the
    tokens, calls and cost, the abstention and the feedback rounds."""
    row.update(answer_metrics(ans.text, q))
    row["prediction"] = ans.text
    if ans.reply is not None:  # the reply alone, beside the answer line
        # scored once when it is the line (naive, other readers, yes/no)
        same = ans.reply == ans.text
        reply = row if same else answer_metrics(ans.reply, q)
        row.update(reply=ans.reply)
        row.update(reply_em=reply.get("em"), reply_f1=reply.get("f1"))
    if ans.line is not None or ans.reply is not None:  # an abstention before any LLM too
        row["answer_from"] = ans.line.kind if ans.line is not None else "reply"
    row["prompt_tokens"] = ans.usage.prompt_tokens
    row["completion_tokens"] = ans.usage.completion_tokens
    asked = ans.trace.get("llm")  # None: no LLM was asked (an abstention)
    row["llm_calls"] = asked.get("calls", 1) if asked else 0
    row.update(abstained=ans.abstained, confidence=ans.confidence)
    row["cost"] = llm_cost(
        ans.usage.prompt_tokens,
        ans.usage.completion_tokens,
        cfg.price_in_per_m,
        cfg.price_out_per_m,
    )
    if "feedback" in ans.trace:
        row["feedback_rounds"] = len(ans.trace["feedback"]["rounds"])


def _method_summary(per_q: list[dict[str, Any]], seconds: float, llm: Any) -> dict[str, Any]:
    """One method's aggregate over its rows: the mean metrics, the seconds it took, the
    latency of each stage and, with an LLM, the quality metric and cost-efficiency."""
    agg = aggregate(per_q)
    agg["seconds"] = seconds
    lat = latency_summary([row["timings"] for row in per_q])
    agg["latency"] = lat
    agg["latency_p50_total"] = sum(v["p50"] for v in lat.values())
    if llm is not None:
        quality = _quality(agg)
        if quality is not None and agg.get("cost"):
            agg["quality_metric"] = quality[0]
            agg["cost_efficiency"] = cost_efficiency(quality[1], agg["cost"])
    return agg


def span_metrics(span: str, q: EvalQuestion) -> dict[str, Any]:
    """The answer span scored as an answer: ``span_em`` and ``span_f1`` (None without gold
    answers; nothing for a multiple-choice question, which a span does not answer), and the
    span itself as ``span_prediction`` (``""``: no span)."""
    m = answer_metrics(span, q)
    if "f1" not in m:
        return {}
    return {"span_prediction": span, "span_em": m["em"], "span_f1": m["f1"]}


def _quality(agg: dict[str, Any]) -> tuple[str, float] | None:
    for key in ("accuracy", "f1", "rouge_l"):
        if key in agg:
            return key, float(agg[key])
    return None


def markdown_table(results: dict[str, Any]) -> str:
    """The summary as a markdown table (one row per method)."""
    methods = results["methods"]
    cols = [c for c in TABLE_COLUMNS if any(c in m for m in methods.values())]
    head = ["method", *cols, "p50 s/q"]
    lines = [
        f"{results['dataset']}: {results['n_questions']} questions, k={results['k']}, "
        f"budget={results['budget']}, llm={results['llm']}",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" for _ in head) + "|",
    ]
    for name, m in methods.items():
        cells = [name]
        for c in cols:
            v = m.get(c)
            if v is None:
                cells.append("-")
            elif c in ("context_tokens", "prompt_tokens"):
                cells.append(f"{v:.0f}")
            elif c in ("cost",):
                cells.append(f"{v:.2e}")
            elif c == "cost_efficiency":
                cells.append(f"{v:.1f}")
            else:
                cells.append(f"{v:.3f}")
        cells.append(f"{m.get('latency_p50_total', 0):.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> Path:
    """Quality vs context tokens, one point per method (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = results["methods"]
    panels = [
        k
        for k in ("answer_recall", "evidence_recall", "ie", "f1", "accuracy", "rouge_l")
        if any(m.get(k) is not None for m in methods.values())
    ][:4] or ["answer_recall"]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, key in zip(axes[0], panels, strict=False):
        for name, m in methods.items():
            if m.get(key) is None:
                continue
            ax.scatter(m.get("context_tokens", 0), m[key], s=40)
            ax.annotate(
                name,
                (m.get("context_tokens", 0), m[key]),
                fontsize=8,
                xytext=(4, 4),
                textcoords="offset points",
            )
        ax.set_xlabel("mean context tokens")
        ax.set_ylabel(key)
        ax.grid(alpha=0.3)
    fig.suptitle(f"{results['dataset']} ({results['n_questions']} questions)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_outputs(results: dict[str, Any], out: Path) -> dict[str, Path]:
    """Write results.json, per_question.jsonl, table.md and the plot into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    summary = {k: v for k, v in results.items() if k != "per_question"}
    paths = {
        "results": out / "results.json",
        "per_question": out / "per_question.jsonl",
        "table": out / "table.md",
        "plot": out / "quality_vs_tokens.png",
    }
    paths["results"].write_text(json.dumps(summary, indent=2, default=float), encoding="utf-8")
    with open(paths["per_question"], "w", encoding="utf-8") as f:
        for row in results["per_question"]:
            f.write(json.dumps(row, ensure_ascii=False, default=float) + "\n")
    paths["table"].write_text(markdown_table(results) + "\n", encoding="utf-8")
    plot(results, paths["plot"])
    return paths


def select_dataset(
    name: str | None,
    data: Path | None,
    corpus: Path | None,
    limit: int | None,
    pool: bool,
    data_dir: Path | None = None,
) -> EvalDataset:
    """The dataset a CLI call names: a built-in ``name`` or a generic ``data`` (+ ``corpus``)."""
    from ragsieve.evaluate.datasets import load_dataset
    from ragsieve.evaluate.schema import load_generic

    if (name is None) == (data is None):
        raise ConfigError("give exactly one of --dataset NAME or --data QUESTIONS.jsonl")
    if name is not None:
        if corpus is not None:
            raise ConfigError("--corpus goes with --data, not with --dataset")
        ds = load_dataset(name, data_dir=data_dir, limit=limit)
    else:
        assert data is not None
        ds = load_generic(data, corpus, limit=limit)
    if pool:
        ds = ds.pooled()
    return ds
