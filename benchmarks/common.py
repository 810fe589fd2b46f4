"""What every benchmark shares: where data and results live, the evaluation sets and pools,
paired bootstrap intervals, Markdown tables, JSON results, plots, and timing against a
baseline in the same process. Each benchmark is a short module on top of this one.

Imported as ``from common import ...``: ``python -m benchmarks NAME`` and
``python benchmarks/NAME.py`` both run a benchmark with ``benchmarks/`` first on ``sys.path``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
#: The shared benchmark files (``../shared/data``; ``RAGSIEVE_DATA`` overrides).
DATA = Path(os.environ.get("RAGSIEVE_DATA", REPO.parent / "shared" / "data"))
#: The published results; ``bench_all --quick`` points this elsewhere so a smoke pass never
#: overwrites them.
RESULTS = Path(os.environ.get("RAGSIEVE_BENCH_RESULTS", REPO / "benchmarks" / "results"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may be downloaded
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def dataset_parser(doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's argument parser, described by the first line of ``doc``, with a required
    ``--dataset`` and a ``--limit`` on its questions."""
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--limit", type=int, default=None)
    return ap


def need_data() -> None:
    """Exit with one line when the shared benchmark data is missing (a fresh clone)."""
    if not DATA.is_dir():
        sys.exit(f"skipped: benchmark data not found at {DATA} (set RAGSIEVE_DATA)")


# ----------------------------------------------------------------------------- data
#: SQuAD v1.1 dev articles the tagger never trained on, and questions taken from each.
SQUAD_ARTICLES = tuple(range(5))
SQUAD_PER_ARTICLE = 20


def questions(dataset: str, limit: int | None) -> Any:
    """An evaluation set: a built-in dataset in file order (AMOR's ``hotpotqa-sent``...), or for
    ``squad`` the first ``SQUAD_PER_ARTICLE`` questions of each held-out ``SQUAD_ARTICLES``."""
    from ragsieve.evaluate.runner import select_dataset
    from ragsieve.evaluate.schema import EvalDataset
    from ragsieve.tag.fit.data import SQUAD_HELD_OUT_ARTICLES

    if dataset != "squad":
        return select_dataset(dataset, None, None, limit, False)
    assert all(a in SQUAD_HELD_OUT_ARTICLES for a in SQUAD_ARTICLES)
    ds = select_dataset("squad", None, None, None, False)
    order = list(dict.fromkeys(q.documents[0].id for q in ds.questions))
    keep = {order[a] for a in SQUAD_ARTICLES}
    per: dict[str, int] = {}
    picked = []
    for q in ds.questions:
        doc = q.documents[0].id
        if doc in keep and per.get(doc, 0) < SQUAD_PER_ARTICLE:
            per[doc] = per.get(doc, 0) + 1
            picked.append(q)
    return EvalDataset("squad", tuple(picked[:limit] if limit else picked))


def hotpot_train_dataset() -> Any:
    """HotpotQA *train* questions with sentence gold (``train_extra``, the AMOR file's format,
    read by the same loader): a development split, disjoint from every evaluation file."""
    from ragsieve.evaluate.datasets import hotpot_sentence_dataset

    path = DATA / "train_extra" / "hotpotqa_train100_distractor.json"
    records = enumerate(json.loads(path.read_text()), start=1)
    return hotpot_sentence_dataset(path, "hotpotqa-train-sent", records)


def qasper_papers(name: str, limit: int | None = None) -> list[Any]:
    """QASPER full-text papers (``validation_papers_fulltext.jsonl``...) as Documents."""
    from ragsieve.types import Document

    docs = []
    with open(DATA / "qasper" / name, encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            docs.append(Document(obj["paper_id"], obj["text"], obj["text"].split("\n")[0]))
            if limit and len(docs) >= limit:
                break
    return docs


def amor_pools(n: int | None = None) -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """AMOR's HotpotQA dev questions with their 10 paragraphs as (title, sentences) pools."""
    from ragsieve.data import find_data_dir

    path = find_data_dir() / "hotpotqa" / "hotpot_dev_sample100_amor_withretrieval.jsonl"
    rows = [json.loads(x) for x in path.open(encoding="utf-8")][:n]
    return [
        (r["question"], [(t, [s.strip() for s in ss if s.strip()]) for t, ss in r["context"]])
        for r in rows
    ]


# ----------------------------------------------------------------------------- intervals
def interval(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray | None = None,
    n: int = 10_000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """mean(a - b) (or mean(a) without ``b``) and its paired bootstrap 95% interval: ``n``
    resamples of the questions. Every benchmark's intervals come from here."""
    d = np.asarray(a, dtype=float) - (0.0 if b is None else np.asarray(b, dtype=float))
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), (n, len(d)))].mean(axis=1)
    return float(d.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def paired(
    rows: dict[str, dict[str, Any]], base: dict[str, dict[str, Any]], metric: str
) -> tuple[np.ndarray, np.ndarray]:
    """The ``metric`` of each question id in both ``rows`` and ``base`` (id -> record), leaving
    out questions where either says nothing (answer recall of a yes/no question)."""
    ids = [i for i in rows if i in base and rows[i].get(metric) is not None]
    ids = [i for i in ids if base[i].get(metric) is not None]
    a = np.array([rows[i][metric] for i in ids], dtype=float)
    return a, np.array([base[i][metric] for i in ids], dtype=float)


def ci(mean: float, lo: float, hi: float) -> str:
    """``+0.012 [-0.003, +0.027]``: a difference and its interval as tables print it."""
    return f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]"


# ----------------------------------------------------------------------------- output
def md_table(
    head: Sequence[str], rows: Iterable[Sequence[Any]], title: str = "", align: str = ""
) -> list[str]:
    """A Markdown table (with an optional ``### title``) as lines; cells are str()-ed.
    ``align``: one letter a column, ``r`` right-aligned (numbers), anything else left."""
    lines = [f"### {title}", ""] if title else []
    rule = "".join("---:|" if a == "r" else "---|" for a in align.ljust(len(head), "l"))
    lines += ["| " + " | ".join(head) + " |", "|" + rule]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return lines


def fmt(v: Any, tokens: bool = False) -> str:
    """A metric cell: ``-`` for none, whole tokens, else three decimals."""
    if v is None:
        return "-"
    return f"{v:.0f}" if tokens else f"{v:.3f}"


def read_text(path: Path) -> str:
    """The text of ``path``, gunzipped when its name ends in ``.gz``: per-question rows and
    other long records are stored compressed (``benchmarks/results/README.md``)."""
    data = path.read_bytes()
    return (gzip.decompress(data) if path.name.endswith(".gz") else data).decode("utf-8")


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file, so an interrupted run never leaves
    half a file; gzipped (level 9, no name or time: the same bytes as ``gzip -9n``) when the
    name ends in ``.gz``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip.compress(data, compresslevel=9, mtime=0)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def read_json(path: Path) -> Any:
    """A JSON record, plain or ``.json.gz``."""
    return json.loads(read_text(path))


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON-lines record, plain or ``.jsonl.gz``; a folder (``ragsieve eval
    --out``, ``reader_eval``) gives its ``per_question.jsonl``, or ``.jsonl.gz`` where only that
    is there."""
    if path.is_dir():
        plain = path / "per_question.jsonl"
        path = plain if plain.is_file() else path / "per_question.jsonl.gz"
    return [json.loads(x) for x in read_text(path).splitlines() if x.strip()]


def save_json(name: str, data: Any, key: str | None = None, indent: int = 2) -> Path:
    """Write ``RESULTS/name`` (``key``: update that entry of the file's object, keeping the
    others; a name ending in ``.gz`` is stored compressed)."""
    path = RESULTS / name
    if key is not None:
        old = read_json(path) if path.is_file() else {}
        data = {**old, key: data}
    return write_text(path, json.dumps(data, indent=indent, default=float) + "\n")


def save_section(name: str, title: str, table: str, header: str = "") -> Path:
    """Replace (or add) the ``## title`` section of the Markdown file ``RESULTS/name`` (a new
    file starts with the line ``# header``)."""
    md = RESULTS / name
    text = md.read_text() if md.is_file() else f"# {header or Path(name).stem}\n"
    marker = f"\n## {title}\n"
    if marker in text:
        head, _, rest = text.partition(marker)
        text = head + (rest[rest.find("\n## ") :] if "\n## " in rest else "")
    md.write_text(text.rstrip("\n") + "\n" + marker + "\n" + table + "\n")
    return md


def scatter_plot(
    points: dict[str, tuple[float, float]], path: Path, xlabel: str, ylabel: str, title: str = ""
) -> Path:
    """One labelled point per name (e.g. context tokens against evidence recall) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name, (x, y) in points.items():
        ax.scatter(x, y)
        ax.annotate(name, (x, y), fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ----------------------------------------------------------------------------- timing
def pct_ms(xs: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of durations in seconds, in milliseconds."""
    return float(np.percentile(np.asarray(xs) * 1000, q))


def alternate(
    runs: dict[str, Callable[[], Any]], rounds: int
) -> tuple[dict[str, list[float]], dict[str, list[Any]]]:
    """Time each callable ``rounds`` times in one process, alternating the order every round
    (ABBA...), so drift of a shared machine falls on both sides: seconds and results per name.
    A speed claim is the ratio of two such lists, never an absolute time."""
    times: dict[str, list[float]] = {k: [] for k in runs}
    outs: dict[str, list[Any]] = {k: [] for k in runs}
    for r in range(rounds):
        for name in runs if r % 2 == 0 else reversed(list(runs)):
            t0 = time.perf_counter()
            outs[name].append(runs[name]())
            times[name].append(time.perf_counter() - t0)
    return times, outs


Env = dict[str, str] | None


def code_env(src: str | None = None) -> dict[str, str]:
    """This environment; with ``src`` (an older checkout's ``src`` folder) first on
    ``PYTHONPATH``, so the same command runs on that code: the baseline of a before/after."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_measured(
    argv: list[str], env: dict[str, str] | None = None
) -> tuple[int, float, float, str]:
    """Run ``argv`` to its end: exit code, wall seconds, the child's own peak RSS in MB (from
    ``wait4``: ``RUSAGE_CHILDREN`` would keep the maximum over every child so far), and its
    output (stdout and stderr together)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read()  # until the child closes it, i.e. exits
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    return code, wall, usage.ru_maxrss / 1024, out.decode(errors="replace")


def wait_healthy(
    proc: subprocess.Popen[bytes], url: str, seconds: float, log: Path | None = None, poll=0.25
) -> str:
    """``url`` once its ``/health`` answers 200 (asked every ``poll`` seconds); exits with the
    server's ``log`` if it dies or does not answer within ``seconds``."""
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return url
        except httpx.TransportError:
            pass
        time.sleep(poll)
    why = "did not become healthy" if proc.poll() is None else f"exited with {proc.returncode}"
    proc.kill()
    sys.exit(f"server {why}" + (f":\n{log.read_text()}" if log else ""))


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (for a server under test)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
