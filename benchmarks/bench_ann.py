"""Exact search against LanceDB ANN indexes at 10k-200k real chunks (issue 19, "ANN at scale").

Picks the default for large indexes: from which table size an ANN index (IVF_PQ, IVF_HNSW_SQ)
is clearly faster than LanceDB's exact flat search, and which index settings keep recall@10
(against the exact top-10 on the same vectors) at 0.95 or more. Every chunk is real text from
../shared/data (QASPER, SQuALITY, WikiText-2, MS MARCO, SQuAD, HotpotQA, MuSiQue), 20-word
windows (the texts give ~8.2M words: 200k chunks of ~100 words do not exist offline), embedded
once with ``minilm-onnx`` and cached outside the repository in ``~/.cache/ragsieve/ann-corpus/``
(rebuilt when absent); queries are 200 real questions (MS MARCO dev, QASPER validation).

Usage: .venv/bin/python -m benchmarks bench_ann [--max-chunks 200000]
       [--sizes 10000,25000,50000,100000,all] [--queries 200] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from common import DATA, REPO, need_data, pct_ms, write_text

CACHE = Path(
    os.environ.get("RAGSIEVE_ANN_CACHE", Path.home() / ".cache" / "ragsieve" / "ann-corpus")
)
SHARD = 10_000
SEED = 0


# ---------------------------------------------------------------------------- corpus


def _wikitext(raw: str) -> str:
    """Undo WikiText's tokenisation (`` @-@ ``, spaces before punctuation)."""
    s = re.sub(r" @(.)@ ", r"\1", raw)
    s = re.sub(r" ([.,;:!?)\]'])", r"\1", s)
    return re.sub(r"([(\[]) ", r"\1", s)


def iter_documents() -> Iterator[tuple[str, str]]:
    """Yield ``(source, text)`` for every real document, each source once (deduplicated)."""
    for name in ("train_papers_fulltext.jsonl", "validation_papers_fulltext.jsonl"):
        with open(DATA / "qasper" / name, encoding="utf-8") as f:
            for line in f:
                yield f"qasper/{name}", json.loads(line)["text"]
    test = json.loads((DATA / "qasper" / "qasper-test-v0.3.json").read_text(encoding="utf-8"))
    for paper in test.values():
        paras = [paper["title"], paper["abstract"]]
        paras += [p for s in paper["full_text"] for p in s["paragraphs"]]
        yield "qasper/qasper-test-v0.3.json", "\n\n".join(paras)
    stories: dict[str, str] = {}
    for split in ("train", "dev", "test"):
        with open(DATA / "squality" / f"{split}.jsonl", encoding="utf-8") as f:
            for line in f:
                obj = json.loads(line)
                stories.setdefault(obj["metadata"]["passage_id"], obj["document"])
    for text in stories.values():
        yield "squality/{train,dev,test}.jsonl", text
    article: list[str] = []
    for line in (DATA / "wikitext2" / "wiki.test.raw").read_text(encoding="utf-8").splitlines():
        if re.fullmatch(r" = [^=].* = ", line) and article:  # a new top-level article
            yield "wikitext2/wiki.test.raw", _wikitext("\n".join(article))
            article = []
        if line.strip() and not line.startswith(" = "):
            article.append(line)
    if article:
        yield "wikitext2/wiki.test.raw", _wikitext("\n".join(article))
    marco = json.loads(
        (DATA / "msmarco" / "msmarco_dev_small_eng_query_positive.json").read_text("utf-8")
    )
    for text in dict.fromkeys(p for item in marco for p in item["positive"]):
        yield "msmarco/msmarco_dev_small_eng_query_positive.json", text
    squad = json.loads((DATA / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))
    for art in squad["data"]:
        for para in art["paragraphs"]:
            yield "squad/dev-v1.1.json", para["context"]
    paras: dict[str, str] = {}
    with open(DATA / "hotpotqa" / "hotpot_dev_subsampled500_ircot.jsonl", encoding="utf-8") as f:
        for line in f:
            for c in json.loads(line)["contexts"]:
                paras.setdefault(c["title"] + "\n" + c["paragraph_text"], c["paragraph_text"])
    for text in paras.values():
        yield "hotpotqa/hotpot_dev_subsampled500_ircot.jsonl", text
    extra = DATA / "train_extra"
    hp = json.loads((extra / "hotpotqa_train100_distractor.json").read_text(encoding="utf-8"))
    hp_paras = {" ".join(sents) for q in hp for _title, sents in q["context"]}
    for text in sorted(hp_paras):
        yield "train_extra/hotpotqa_train100_distractor.json", text
    mu = json.loads((extra / "musique_train100.json").read_text(encoding="utf-8"))
    mu_paras = {p["paragraph_text"] for q in mu for p in q["paragraphs"]}
    for text in sorted(mu_paras):
        yield "train_extra/musique_train100.json", text


def build_chunks(words_per_chunk: int, min_words: int = 8) -> list[dict[str, str]]:
    """Overlap-free word windows over every document; identical chunk texts kept once."""
    seen: set[bytes] = set()
    chunks: list[dict[str, str]] = []
    for source, text in iter_documents():
        words = text.split()
        for i in range(0, len(words), words_per_chunk):
            win = words[i : i + words_per_chunk]
            if len(win) < min_words:
                continue
            chunk = " ".join(win)
            key = hashlib.blake2b(chunk.encode(), digest_size=12).digest()
            if key not in seen:
                seen.add(key)
                chunks.append({"source": source, "text": chunk})
    return chunks


def load_queries(n: int) -> list[dict[str, str]]:
    """``n`` real questions: half MS MARCO dev-small queries, half QASPER validation ones."""
    marco = json.loads(
        (DATA / "msmarco" / "msmarco_dev_small_eng_query_positive.json").read_text("utf-8")
    )
    qasper = json.loads((DATA / "qasper" / "questions_validation.json").read_text("utf-8"))
    rng = np.random.default_rng(SEED)
    a = [marco[i]["query"] for i in rng.permutation(len(marco))[: n - n // 2]]
    b_all = list(dict.fromkeys(q["question"] for q in qasper))
    b = [b_all[i] for i in rng.permutation(len(b_all))[: n // 2]]
    return [{"source": "msmarco", "text": t} for t in a] + [
        {"source": "qasper/questions_validation.json", "text": t} for t in b
    ]


# ---------------------------------------------------------------------------- embedding cache


def cache_dir(words_per_chunk: int) -> Path:
    return CACHE / f"w{words_per_chunk}"


def build_cache(
    words_per_chunk: int, n_queries: int, max_chunks: int, batch_size: int = 64
) -> Path:
    """Chunk, shuffle (fixed seed, so every prefix mixes all sources), embed and cache.

    ``texts.jsonl`` holds every chunk in shuffled order; vectors are embedded for the first
    ``max_chunks`` rows only, in shards of 10k rows kept under ``parts/``, so an interrupted
    run resumes where it stopped and a later run with a larger ``--max-chunks`` embeds only
    the missing rows.
    """
    d = cache_dir(words_per_chunk)
    d.mkdir(parents=True, exist_ok=True)
    texts_path = d / "texts.jsonl"
    if not texts_path.exists():
        chunks = build_chunks(words_per_chunk)
        order = np.random.default_rng(SEED).permutation(len(chunks))
        tmp = texts_path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for row, i in enumerate(order):
                f.write(json.dumps({"row": row, **chunks[i]}, ensure_ascii=False) + "\n")
        tmp.replace(texts_path)
    with open(texts_path, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for _, line in zip(range(max_chunks), f, strict=False)]
    parts = d / "parts"
    parts.mkdir(exist_ok=True)
    missing = [
        s for s in range(0, len(texts), SHARD) if not (parts / f"{s // SHARD:05d}.npy").exists()
    ]
    if not missing and (d / "query_vectors.npy").exists():
        return d
    from ragsieve.embed import get_embedder

    emb = get_embedder("minilm-onnx")
    if not (d / "query_vectors.npy").exists():
        queries = load_queries(n_queries)
        (d / "queries.jsonl").write_text(
            "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), encoding="utf-8"
        )
        np.save(d / "query_vectors.npy", emb.embed([q["text"] for q in queries]))
    t0 = time.perf_counter()
    done = 0
    todo = sum(min(SHARD, len(texts) - m) for m in missing)
    for s in missing:
        p = parts / f"{s // SHARD:05d}.npy"
        batch = texts[s : s + SHARD]
        np.save(p.with_suffix(".tmp.npy"), emb.embed(batch, batch_size=batch_size))
        p.with_suffix(".tmp.npy").replace(p)
        done += len(batch)
        rate = done / (time.perf_counter() - t0)
        print(
            f"embedded shard {s // SHARD} ({done}/{todo}"
            f" this run, {rate:.1f} chunks/s, load {os.getloadavg()[0]:.2f})",
            flush=True,
        )
    if done:
        elapsed = time.perf_counter() - t0
        meta = {
            "embedder": "minilm-onnx",
            "words_per_chunk": words_per_chunk,
            "embedded_last_run": done,
            "seconds_last_run": round(elapsed, 1),
            "chunks_per_s": round(done / elapsed, 1),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        }
        (d / "embed_meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return d


# ---------------------------------------------------------------------------- search benchmark


def load_cache(
    d: Path, max_chunks: int, n_queries: int
) -> tuple[list[dict], np.ndarray, np.ndarray]:
    with open(d / "texts.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(max_chunks), f, strict=False)]
    shards = [np.load(d / "parts" / f"{s // SHARD:05d}.npy") for s in range(0, len(rows), SHARD)]
    vecs = np.ascontiguousarray(np.concatenate(shards)[: len(rows)], dtype=np.float32)
    assert vecs.shape == (len(rows), 384), vecs.shape
    qvecs = np.load(d / "query_vectors.npy")[:n_queries]
    return rows, vecs, qvecs


def exact_topk(vecs: np.ndarray, qvecs: np.ndarray, k: int = 10) -> np.ndarray:
    """Ground truth: row ids of the exact cosine top-``k`` (vectors are unit length)."""
    out = np.zeros((len(qvecs), k), dtype=np.int64)
    for s in range(0, len(qvecs), 50):
        sims = qvecs[s : s + 50] @ vecs.T
        top = np.argpartition(-sims, k, axis=1)[:, :k]
        out[s : s + 50] = top
    return out


def write_table(db: object, rows: list[dict], vecs: np.ndarray, n: int) -> object:
    import pyarrow as pa

    flat = pa.array(vecs[:n].reshape(-1), type=pa.float32())
    data = pa.table(
        {
            "row": pa.array([r["row"] for r in rows[:n]], type=pa.int64()),
            "text": pa.array([r["text"] for r in rows[:n]], type=pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(flat, vecs.shape[1]),
        }
    )
    return db.create_table(f"chunks_{n}", data, mode="overwrite")  # type: ignore[attr-defined]


def run_queries(
    tbl: object,
    qvecs: np.ndarray,
    *,
    nprobes: int | None = None,
    refine: int | None = None,
    ef: int | None = None,
    bypass: bool = False,
    warmup: int = 10,
) -> tuple[np.ndarray, list[float]]:
    """Search every query (one call each, as ``ragsieve`` does); row ids and latencies (s)."""

    def one(q: np.ndarray) -> list[int]:
        b = tbl.search(q).metric("cosine").limit(10).select(["row", "text", "_distance"])  # type: ignore[attr-defined]
        if nprobes is not None:
            b = b.nprobes(nprobes)
        if refine is not None:
            b = b.refine_factor(refine)
        if ef is not None:
            b = b.ef(ef)
        if bypass:
            b = b.bypass_vector_index()
        return b.to_arrow().column("row").to_pylist()

    for q in qvecs[:warmup]:
        one(q)
    ids = np.full((len(qvecs), 10), -1, dtype=np.int64)
    lat: list[float] = []
    for i, q in enumerate(qvecs):
        t = time.perf_counter()
        got = one(q)
        lat.append(time.perf_counter() - t)
        ids[i, : len(got)] = got
    return ids, lat


def recall_at_10(found: np.ndarray, truth: np.ndarray) -> float:
    hits = [len(set(f.tolist()) & set(t.tolist())) for f, t in zip(found, truth, strict=True)]
    return float(np.mean(hits) / truth.shape[1])


def ivf_partitions(n: int) -> int:
    """IVF_PQ partitions: about sqrt(N) (at least 16)."""
    return max(16, round(n**0.5))


def hnsw_partitions(n: int) -> int:
    """IVF_HNSW_SQ partitions: few and large, each one an HNSW graph (about sqrt(N) / 16)."""
    return max(1, round(n**0.5 / 16))


def bench_size(
    db: object, rows: list[dict], vecs: np.ndarray, qvecs: np.ndarray, n: int, quick: bool
) -> list[dict]:
    from lancedb.index import IvfHnswSq, IvfPq

    out: list[dict] = []
    truth = exact_topk(vecs[:n], qvecs)

    def record(
        method: str, params: dict, build_s: float | None, ids: np.ndarray, lat: list
    ) -> None:
        r = {
            "n": n,
            "method": method,
            "params": params,
            "build_s": None if build_s is None else round(build_s, 2),
            "recall_at_10": round(recall_at_10(ids, truth), 4),
            "p50_ms": round(pct_ms(lat, 50), 2),
            "p95_ms": round(pct_ms(lat, 95), 2),
            "loadavg": [round(x, 2) for x in os.getloadavg()],
        }
        out.append(r)
        print(json.dumps(r), flush=True)

    t = time.perf_counter()
    tbl = write_table(db, rows, vecs, n)
    print(f"N={n}: table written in {time.perf_counter() - t:.1f}s", flush=True)
    ids, lat = run_queries(tbl, qvecs)
    record("exact", {"index": "none (flat scan)"}, None, ids, lat)

    p = ivf_partitions(n)
    for sub in (48,) if quick else (48, 96):
        cfg = IvfPq(distance_type="cosine", num_partitions=p, num_sub_vectors=sub)
        t = time.perf_counter()
        tbl.create_index("vector", config=cfg, replace=True)  # type: ignore[attr-defined]
        build = time.perf_counter() - t
        for nprobes in (20, 40, 80):
            for refine in (None, 10, 30):
                ids, lat = run_queries(tbl, qvecs, nprobes=nprobes, refine=refine)
                params = {
                    "num_partitions": p,
                    "num_sub_vectors": sub,
                    "num_bits": 8,
                    "nprobes": nprobes,
                    "refine_factor": refine,
                }
                record("IVF_PQ", params, build, ids, lat)

    hp = hnsw_partitions(n)
    cfg = IvfHnswSq(distance_type="cosine", num_partitions=hp, m=20, ef_construction=300)
    t = time.perf_counter()
    tbl.create_index("vector", config=cfg, replace=True)  # type: ignore[attr-defined]
    build = time.perf_counter() - t
    for nprobes in (4, 8, 16):  # lance searches every partition when nprobes > partitions
        for ef in (50, 150):
            ids, lat = run_queries(tbl, qvecs, nprobes=nprobes, ef=ef)
            params = {"num_partitions": hp, "m": 20, "ef_construction": 300}
            params |= {"nprobes": nprobes, "ef": ef}
            record("IVF_HNSW_SQ", params, build, ids, lat)
    return out


# ---------------------------------------------------------------------------- report


def config_key(r: dict) -> str:
    """One ANN setting across sizes (partition counts follow the size rule)."""
    p = {k: v for k, v in r["params"].items() if k != "num_partitions"}
    return r["method"] + " " + ", ".join(f"{k}={v}" for k, v in p.items())


def choose_default(results: list[dict], min_recall: float = 0.95, speedup: float = 2.0) -> dict:
    """Fastest ANN setting with recall@10 >= ``min_recall`` at the largest size measured, and
    the smallest size from which it is ``speedup`` times faster (p50) than exact search."""
    sizes = sorted({r["n"] for r in results})
    big = sizes[-1]
    exact = {r["n"]: r for r in results if r["method"] == "exact"}
    by_key: dict[str, dict[int, dict]] = {}
    for r in results:
        if r["method"] != "exact":
            by_key.setdefault(config_key(r), {})[r["n"]] = r
    ok = [
        k
        for k, per in by_key.items()
        if all(per[n]["recall_at_10"] >= min_recall for n in per) and big in per
    ]
    if not ok:
        return {"error": f"no ANN setting reached recall@10 >= {min_recall} at every size"}
    best = min(ok, key=lambda k: by_key[k][big]["p50_ms"])
    per = by_key[best]
    threshold = next(
        (n for n in sizes if n in per and per[n]["p50_ms"] * speedup <= exact[n]["p50_ms"]), None
    )
    return {
        "setting": best,
        "method": per[big]["method"],
        "params_at_largest": per[big]["params"],
        "threshold_n": threshold,
        "rule": f"ANN when the table holds >= {threshold} chunks, exact below",
        "criteria": f"recall@10 >= {min_recall} at every size; p50 at least {speedup}x below exact",
        "per_size": {
            n: {
                "ann_p50_ms": per[n]["p50_ms"],
                "exact_p50_ms": exact[n]["p50_ms"],
                "speedup_p50": round(exact[n]["p50_ms"] / per[n]["p50_ms"], 2),
                "recall_at_10": per[n]["recall_at_10"],
            }
            for n in sizes
            if n in per
        },
    }


def fmt_params(p: dict) -> str:
    return ", ".join(f"{k}={v}" if k != "index" else str(v) for k, v in p.items())


def write_markdown(path: Path, report: dict) -> None:
    d = report["default"]
    lines = [
        "# Exact search vs LanceDB ANN indexes (issue 19)",
        "",
        f"Command: `{report['command']}`",
        "",
        f"Machine: {report['machine']}. Corpus: {report['corpus']['chunks']:,} chunks of "
        f"{report['corpus']['words_per_chunk']} words (real text, sources in `ann.json.gz`), "
        f"{report['queries']['n']} real queries, `minilm-onnx` vectors (384-d). "
        "Recall@10 is against the exact cosine top-10 (NumPy) on the same vectors; latency is "
        "one `tbl.search(q).metric('cosine').limit(10).select(['row', 'text', '_distance'])"
        ".to_arrow()` call per query, after 10 warm-up queries.",
        "",
        f"**Default:** {d.get('rule')}; setting `{d.get('setting')}`, "
        "num_partitions = round(sqrt(N)) for IVF_PQ, round(sqrt(N)/16) for IVF_HNSW_SQ.",
        "",
        "| N | method | params | build s | recall@10 | p50 ms | p95 ms |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in report["results"]:
        build = "-" if r["build_s"] is None else f"{r['build_s']:.1f}"
        lines.append(
            f"| {r['n']:,} | {r['method']} | {fmt_params(r['params'])} | {build} | "
            f"{r['recall_at_10']:.3f} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} |"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def plot(path: Path, report: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    res = report["results"]
    key = report["default"].get("setting")
    exact = sorted((r["n"], r["p50_ms"], r["p95_ms"]) for r in res if r["method"] == "exact")
    ann = sorted(
        (r["n"], r["p50_ms"], r["p95_ms"], r["recall_at_10"]) for r in res if config_key(r) == key
    )
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    ex_n, an_n = [x[0] for x in exact], [x[0] for x in ann]
    a.plot(ex_n, [x[1] for x in exact], "o-", color="C0", label="exact flat scan, p50")
    a.plot(ex_n, [x[2] for x in exact], "o--", color="C0", alpha=0.4, label="exact, p95")
    a.plot(an_n, [x[1] for x in ann], "s-", color="C1", label="chosen ANN, p50")
    a.plot(an_n, [x[2] for x in ann], "s--", color="C1", alpha=0.4, label="chosen ANN, p95")
    a.set_xscale("log")
    a.set_yscale("log")
    a.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    a.set_xlabel("chunks in table (N)")
    a.set_ylabel("latency per query (ms)")
    a.set_title("Search latency, top-10, cosine")
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=8)
    for method, marker, c in (("IVF_PQ", ".", "C2"), ("IVF_HNSW_SQ", "x", "C3")):
        pts = [(r["n"], r["recall_at_10"]) for r in res if r["method"] == method]
        b.scatter(*zip(*pts, strict=True), marker=marker, c=c, alpha=0.3, label=f"{method}, all")
    b.plot([x[0] for x in ann], [x[3] for x in ann], "s-", color="C1", label="chosen ANN")
    b.axhline(0.95, color="grey", ls=":", label="0.95")
    b.set_xscale("log")
    b.set_xlabel("chunks in table (N)")
    b.set_ylabel("recall@10 vs exact")
    b.set_title("Recall@10 against exact top-10")
    b.grid(True, which="both", alpha=0.3)
    b.legend(fontsize=8)
    fig.suptitle(f"chosen: {key}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


# ---------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-chunks", type=int, default=200_000, help="use at most this many")
    ap.add_argument("--sizes", default="10000,25000,50000,100000,all")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    ap.add_argument("--words-per-chunk", type=int, default=20)
    ap.add_argument("--plot", type=Path, default=REPO / "docs" / "scale-out-ann.png")
    ap.add_argument("--embed-only", action="store_true", help="build the vector cache and stop")
    ap.add_argument("--quick", action="store_true", help="fewer IVF_PQ settings (smoke test)")
    args = ap.parse_args()
    need_data()

    t_start = time.perf_counter()
    d = build_cache(args.words_per_chunk, max(args.queries, 200), args.max_chunks)
    if args.embed_only:
        print(f"cache ready in {d}")
        return
    rows, vecs, qvecs = load_cache(d, args.max_chunks, args.queries)
    sizes = sorted(
        {len(rows) if s == "all" else min(int(s), len(rows)) for s in args.sizes.split(",")}
    )
    import lancedb

    work = Path(tempfile.mkdtemp(prefix="ann-", dir=CACHE))
    load_start = os.getloadavg()
    results: list[dict] = []
    try:
        db = lancedb.connect(str(work))
        for n in sizes:
            results += bench_size(db, rows, vecs, qvecs, n, args.quick)
            db.drop_table(f"chunks_{n}")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    sources: dict[str, int] = {}
    for r in rows:
        sources[r["source"]] = sources.get(r["source"], 0) + 1
    qsources: dict[str, int] = {}
    with open(d / "queries.jsonl", encoding="utf-8") as f:
        for line in list(f)[: args.queries]:
            s = json.loads(line)["source"]
            qsources[s] = qsources.get(s, 0) + 1
    meta_path = d / "embed_meta.json"
    report = {
        "command": " ".join(["benchmarks/bench_ann.py", *sys.argv[1:]]),
        "machine": f"{os.cpu_count()} CPU cores, shared with other jobs",
        "lancedb": __import__("lancedb").__version__,
        "pylance": __import__("lance").__version__,
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "bench_seconds": round(time.perf_counter() - t_start, 1),
        "corpus": {
            "chunks": len(rows),
            "words_per_chunk": args.words_per_chunk,
            "chunking": "overlap-free word windows per document, windows < 8 words dropped, "
            "duplicate texts dropped, shuffled (seed 0) so every prefix mixes all sources",
            "sources_data_dir_relative": sources,
            "cache": str(d),
        },
        "queries": {"n": len(qvecs), "sources": qsources},
        "embedding": json.loads(meta_path.read_text()) if meta_path.exists() else None,
        "sizes": sizes,
        "results": results,
    }
    report["default"] = choose_default(results)
    args.out.mkdir(parents=True, exist_ok=True)
    write_text(args.out / "ann.json.gz", json.dumps(report, indent=2) + "\n")
    write_markdown(args.out / "ann.md", report)
    plot(args.plot, report)
    print(json.dumps(report["default"], indent=2))


if __name__ == "__main__":
    main()
