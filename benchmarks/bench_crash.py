"""Crash safety: SIGKILL ``ragsieve index`` / ``ragsieve rm`` at each named point of a commit.

For every fault point (``RAGSIEVE_FAULT``, see ``ragsieve.index.store.FAULT_POINTS``) and trial,
a fresh copy of a small sentence-table index gets one write (add new documents, update a
changed document, or remove a document, in turn); the writer kills itself at the point. Then:

* the index opens, and its tables agree with each other and with the manifest's counts;
* its documents (ids and content hashes) and counts are exactly the old or the new state;
* search works (dense, BM25 and the sentence table);
* rerunning the same command without the fault completes and gives the new state.

``corrupt`` counts trials where any of the first three failed, ``lost`` trials where the rerun
did not reach the new state. Prints a Markdown table.

    .venv/bin/python -m benchmarks bench_crash --trials 10
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common import run_measured

from ragsieve.index import Index
from ragsieve.index.store import FAULT_ENV, FAULT_POINTS, sha256_text

EMBEDDER = "minilm-onnx"
SCENARIOS = ("add", "update", "remove")


def cli(*args: str, fault: str | None = None) -> tuple[int, str]:
    """``ragsieve ARGS`` in a subprocess, killed at ``fault`` (``point@nth``) when given: its
    exit code (-9 when the fault fired) and its output."""
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    env.update({FAULT_ENV: fault} if fault else {})
    code, _, _, out = run_measured([sys.executable, "-m", "ragsieve.cli", *args], env)
    return code, out


def write_doc(path: Path, tag: str, i: int) -> None:
    path.write_text(
        f"{tag} note {i}. The {tag} lighthouse number {i} stands on a rocky cape.\n\n"
        f"Its keeper {tag}-{i} logs the ships that pass at night.\n",
        encoding="utf-8",
    )


def build_base(root: Path, n_docs: int = 6) -> tuple[Path, Path]:
    corpus = root / "corpus"
    corpus.mkdir()
    for i in range(n_docs):
        write_doc(corpus / f"base{i}.md", "base", i)
    index = root / "base-index"
    code, out = cli(
        "index", str(corpus), "--index", str(index), "--sentences", "--embedder", EMBEDDER
    )
    if code != 0:
        raise SystemExit(f"building the base index failed: {out}")
    return corpus, index


def state(index: Path) -> dict[str, Any]:
    """The committed state, after checking the tables agree; raises AssertionError if not."""
    idx = Index.open(index)
    hashes = idx.document_hashes()
    docs = idx.documents_table.to_table().select(["doc_id", "n_chunks"])
    n_of = dict(zip(docs["doc_id"].to_pylist(), docs["n_chunks"].to_pylist(), strict=True))
    chunks = idx.chunks_table.to_table().select(["id", "doc_id"])
    ids = chunks["id"].to_pylist()
    assert len(ids) == len(set(ids)), "duplicated chunks"
    assert Counter(chunks["doc_id"].to_pylist()) == {d: n for d, n in n_of.items() if n}, (
        "chunks and documents disagree"
    )
    st = idx.stats()
    assert st["documents"] == len(hashes) and st["chunks"] == len(ids), "manifest counts differ"
    if idx.has_sentences:
        sents = set(idx.sentences_table.to_table()["doc_id"].to_pylist())
        assert sents == {d for d, n in n_of.items() if n}, "sentences and documents disagree"
    return {"hashes": hashes, "documents": st["documents"], "chunks": st["chunks"]}


def search_works(index: Path, embedder: Any) -> bool:
    idx = Index.open(index)
    q = embedder.embed(["lighthouse keeper logs ships"])
    dense = idx.dense_search(q, 3)[0]
    bm25 = idx.bm25_search("lighthouse keeper", 3)
    sents = idx.sentence_search(q[0], 3)
    return bool(dense) and bool(bm25) and sents.num_rows > 0


def trial(
    base_corpus: Path, base_index: Path, work: Path, point: str, n: int, embedder: Any
) -> str:
    """One trial; returns old / new / corrupt / lost / not-reached."""
    saved = {p: p.read_text(encoding="utf-8") for p in base_corpus.iterdir()}
    try:
        return _trial(base_corpus, base_index, work, point, n, embedder)
    finally:
        for p, text in saved.items():
            p.write_text(text, encoding="utf-8")


def _trial(
    base_corpus: Path, base_index: Path, work: Path, point: str, n: int, embedder: Any
) -> str:
    index = work / "index"
    shutil.copytree(base_index, index)
    old = state(index)
    scenario = SCENARIOS[n % len(SCENARIOS)]
    nth = 1
    if scenario == "add":
        folder = work / "new"
        folder.mkdir()
        for i in range(3):
            write_doc(folder / f"new{i}.md", f"new{n}", i)
        cmd = ["index", str(folder), "--index", str(index)]
    elif scenario == "update":
        # the base corpus itself changes (document ids are paths); trial() restores it after
        doc = base_corpus / f"base{n % 6}.md"
        write_doc(doc, f"changed{n}", 0)
        # the update first deletes the old rows, then writes the new ones: kill after either
        nth = 1 + (n // len(SCENARIOS)) % 2 if point.endswith("_write") else 1
        cmd = ["index", str(base_corpus), "--index", str(index)]
    else:
        victim = str((base_corpus / f"base{n % 6}.md").resolve())
        cmd = ["rm", victim, "--index", str(index)]
    new_hashes = dict(old["hashes"])
    if scenario == "add":
        for p in sorted((work / "new").iterdir()):
            new_hashes[str(p.resolve())] = sha256_text(p.read_text(encoding="utf-8"))
    elif scenario == "update":
        new_hashes[str(doc.resolve())] = sha256_text(doc.read_text(encoding="utf-8"))
    else:
        new_hashes.pop(victim)
    code, _ = cli(*cmd, fault=f"{point}@{nth}")
    if code != -9:
        return "not-reached"
    try:
        got = state(index)
        if not search_works(index, embedder):
            return "corrupt"
    except Exception:
        return "corrupt"
    if got["hashes"] == old["hashes"] and got["chunks"] == old["chunks"]:
        outcome = "old"
    elif got["hashes"] == new_hashes:
        outcome = "new"
    else:
        return "corrupt"
    code, out = cli(*cmd)
    done = code == 0 or (scenario == "remove" and "no such document" in out)
    try:
        final = state(index)["hashes"]
    except Exception:
        return "corrupt"
    if not done or final != new_hashes or not search_works(index, embedder):
        return "lost"
    return outcome


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10, help="Trials per fault point.")
    ap.add_argument("--points", default=",".join(FAULT_POINTS))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from ragsieve.embed import get_embedder

    embedder = get_embedder(EMBEDDER)
    rows = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-crash-") as tmp:
        root = Path(tmp)
        corpus, base = build_base(root)
        for point in args.points.split(","):
            counts: Counter[str] = Counter()
            for n in range(args.trials):
                work = root / f"{point}-{n}"
                work.mkdir()
                counts[trial(corpus, base, work, point, n, embedder)] += 1
                shutil.rmtree(work)
            rows.append({"point": point, "trials": args.trials, **counts})
            print(f"{point}: {dict(counts)}", file=sys.stderr, flush=True)
    secs = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"rows": rows, "seconds": round(secs, 1)}, indent=2))
        return
    cols = ["old", "new", "corrupt", "lost", "not-reached"]
    print("| point | trials | old state | new state | corrupt | lost | not reached |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['point']} | {r['trials']} | " + " | ".join(str(r.get(c, 0)) for c in cols) + " |"
        )
    print(f"\n{sum(r['trials'] for r in rows)} trials in {secs:.0f} s")


if __name__ == "__main__":
    main()
