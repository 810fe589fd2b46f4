"""Where users wait (issue 19): cold commands, indexing throughput, int8/fp32 agreement, memory.

    .venv/bin/python -m benchmarks bench_fast agree   # int8 ONNX vs fp32 vectors and links
    .venv/bin/python -m benchmarks bench_fast cold --baseline-src /tmp/before/src
    .venv/bin/python -m benchmarks bench_fast index --baseline-src /tmp/before/src
    .venv/bin/python -m benchmarks bench_fast stages  # seconds per sentence stage, warm
    .venv/bin/python -m benchmarks bench_fast memory

Every command is a real ``ragsieve`` subprocess, timed wall to wall, with its peak RSS from
``wait4``. ``--baseline-src`` names the ``src`` folder of an older checkout (``git worktree
add /tmp/before afbe93e``): the same commands then also run on that code with the same
interpreter (``PYTHONPATH`` first), alternating with the current code, so that the printed
ratios come from one run at one load. Results go to ``benchmarks/results/fast.json.gz`` (every
run kept, gzipped).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    DATA,
    REPO,
    RESULTS,
    code_env,
    need_data,
    read_json,
    run_measured,
    wait_healthy,
    write_text,
)

CORPUS = REPO / "examples" / "corpus"
RAGSIEVE = [sys.executable, "-m", "ragsieve.cli"]
QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run ``argv``: wall seconds, its own peak RSS in MB, and its output; exits if it fails."""
    code, wall, rss, text = run_measured(argv, env)
    if code != 0:
        raise SystemExit(f"{' '.join(argv[2:])} exited {code}: {text.strip()[-300:]}")
    return wall, rss, text


def ragsieve(args: list[str], src: str | None = None) -> dict[str, Any]:
    """``ragsieve ARGS`` as a subprocess on the current code, or on ``src``."""
    env = code_env(src)
    wall, rss, out = _timed([*RAGSIEVE, *args], env)
    return {"seconds": round(wall, 3), "rss_mb": round(rss, 1), "out": out}


def _codes(baseline: str | None) -> list[tuple[str, str | None]]:
    return [("current", None), *([("baseline", baseline)] if baseline else [])]


# ----------------------------------------------------------------------------- cold
def cold(baseline: str | None, repeat: int) -> dict[str, Any]:
    """Cold ``--help``, ``search``, ``ask`` and ``serve`` readiness on the sample corpus."""
    tmp = Path(tempfile.mkdtemp(prefix="ragsieve-cold-"))
    out: dict[str, Any] = {"load_before": os.getloadavg()[0], "rows": {}}
    for name, src in _codes(baseline):
        idx = tmp / f"{name}-index"
        ragsieve(["index", str(CORPUS), "--index", str(idx)], src)
        out["rows"].setdefault(name, {})["index_dir"] = str(idx)
    commands = {
        "--help": lambda i: ["--help"],
        "search": lambda i: ["search", "hieroglyphs", "--index", i, "--k", "2"],
        "ask (local LLM)": lambda i: ["ask", QUESTION, "--index", i, "--k", "2"],
    }
    for label, make in commands.items():
        for name, src in _codes(baseline):
            row = out["rows"][name]
            times, rss = [], []
            for _ in range(repeat):  # alternate codes run by run would mix caches; same order
                r = ragsieve(make(row["index_dir"]), src)
                times.append(r["seconds"])
                rss.append(r["rss_mb"])
            row[label] = {"median_s": statistics.median(times), "runs": times, "rss_mb": max(rss)}
            print(f"{name:8s} {label:16s} median {statistics.median(times):6.2f} s  {times}")
    for name, src in _codes(baseline):
        row = out["rows"][name]
        runs = [serve_ready(row["index_dir"], src) for _ in range(repeat)]
        row["serve ready"] = {
            "median_s": statistics.median(r[0] for r in runs),
            "runs": [r[0] for r in runs],
            "rss_mb": max(r[1] for r in runs),
        }
        print(f"{name:8s} serve ready      median {row['serve ready']['median_s']:6.2f} s")
    out["load_after"] = os.getloadavg()[0]
    return out


def serve_ready(index_dir: str, src: str | None) -> tuple[float, float]:
    """Seconds from ``ragsieve serve`` to a 200 on /health, and its peak RSS after one /search
    and one /ask (VmHWM)."""
    import httpx

    from ragsieve.llm.server import free_port

    env = code_env(src)
    port = free_port()
    argv = [*RAGSIEVE, "serve", "--index", index_dir, "--port", str(port), "--log-level", "error"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(proc, url, 600, poll=0.05)
        ready = time.perf_counter() - t0
        httpx.post(url + "/search", json={"query": "hieroglyphs", "k": 2}, timeout=60)
        httpx.post(url + "/ask", json={"question": QUESTION, "k": 2}, timeout=300)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        hwm = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM"))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return round(ready, 3), round(hwm / 1024, 1)


# ----------------------------------------------------------------------------- index
def hotpot_folder(dest: Path, n: int) -> tuple[Path, int]:
    """The first ``n`` distinct HotpotQA dev paragraphs (IRCoT's 500-question file), one text
    file each: titled paragraphs of 3-6 sentences, the unit of the sentence benchmarks."""
    dest.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    with open(DATA / "hotpotqa" / "hotpot_dev_subsampled500_ircot.jsonl", encoding="utf-8") as f:
        for line in f:
            for c in json.loads(line)["contexts"]:
                if c["title"] in seen or len(seen) >= n:
                    continue
                seen.add(c["title"])
                name = f"p{len(seen):05d}.md"
                (dest / name).write_text(f"# {c['title']}\n\n{c['paragraph_text']}\n")
    return dest, len(seen)


#: The builds ``index`` compares: ``sentences`` has the default (late) Pareto context,
#: ``sentences-exact`` the paper's and ``sentences-mean`` the mean of the sentence vectors.
KINDS = {
    "plain": [],
    "sentences": ["--sentences"],
    "sentences-exact": ["--sentences", "--pareto-context", "exact"],
    "sentences-mean": ["--sentences", "--pareto-context", "mean"],
}


def index_runs(
    baseline: str | None, paragraphs: int, kinds: list[str] | None = None
) -> dict[str, Any]:
    """Plain and ``--sentences`` builds of the same corpora, current code and baseline."""
    kinds = kinds or ["plain", "sentences"]
    tmp = Path(tempfile.mkdtemp(prefix="ragsieve-index-"))
    folder, n = hotpot_folder(tmp / "hotpot", paragraphs)
    corpora = {"sample (4 documents)": CORPUS, f"hotpotqa ({n} paragraphs)": folder}
    out: dict[str, Any] = {"load_before": os.getloadavg()[0], "rows": []}
    for corpus, path in corpora.items():
        for name, src in _codes(baseline):
            row: dict[str, Any] = {"corpus": corpus, "code": name}
            for kind in kinds:
                extra = KINDS[kind]
                idx = tmp / f"{name}-{kind}-{abs(hash(corpus))}"
                r = ragsieve(["index", str(path), "--index", str(idx), *extra, "--json"], src)
                info = json.loads(r["out"][r["out"].index("{") :])
                tokens = int(info["tokens_written"])
                row[kind] = {
                    "seconds": r["seconds"],
                    "tokens": tokens,
                    "tokens_per_s": round(tokens / r["seconds"], 1),
                    "rss_mb": r["rss_mb"],
                }
            line = f"{corpus:28s} {name:8s}"
            for kind in kinds:
                r = row[kind]
                r["over_plain"] = round(r["tokens_per_s"] / row["plain"]["tokens_per_s"], 3)
                line += f"  {kind} {r['seconds']:6.1f} s ({r['over_plain']:.3f} x plain)"
            out["rows"].append(row)
            print(line)
    out["raw_embedder"] = raw_embedder(folder)
    out["load_after"] = os.getloadavg()[0]
    return out


def raw_embedder(folder: Path) -> dict[str, float]:
    """The int8 embedder alone on the same paragraphs (tokens/s), for scale."""
    from ragsieve.embed import get_embedder
    from ragsieve.text import count_tokens_batch

    texts = [p.read_text() for p in sorted(folder.glob("*.md"))]
    emb = get_embedder("minilm-onnx")
    emb.embed(texts[:8])
    t0 = time.perf_counter()
    emb.embed(texts)
    s = time.perf_counter() - t0
    tokens = sum(count_tokens_batch(texts))
    print(f"raw int8 embedder on the same paragraphs: {tokens / s:.0f} tokens/s")
    return {"seconds": round(s, 2), "tokens": tokens, "tokens_per_s": round(tokens / s, 1)}


def stages(paragraphs: int) -> dict[str, Any]:
    """Where a ``--sentences`` build spends its time, in one warm process: plain, exact and
    mean builds of the same HotpotQA paragraphs, with the sentence stages' seconds
    (``AddReport.sentences``). Chunks cost what a plain build costs; the rest is the table."""
    from ragsieve.index import Index, IndexConfig
    from ragsieve.io import load_paths

    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        folder, n = hotpot_folder(tmp / "hotpot", paragraphs)
        docs = load_paths([folder]).documents
        Index.create(tmp / "warm", IndexConfig(sentences=True)).add(docs[:5])  # load models
        out: dict[str, Any] = {"paragraphs": n}
        kinds = {
            "plain": IndexConfig(),
            "sentences (late context, default)": IndexConfig(sentences=True),
            "sentences (exact context)": IndexConfig(sentences=True, pareto_context="exact"),
            "sentences (mean context)": IndexConfig(sentences=True, pareto_context="mean"),
        }
        for i, (name, cfg) in enumerate(kinds.items()):
            t0 = time.perf_counter()
            report = Index.create(tmp / f"ix{i}", cfg).add(docs)
            row: dict[str, Any] = {"seconds": round(time.perf_counter() - t0, 2)}
            if report.sentences is not None:
                st = report.sentences
                row.update(
                    sentences=st.n_sentences,
                    core=round(st.core, 2),
                    context=round(st.context, 2),
                    links=round(st.links, 2),
                )
            row["ratio_to_plain"] = round(out["plain"]["seconds"] / row["seconds"], 3) if i else 1.0
            out[name] = row
            print(name, row)
    return out


# ----------------------------------------------------------------------------- agree
def agree(paragraphs: int, questions: int) -> dict[str, Any]:
    """int8 ONNX against fp32 torch MiniLM: vector cosines, top-10 agreement of every
    index/query pairing against fp32/fp32, and the SAKI links' agreement."""
    from ragsieve.embed import get_embedder
    from ragsieve.link import get_linker
    from ragsieve.segment.base import sentences_of
    from ragsieve.types import Document

    texts, qs, docs = [], [], []
    seen: set[str] = set()
    with open(DATA / "hotpotqa" / "hotpot_dev_subsampled500_ircot.jsonl", encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            if len(qs) < questions:
                qs.append(obj["question_text"])
            for c in obj["contexts"]:
                if c["title"] not in seen and len(texts) < paragraphs:
                    seen.add(c["title"])
                    texts.append(f"{c['title']}\n{c['paragraph_text']}")
                    docs.append(Document(c["title"], c["paragraph_text"], c["title"]))
    fp, i8 = get_embedder("minilm"), get_embedder("minilm-onnx")
    d_fp, d_i8 = fp.embed(texts), i8.embed(texts)
    q_fp, q_i8 = fp.embed(qs), i8.embed(qs)
    cos = (d_fp * d_i8).sum(axis=1)

    def top(d: np.ndarray, q: np.ndarray) -> np.ndarray:
        return np.argsort(-(q @ d.T), axis=1)[:, :10]

    ref = top(d_fp, q_fp)

    def overlap(t: np.ndarray) -> float:
        return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(t, ref, strict=True)]))

    out: dict[str, Any] = {
        "paragraphs": len(texts),
        "questions": len(qs),
        "cosine_fp32_int8": {"mean": float(cos.mean()), "min": float(cos.min())},
        "recall@10 vs fp32/fp32": {
            "fp32 index, int8 queries": overlap(top(d_fp, q_i8)),
            "int8 index, int8 queries": overlap(top(d_i8, q_i8)),
            "int8 index, fp32 queries": overlap(top(d_i8, q_fp)),
        },
    }
    sents = [[s.text for s in sentences_of(d)] for d in docs[:200]]
    a = get_linker("minilm-attn").link(sents)
    b = get_linker("minilm-attn-torch").link(sents)
    ov, top1 = [], []
    for la, lb in zip(a, b, strict=True):
        for ra, rb in zip(la.top(3), lb.top(3), strict=True):
            if rb:
                ov.append(len({j for j, _ in ra} & {j for j, _ in rb}) / len(rb))
                top1.append(ra[0][0] == rb[0][0])
    out["links (200 paragraphs)"] = {
        "sentences with links": len(ov),
        "top-3 overlap": float(np.mean(ov)),
        "top-1 agreement": float(np.mean(top1)),
    }
    print(json.dumps(out, indent=2))
    return out


# ----------------------------------------------------------------------------- memory
def memory() -> dict[str, Any]:
    """Peak RSS of index, index --sentences, search, ask and serve on the sample corpus."""
    tmp = Path(tempfile.mkdtemp(prefix="ragsieve-mem-"))
    rows: dict[str, float] = {}
    for kind, extra in (("index", []), ("index --sentences", ["--sentences"])):
        rows[kind] = ragsieve(["index", str(CORPUS), "--index", str(tmp / kind), *extra])["rss_mb"]
    idx = str(tmp / "index --sentences")
    rows["search"] = ragsieve(["search", "hieroglyphs", "--index", idx])["rss_mb"]
    rows["ask (naive, local LLM)"] = ragsieve(["ask", QUESTION, "--index", idx, "--k", "2"])[
        "rss_mb"
    ]
    rows["search --method full (tagger)"] = ragsieve(
        ["search", QUESTION, "--index", idx, "--method", "full"]
    )["rss_mb"]
    rows["serve (after /search and /ask)"] = serve_ready(idx, None)[1]
    for k, v in rows.items():
        print(f"{k:34s} {v:7.1f} MB")
    return {"peak_rss_mb": rows}


# ----------------------------------------------------------------------------- main
def save(name: str, data: dict[str, Any]) -> None:
    """Add this run to ``fast.json.gz`` under ``name`` (a list: every run is kept)."""
    path = RESULTS / "fast.json.gz"
    allres = read_json(path) if path.exists() else {}
    runs = allres.get(name, [])
    runs = runs if isinstance(runs, list) else [runs]
    runs.append({**data, "when": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count()})
    allres[name] = runs
    write_text(path, json.dumps(allres, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("what", choices=["agree", "cold", "index", "stages", "memory"])
    ap.add_argument("--baseline-src", default=None, help="src folder of an older checkout")
    ap.add_argument("--repeat", type=int, default=5, help="cold: runs per command")
    ap.add_argument("--paragraphs", type=int, default=400, help="index/agree: corpus size")
    ap.add_argument("--questions", type=int, default=300, help="agree: queries")
    ap.add_argument("--kinds", default="plain,sentences", help=f"index: of {','.join(KINDS)}")
    args = ap.parse_args()
    if args.what in ("agree", "index", "stages"):
        need_data()
    if args.what == "agree":
        data = agree(args.paragraphs * 5, args.questions)
    elif args.what == "cold":
        data = cold(args.baseline_src, args.repeat)
    elif args.what == "index":
        data = index_runs(args.baseline_src, args.paragraphs, args.kinds.split(","))
    elif args.what == "stages":
        data = stages(args.paragraphs)
    else:
        data = memory()
    save(args.what, data)


if __name__ == "__main__":
    main()
