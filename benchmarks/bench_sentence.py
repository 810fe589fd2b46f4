"""Sentence-level retrieval benchmarks (ParetoRAG, SAKI-RAG; docs/sentence-retrieval.md).

    .venv/bin/python benchmarks/bench_sentence.py cost      # indexing cost per 1k sentences
    .venv/bin/python benchmarks/bench_sentence.py links     # link quality (HotpotQA, QASPER)
    .venv/bin/python benchmarks/bench_sentence.py exact     # exact vs mean Pareto context
    .venv/bin/python benchmarks/bench_sentence.py squad     # SAKI Table 5 ablation on SQuAD dev
    .venv/bin/python benchmarks/bench_sentence.py cap       # precision ceiling at budget 450
    .venv/bin/python benchmarks/bench_sentence.py equalk    # pareto vs alpha = 1, paired, k=2,3,5

Each writes ``benchmarks/results/sentence_<name>.json`` and prints a markdown table. The
HotpotQA budget and equal-k tables are plain ``ragsieve eval`` runs (commands in BENCHMARKS.md).
Sizes are modest on purpose: the machine has 2 shared cores.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
DATA = REPO.parent / "shared" / "data"


def _save(name: str, obj: Any, table: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"sentence_{name}.json").write_text(json.dumps(obj, indent=2, default=float))
    print(table)


# ----------------------------------------------------------------------------- cost
def _hotpot_docs(n_sentences: int) -> list[Any]:
    from ragsieve.evaluate.datasets import load_dataset
    from ragsieve.text import split_sentences
    from ragsieve.types import Document

    ds = load_dataset("hotpotqa-sent")
    docs, seen, total = [], set(), 0
    for q in ds.questions:
        for d in q.documents:
            if d.id in seen:
                continue
            seen.add(d.id)
            docs.append(Document(id=d.id, text=d.text, title=d.title))
            total += len(split_sentences(d.text))
            if total >= n_sentences:
                return docs
    return docs


def _squad_docs(n_sentences: int) -> list[Any]:
    from ragsieve.evaluate.datasets import load_dataset
    from ragsieve.text import split_sentences
    from ragsieve.types import Document

    ds = load_dataset("squad")
    docs, seen, total = [], set(), 0
    for q in ds.questions:
        d = q.documents[0]
        if d.id in seen:
            continue
        seen.add(d.id)
        docs.append(Document(id=d.id, text=d.text, title=d.title))
        total += len(split_sentences(d.text))
        if total >= n_sentences:
            return docs
    return docs


def cost(n: int) -> None:
    """Seconds per 1k sentences of each sentence-table stage, on HotpotQA paragraphs (short
    passages) and SQuAD articles (long documents, paragraphs of ~5 sentences)."""
    from ragsieve.embed import get_embedder
    from ragsieve.index.sentences import SentenceOptions, SentenceTimings, build_sentence_rows

    emb = get_embedder("minilm")
    emb.embed(["warm up"])
    rows, out = [], {}
    for name, docs in (("hotpotqa", _hotpot_docs(n)), ("squad", _squad_docs(n))):
        res = {}
        for label, opts in (
            ("mean", SentenceOptions(context="mean", links=0)),
            ("exact", SentenceOptions(context="exact", links=0)),
            ("links", SentenceOptions(context="mean", links=8, link_distance=8)),
        ):
            tm = SentenceTimings()
            t0 = time.perf_counter()
            build_sentence_rows(docs, {}, opts, emb, emb.dim, tm)
            wall = time.perf_counter() - t0
            k = 1000.0 / tm.n_sentences
            res[label] = {
                "n_sentences": tm.n_sentences,
                "core_s_per_1k": tm.core * k,
                "context_s_per_1k": tm.context * k,
                "links_s_per_1k": tm.links * k,
                "wall_s_per_1k": wall * k,
            }
        out[name] = res
        rows.append(
            f"| {name} ({res['mean']['n_sentences']} sentences) | "
            f"{res['mean']['core_s_per_1k']:.1f} | {res['mean']['context_s_per_1k']:.2f} | "
            f"{res['exact']['context_s_per_1k']:.1f} | {res['links']['links_s_per_1k']:.1f} |"
        )
    table = "\n".join(
        [
            "| corpus | core vectors s/1k | Pareto mean context s/1k | Pareto exact context "
            "s/1k | SentenceAttnLinker (d=8) s/1k |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )
    _save("cost", out, table)


# ----------------------------------------------------------------------------- links
def _link_hits(
    links: list[list[tuple[int, float]]], gold: set[int], group: dict[int, int] | None
) -> tuple[int, int]:
    """(gold sentences whose links contain another gold sentence, gold sentences counted);
    with ``group`` (sentence -> paragraph) only gold sentences of *other* paragraphs count."""
    hit = n = 0
    for g in gold:
        others = {o for o in gold if o != g and (group is None or group[o] != group[g])}
        if not others:
            continue
        n += 1
        hit += any(j in others for j, _ in links[g])
    return hit, n


def links_bench(n_hotpot: int, n_qasper: int, distance: int, ts: tuple[int, ...]) -> None:
    from ragsieve.evaluate.datasets import load_dataset
    from ragsieve.link import AdjacentLinker, AttnLinkerConfig, CosineLinker, SentenceAttnLinker
    from ragsieve.text import split_sentences

    attn = SentenceAttnLinker(AttnLinkerConfig(distance=distance))
    linkers = {
        "attention (MiniLM)": attn,
        "adjacent": AdjacentLinker(distance),
        f"cosine (within {distance})": CosineLinker(distance=distance),
        "cosine (whole document)": CosineLinker(),
    }
    # HotpotQA: a question's 10 paragraphs in pool order as one document; gold = its
    # supporting sentences (straight from the file: exact sentence ids).
    docs, golds, groups = [], [], []
    path = DATA / "hotpotqa" / "hotpot_dev_sample100_amor_withretrieval.jsonl"
    for line in path.read_text().splitlines()[:n_hotpot]:
        obj = json.loads(line)
        sents, gold, group, pos = [], set(), {}, {}
        for p, (title, ss) in enumerate(obj["context"]):
            for i, s in enumerate(ss):
                if s.strip():
                    pos[(title, i)] = len(sents)
                    group[len(sents)] = p
                    sents.append(s.strip())
        for fact in obj["supporting_facts"]:
            ids = fact[1] if isinstance(fact[1], list) else [fact[1]]
            gold.update(pos[(fact[0], i)] for i in ids if (fact[0], i) in pos)
        docs.append(sents)
        golds.append(gold)
        groups.append(group)
    sets = {"hotpotqa": (docs, golds, groups)}
    # QASPER: the paper as one document; gold = sentences inside the evidence paragraphs of
    # questions with at least two evidence paragraphs.
    ds = load_dataset("qasper")
    qdocs: dict[str, list[str]] = {}
    qgolds, qgroups, qdoc_of = [], [], []
    for q in ds.questions:
        if len(q.evidence) < 2:
            continue
        doc = q.documents[0]
        if doc.id not in qdocs:
            if len(qdocs) >= n_qasper:
                continue
            qdocs[doc.id] = []
        spans = split_sentences(doc.text)
        gold, group = set(), {}
        for p, ev in enumerate(q.evidence):
            at = doc.text.find(ev)
            if at < 0:
                continue
            for i, (a, b) in enumerate(spans):
                if a >= at and b <= at + len(ev):
                    gold.add(i)
                    group[i] = p
        if len({group[g] for g in gold}) >= 2:
            qdocs[doc.id] = [doc.text[a:b] for a, b in spans]
            qgolds.append(gold)
            qgroups.append(group)
            qdoc_of.append(doc.id)
    order = list(qdocs)
    sets["qasper"] = ([qdocs[d] for d in qdoc_of], qgolds, qgroups)

    out: dict[str, Any] = {"distance": distance}
    rows = []
    for set_name, (dd, gg, gr) in sets.items():
        # Link each distinct document once.
        uniq: dict[int, int] = {}
        distinct: list[list[str]] = []
        for d in dd:
            key = id(d)
            if key not in uniq:
                uniq[key] = len(distinct)
                distinct.append(d)
        res = {}
        for lname, linker in linkers.items():
            t0 = time.perf_counter()
            linked = linker.link(distinct)
            secs = time.perf_counter() - t0
            tops = {t: [linked[uniq[id(d)]].top(t) for d in dd] for t in ts}
            r: dict[str, Any] = {"seconds": secs}
            for t in ts:
                for scope, use_group in (("any", False), ("cross", True)):
                    hit = n = 0
                    for top, gold, group in zip(tops[t], gg, gr, strict=True):
                        h, c = _link_hits(top, gold, group if use_group else None)
                        hit, n = hit + h, n + c
                    r[f"{scope}@{t}"] = hit / n if n else None
                    r[f"n_{scope}"] = n
            res[lname] = r
            rows.append(
                f"| {set_name} | {lname} | "
                + " | ".join(f"{r[f'any@{t}']:.3f}" for t in ts)
                + " | "
                + " | ".join(f"{r[f'cross@{t}']:.3f}" for t in ts)
                + f" | {r['n_any']} / {r['n_cross']} |"
            )
        out[set_name] = res
        out[f"{set_name}_documents"] = len(distinct)
        out[f"{set_name}_sentences"] = sum(len(d) for d in distinct)
    del order
    head = (
        "| set | linker | "
        + " | ".join(f"any gold @{t}" for t in ts)
        + " | "
        + " | ".join(f"other-paragraph gold @{t}" for t in ts)
        + " | gold sentences counted (any / other) |"
    )
    table = "\n".join([head, "|" + "---|" * (3 + 2 * len(ts)), *rows])
    _save("links", out, table)


# ----------------------------------------------------------------------------- evals
def _run(ds: Any, methods: str, **kw: Any) -> dict[str, Any]:
    from ragsieve.evaluate.runner import EvalConfig, markdown_table, parse_methods, run_eval

    cfg = EvalConfig(methods=parse_methods(methods), no_llm=True, **kw)
    t0 = time.perf_counter()
    res = run_eval(ds, cfg)
    res["wall_seconds"] = time.perf_counter() - t0
    print(markdown_table(res), file=sys.stderr)
    return res


def exact(cache: Path | None) -> None:
    """The exact Pareto context (embed the rest of the passage) vs the default mean form."""
    from ragsieve.evaluate.datasets import load_dataset

    ds = load_dataset("hotpotqa-sent")
    methods = "pareto[budget=450],pareto[k=2],pareto[k=3],pareto[k=5]"
    out = {}
    for form in ("mean", "exact"):
        # Links are not needed here; links=0 keeps the two builds comparable and short.
        opts = {"pareto_context": form, "links": 0}
        res = _run(ds, methods, cache_dir=cache, index_options=opts)
        out[form] = {
            label: {
                k: m.get(k)
                for k in (
                    "context_tokens",
                    "answer_recall",
                    "evidence_recall",
                    "evidence_precision",
                    "ie",
                )
            }
            for label, m in res["methods"].items()
        }
        out[form]["index_build_seconds"] = res["index"]["build_seconds"]
    rows = []
    for form, res in out.items():
        for label, m in res.items():
            if label == "index_build_seconds":
                continue
            rows.append(
                f"| {form} | {label} | {m['context_tokens']:.0f} | {m['answer_recall']:.3f} | "
                f"{m['evidence_recall']:.3f} | {m['evidence_precision']:.3f} | {m['ie']:.3f} |"
            )
    table = "\n".join(
        [
            "| context form | method | context tokens | answer recall | evidence recall | "
            "evidence precision | ie |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    _save("exact", out, table)


def squad(per_article: int, cache: Path | None, methods: str) -> None:
    """SAKI-RAG Table 5 on SQuAD dev: 48 articles as long documents, two-sentence chunks,
    ``per_article`` questions drawn per article (seed 0)."""
    from ragsieve.evaluate.datasets import load_dataset
    from ragsieve.evaluate.schema import EvalDataset

    ds = load_dataset("squad")
    by_doc: dict[str, list[Any]] = {}
    for q in ds.questions:
        by_doc.setdefault(q.documents[0].id, []).append(q)
    rng = random.Random(0)
    picked = [q for qs in by_doc.values() for q in rng.sample(qs, min(per_article, len(qs)))]
    sub = EvalDataset("squad", tuple(picked))
    # SAKI reads the links, not the Pareto vectors: the mean context form skips the exact
    # form's extra embedding of every passage remainder (the longest part of this build).
    res = _run(
        sub,
        methods,
        cache_dir=cache,
        chunker="sentences",
        k=5,
        index_options={"pareto_context": "mean"},
    )
    keys = [f"{m}@{k}" for m in ("recall", "precision", "ie") for k in (1, 3, 5)]
    keys += ["recall@sum", "precision@sum", "ie@sum"]
    out = {
        "n_questions": len(picked),
        "n_articles": len(by_doc),
        "index": res["index"],
        "wall_seconds": res["wall_seconds"],
        "methods": {
            label: {k: m.get(k) for k in [*keys, "context_tokens", "answer_recall", "seconds"]}
            for label, m in res["methods"].items()
        },
    }
    rows = []
    for label, m in out["methods"].items():
        cells = [f"{100 * m[f'{x}@sum']:.1f}" for x in ("recall", "precision", "ie")]
        per_k = " / ".join(f"{m[f'ie@{k}']:.3f}" for k in (1, 3, 5))
        rows.append(
            f"| {label} | " + " | ".join(cells) + f" | {per_k} | {m['context_tokens']:.0f} | "
            f"{m['seconds']:.0f} |"
        )
    table = "\n".join(
        [
            "| method | Rec. (sum @1,3,5, x100) | Pre. (sum, x100) | IE (sum, x100) | "
            "IE@1 / @3 / @5 | context tokens (k=5) | seconds |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    _save("squad", out, table)


def cap(results: Path) -> None:
    """The best evidence precision any context of the same size could have, per question:
    min(gold, n) / n for a context of n sentences, averaged (from a run's per_question.jsonl)."""
    from ragsieve.evaluate.datasets import load_dataset
    from ragsieve.metrics import _context_sentences

    ds = {q.id: q for q in load_dataset("hotpotqa-sent").questions}
    rows_by_m: dict[str, list[float]] = {}
    per_q = [json.loads(x) for x in (results / "per_question.jsonl").read_text().splitlines()]
    from ragsieve.index import Index

    summary = json.loads((results / "results.json").read_text())
    idx = Index.open(summary["index"]["path"])
    texts: dict[str, str] = {}
    for row in per_q:
        ids = row["selected"]
        missing = [i for i in ids if i not in texts]
        if missing:
            for r in idx.sentence_rows(None).select(["id", "text"]).to_pylist():
                texts[r["id"]] = r["text"]
            for c in idx.chunks_table.to_table().select(["id", "text"]).to_pylist():
                texts[c["id"]] = c["text"]
        n = len(_context_sentences([texts[i] for i in ids]))
        g = len(ds[row["id"]].evidence)
        rows_by_m.setdefault(row["method"], []).append(min(g, n) / n if n else 0.0)
    out = {m: float(np.mean(v)) for m, v in rows_by_m.items()}
    table = "\n".join(
        ["| method | precision ceiling at its context size |", "|---|---|"]
        + [f"| {m} | {v:.3f} |" for m, v in out.items()]
    )
    _save("cap", out, table)


def equal_k(ks: tuple[int, ...], resamples: int, seed: int) -> None:
    """Pareto (alpha 0.8) against plain sentence vectors (alpha 1) at equal k on hotpotqa-sent,
    paired per question: the mean ie difference with a bootstrap 95% interval, and on how many
    questions the two contexts differ at all. Why: 100 questions is small, and a difference of
    0.003 in mean ie can come from a handful of questions."""
    from ragsieve.evaluate.runner import select_dataset

    ds = select_dataset("hotpotqa-sent", None, None, None, False)
    rng = random.Random(seed)
    out: dict[str, Any] = {}
    rows = []
    for k in ks:
        res = _run(ds, "pareto,pareto[alpha=1.0]", k=k)
        by: dict[str, dict[str, Any]] = {}
        for r in res["per_question"]:
            by.setdefault(r["method"], {})[r["id"]] = r
        a, b = by["pareto"], by["pareto[alpha=1.0]"]
        ids = sorted(a)
        d = np.array([a[i]["ie"] - b[i]["ie"] for i in ids])
        differ = sum(set(a[i]["selected"]) != set(b[i]["selected"]) for i in ids)
        boots = np.sort(
            [float(np.mean([d[rng.randrange(len(d))] for _ in d])) for _ in range(resamples)]
        )
        lo, hi = boots[int(0.025 * resamples)], boots[int(0.975 * resamples) - 1]
        out[str(k)] = {
            "pareto_ie": res["methods"]["pareto"]["ie"],
            "alpha1_ie": res["methods"]["pareto[alpha=1.0]"]["ie"],
            "mean_diff": float(d.mean()),
            "ci95": [float(lo), float(hi)],
            "wins": int((d > 0).sum()),
            "losses": int((d < 0).sum()),
            "contexts_differ": int(differ),
            "questions": len(ids),
        }
        o = out[str(k)]
        rows.append(
            f"| {k} | {o['pareto_ie']:.3f} | {o['alpha1_ie']:.3f} | {o['mean_diff']:+.4f} | "
            f"[{lo:+.4f}, {hi:+.4f}] | {o['wins']} / {o['losses']} | "
            f"{differ} of {len(ids)} |"
        )
    head = (
        "| k | pareto ie | alpha = 1 ie | mean paired diff | bootstrap 95% | wins / losses "
        "| contexts differ |"
    )
    _save("equalk", out, "\n".join([head, "|---|---|---|---|---|---|---|", *rows]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cost")
    c.add_argument("--sentences", type=int, default=1000)
    lk = sub.add_parser("links")
    lk.add_argument("--hotpot", type=int, default=100)
    lk.add_argument("--qasper-papers", type=int, default=30)
    lk.add_argument("--distance", type=int, default=8)
    ex = sub.add_parser("exact")
    ex.add_argument("--cache-dir", type=Path, default=None)
    sq = sub.add_parser("squad")
    sq.add_argument("--per-article", type=int, default=6)
    sq.add_argument("--cache-dir", type=Path, default=None)
    sq.add_argument(
        "--methods",
        default="naive,saki[judge=none,reranker=bi-encoder],saki,saki[per_chunk=1]",
    )
    eq = sub.add_parser("equalk")
    eq.add_argument("--resamples", type=int, default=10000)
    eq.add_argument("--seed", type=int, default=0)
    cp = sub.add_parser("cap")
    cp.add_argument("results", type=Path, help="an eval --out folder (hotpotqa-sent)")
    a = ap.parse_args()
    if a.cmd == "cost":
        cost(a.sentences)
    elif a.cmd == "links":
        links_bench(a.hotpot, a.qasper_papers, a.distance, (1, 3))
    elif a.cmd == "exact":
        exact(a.cache_dir)
    elif a.cmd == "squad":
        squad(a.per_article, a.cache_dir, a.methods)
    elif a.cmd == "equalk":
        equal_k((2, 3, 5), a.resamples, a.seed)
    else:
        cap(a.results)


if __name__ == "__main__":
    main()
