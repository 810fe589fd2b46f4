"""Training the configuration agent (Sec. VI-B, Algorithm 6) from a grid search on TRAINING data.

Data (never an evaluation set): QASPER *train* questions (their paper, in 256-token ``fixed``
chunks) and MS MARCO dev-small queries (the corpus of all positives; the evaluation harness's
``msmarco`` set is the same file, so the CARROT benchmarks do not evaluate on msmarco).
For each query the top ``N = 5`` candidates come from BM25 (a cheap first stage: embedding every
paper would cost more than the whole rest of the run on 2 cores; the agent's input is computed on
those candidates exactly as at inference).

Labels (Sec. VI-B2, "grid search over parameters"): every scorer of :data:`SCORERS` x the grid
iterations {5, 10, 20, 50} x c {1.0, 2.4, 4.0} x lambda {0, 0.1, 0.5, 1} (192 MCTS runs per
query). Utility of a run = the **Information Efficiency** of the context it selects
(``evidence_recall x evidence_precision``, :func:`ragsieve.metrics.ie`, SAKI-RAG's
Formula 8) against the query's gold evidence: the context-level utility of ``--no-llm``; the
paper's ROUGE-L of an LLM answer is not used (no LLM in the loop, see docs/carrot.md).

* the scorer label is the scorer whose best run has the highest utility; ties go to the
  earlier scorer in :data:`SCORERS` (the project default first, so the agent moves away from it
  only when another scorer is strictly better);
* the parameter label is, among that scorer's runs reaching its best utility, the one closest
  to the paper's defaults (10, 2.4, 0.1) in grid units;
* queries where every run has the same utility (usually: no evidence among the candidates)
  carry no preference and are dropped.

All 192 runs of a query reuse one benefit cache per scorer, filled by an exhaustive pass over the
325 orders of the 5 candidates, so the models run once per distinct input and the grid costs
only tree operations.

Training (Algorithm 6): pairs of queries, ``I = 0`` when they share the scorer label; loss =
contrastive ``(1 - I) d^2 + I max(0, margin - d)^2`` (margin 1.0) + cross-entropy of both + MSE of
both; Adam, lr 1e-3, batch 32, 60 epochs, fixed seed. torch on CPU.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.agent.model import PARAMS, SCORERS, AgentModel, unit_params
from ragsieve.errors import ConfigError, InputError
from ragsieve.training import Loop, RunOptions, begin, card_section, data_hashes, run_record
from ragsieve.training.loop import Tracking

GRID_ITERATIONS = (5, 10, 20, 50)
GRID_C = (1.0, 2.4, 4.0)
GRID_LAMBDA = (0.0, 0.1, 0.5, 1.0)
DEFAULTS = (10, 2.4, 0.1)


#: How the shipped agent was run (seed 13, one torch thread, CPU).
DEFAULT_RUN = RunOptions(seed=13, threads=1)


@dataclass
class AgentTrainConfig:
    """The recipe; seed, device, threads and time limit are the harness's ``RunOptions``."""

    qasper: int = 90
    msmarco: int = 90
    candidates: int = 5
    budget: int = 1024
    chunk_tokens: int = 256
    pairs: int = 6000
    epochs: int = 60
    batch_size: int = 32
    lr: float = 1e-3
    margin: float = 1.0
    embedder: str = "minilm"
    grid: dict[str, list[float]] = field(
        default_factory=lambda: {
            "iterations": list(GRID_ITERATIONS),
            "c": list(GRID_C),
            "lambda_": list(GRID_LAMBDA),
        }
    )


@dataclass
class Query:
    query: str
    candidates: list[str]
    costs: list[int]
    evidence: list[str]
    source: str


# --------------------------------------------------------------------------- data


def _qasper_queries(data_dir: Path, n: int, cfg: AgentTrainConfig, rng: random.Random) -> list:
    from ragsieve.data import QASPER_TRAIN_P, QASPER_TRAIN_Q, qasper_evidence
    from ragsieve.rerank.bm25 import BM25Index
    from ragsieve.segment.base import pack_sentences, sentences_of
    from ragsieve.types import Document

    qfile, pfile = data_dir / QASPER_TRAIN_Q, data_dir / QASPER_TRAIN_P
    if not qfile.is_file() or not pfile.is_file():
        raise InputError(f"QASPER train files not found under {data_dir}")
    questions = [q for q in json.loads(qfile.read_text(encoding="utf-8")) if qasper_evidence(q)]
    rng.shuffle(questions)
    questions = questions[: n * 2]
    wanted = {q["paper_id"] for q in questions}
    papers: dict[str, str] = {}
    with pfile.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                obj = json.loads(line)
                if obj["paper_id"] in wanted:
                    papers[obj["paper_id"]] = obj["text"]
    chunks_of: dict[str, Any] = {}
    out: list[Query] = []
    for q in questions:
        text = papers.get(q["paper_id"])
        if not text:
            continue
        if q["paper_id"] not in chunks_of:
            doc = Document(q["paper_id"], text)
            chunks = pack_sentences(doc, sentences_of(doc), cfg.chunk_tokens)
            chunks_of[q["paper_id"]] = (chunks, BM25Index([c.text for c in chunks]))
        chunks, bm = chunks_of[q["paper_id"]]
        if len(chunks) < cfg.candidates:
            continue
        top = [int(i) for i in bm.top(q["question"], cfg.candidates)]
        out.append(
            Query(
                q["question"].strip(),
                [chunks[i].text for i in top],
                [chunks[i].n_tokens for i in top],
                qasper_evidence(q),
                "qasper-train",
            )
        )
        if len(out) >= n:
            break
    return out


def _msmarco_queries(data_dir: Path, n: int, cfg: AgentTrainConfig, rng: random.Random) -> list:
    from ragsieve.data import MSMARCO, fix_mojibake
    from ragsieve.rerank.bm25 import BM25Index
    from ragsieve.text.tokens import count_tokens_batch

    path = data_dir / MSMARCO
    if not path.is_file():
        raise InputError(f"MS MARCO file not found: {path}")
    rows = [r for r in json.loads(path.read_text(encoding="utf-8")) if r.get("positive")]
    passages = [fix_mojibake(r["positive"][0].strip()) for r in rows]
    index = BM25Index(passages)
    out: list[Query] = []
    for qi in rng.sample(range(len(rows)), min(n, len(rows))):
        top = [int(i) for i in index.top(rows[qi]["query"], cfg.candidates)]
        texts = [passages[i] for i in top]
        out.append(
            Query(
                rows[qi]["query"].strip(),
                texts,
                count_tokens_batch(texts),
                [passages[qi]],
                "msmarco",
            )
        )
    return out


# --------------------------------------------------------------------------- grid search


def _scorers(query: Query, embedder: str) -> dict[str, Any]:
    """One :class:`BenefitScorer` per scorer class, sharing model-output caches (same models)."""
    from ragsieve.rerank import get_reranker
    from ragsieve.select.benefit import BenefitScorer

    sc = {
        name: BenefitScorer(get_reranker(name, embedder), query.query, query.candidates)
        for name in SCORERS
    }
    sc["ensemble"].anchored.share(ce=sc["cross-encoder"].anchored, cos=sc["bi-encoder"].anchored)
    return sc


def _distance_to_defaults(p: tuple[float, float, float]) -> float:
    """Squared distance to the paper's defaults in grid units (the parameter-label tie-break)."""
    d = unit_params(np.asarray(p)) - unit_params(np.asarray(DEFAULTS))
    return float(np.sum(d**2))


def grid_labels(
    query: Query, cfg: AgentTrainConfig
) -> tuple[int, np.ndarray, dict[str, Any]] | None:
    """``(scorer label, params, info)`` for one query, or None when it carries no preference."""
    from ragsieve.metrics import ie
    from ragsieve.select.mcts import MCTSConfig, mcts_search
    from ragsieve.select.search import exhaustive_search

    scorers = _scorers(query, cfg.embedder)
    grid = list(product(cfg.grid["iterations"], cfg.grid["c"], cfg.grid["lambda_"]))
    util_cache: dict[tuple[int, ...], float] = {}

    def utility(combo: tuple[int, ...]) -> float:
        if combo not in util_cache:
            v = ie([query.candidates[i] for i in combo], query.evidence)
            util_cache[combo] = float(v or 0.0)
        return util_cache[combo]

    per_scorer: list[tuple[float, tuple[float, float, float]]] = []
    all_utils: list[float] = []
    for name in SCORERS:
        base = scorers[name]
        exhaustive_search(base, query.costs, cfg.budget)  # fills the benefit cache
        runs = []
        for it, c, lam in grid:
            res = mcts_search(
                base.reordered(range(len(query.candidates))),
                query.costs,
                MCTSConfig(int(it), float(c), float(lam), cfg.budget, 0),
            )
            runs.append((utility(res.best), (float(it), float(c), float(lam))))
        best_u = max(u for u, _ in runs)
        all_utils += [u for u, _ in runs]
        params = min((p for u, p in runs if u == best_u), key=_distance_to_defaults)
        per_scorer.append((best_u, params))
    if max(all_utils) == min(all_utils):
        return None
    label = max(range(len(SCORERS)), key=lambda k: (per_scorer[k][0], -k))
    info = {"utilities": {SCORERS[k]: per_scorer[k][0] for k in range(len(SCORERS))}}
    return label, np.asarray(per_scorer[label][1], dtype=np.float64), info


# --------------------------------------------------------------------------- training


def train_network(
    x: np.ndarray,
    y: np.ndarray,
    p: np.ndarray,
    cfg: AgentTrainConfig,
    out: Path,
    opts: RunOptions = DEFAULT_RUN,
    log: Callable[[str], None] = print,
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, float], dict[str, Any]]:
    """Algorithm 6 on features ``x``, scorer labels ``y`` and unit-range params ``p``, through
    the harness's loop (resumable from ``out``). Returns the weights, the last epoch's mean
    losses and the loop's stats."""
    import torch
    from torch import nn

    begin(opts)
    d = x.shape[1]
    enc = nn.Sequential(
        nn.Linear(d, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 128)
    )
    cls = nn.Linear(128, len(SCORERS))
    reg = nn.Linear(128, len(PARAMS))
    params = list(enc.parameters()) + list(cls.parameters()) + list(reg.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr)
    rng = np.random.default_rng(opts.seed)
    n = len(x)
    i_idx = rng.integers(0, n, cfg.pairs)
    j_idx = rng.integers(0, n, cfg.pairs)
    perms = [rng.permutation(cfg.pairs) for _ in range(cfg.epochs)]
    per_epoch = -(-cfg.pairs // cfg.batch_size)
    net = nn.ModuleDict({"enc": enc, "cls": cls, "reg": reg})
    config = {**asdict(cfg), "rows": n, "input_dim": d}
    loop = Loop(
        out, net, opt, cfg.epochs * per_epoch, opts, config, log, tracking=Tracking(log_every=10**9)
    )
    dev = loop.device
    X, Y = torch.tensor(x).to(dev), torch.tensor(y, dtype=torch.long).to(dev)
    P = torch.tensor(p).float().to(dev)
    ce = nn.CrossEntropyLoss()

    def loss_fn(step: int) -> Any:
        epoch, b = divmod(step, per_epoch)
        sel = perms[epoch][b * cfg.batch_size : (b + 1) * cfg.batch_size]
        i, j = torch.tensor(i_idx[sel]).to(dev), torch.tensor(j_idx[sel]).to(dev)
        zi, zj = enc(X[i]), enc(X[j])
        diff = (Y[i] != Y[j]).float()  # I_ij: 1 for different scorers
        dist = torch.sqrt(((zi - zj) ** 2).sum(dim=1) + 1e-9)
        l_con = ((1 - diff) * dist**2 + diff * torch.clamp(cfg.margin - dist, min=0) ** 2).mean()
        l_cla = ce(cls(zi), Y[i]) + ce(cls(zj), Y[j])
        pi, pj = torch.sigmoid(reg(zi)), torch.sigmoid(reg(zj))
        l_reg = ((pi - P[i]) ** 2).sum(dim=1).mean() + ((pj - P[j]) ** 2).sum(dim=1).mean()
        tot = loop.extra["epoch"] = {} if b == 0 else loop.extra["epoch"]
        for k, v in (("con", l_con), ("cla", l_cla), ("reg", l_reg)):
            tot[k] = tot.get(k, 0.0) + float(v.detach()) * len(sel) / cfg.pairs
        if b == per_epoch - 1:
            loop.extra["last"] = dict(tot)
            if epoch % 10 == 0 or epoch == cfg.epochs - 1:
                losses = ", ".join(f"{k} {v:.4f}" for k, v in tot.items())
                log(f"epoch {epoch + 1}/{cfg.epochs}: {losses}")
        return l_con + l_cla + l_reg

    stats = loop.run(loss_fn)
    weights = {}
    for name, layer in (
        ("enc0", enc[0]),
        ("enc1", enc[2]),
        ("enc2", enc[4]),
        ("cls", cls),
        ("reg", reg),
    ):
        weights[name] = (
            layer.weight.detach().cpu().numpy().T.copy(),
            layer.bias.detach().cpu().numpy().copy(),
        )
    return weights, loop.extra.get("last", {}), stats


#: The grid search's results so far, kept in ``--out`` until the run finishes.
GRID_FILE = "grid_labels.json"
#: Fields of :class:`AgentTrainConfig` that only the network's training reads.
_TRAINING_ONLY = ("pairs", "epochs", "batch_size", "lr", "margin")


def _grid_progress(out: Path | None, cfg: AgentTrainConfig, seed: int) -> tuple[dict, dict]:
    """``(key, results)``: the grid-search settings and the per-query results saved so far."""
    key = {k: v for k, v in asdict(cfg).items() if k not in _TRAINING_ONLY} | {"seed": seed}
    path = out / GRID_FILE if out is not None else None
    if path is None or not path.is_file():
        return key, {}
    saved = json.loads(path.read_text(encoding="utf-8"))
    if saved["config"] != key:
        raise ConfigError(
            f"{path} was written with other training options: remove it or use another --out"
        )
    return key, saved["results"]


def build_dataset(
    data_dir: Path,
    cfg: AgentTrainConfig,
    log: Callable[[str], None],
    seed: int = 13,
    out: Path | None = None,
    deadline: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]] | None:
    """Features, scorer labels and unit params of the labelled queries, and counts.

    With ``out``, each query's grid result is saved to ``out/grid_labels.json`` as it comes:
    past ``deadline`` (a ``time.perf_counter`` value) the search stops and returns None, and a
    rerun continues with the next query (the grid search is most of a run's time)."""
    from ragsieve.agent.features import agent_features

    rng = random.Random(seed)
    t0 = time.perf_counter()
    queries = _qasper_queries(data_dir, cfg.qasper, cfg, rng) if cfg.qasper else []
    queries += _msmarco_queries(data_dir, cfg.msmarco, cfg, rng) if cfg.msmarco else []
    log(f"{len(queries)} training queries ({time.perf_counter() - t0:.0f}s)")
    key, results = _grid_progress(out, cfg, seed)
    if 0 < len(results) < len(queries):
        log(f"resuming the grid search at query {len(results) + 1}/{len(queries)}")
    elif results:
        log(f"grid search results of all {len(queries)} queries read from {out / GRID_FILE}")
    xs, ys, ps = [], [], []
    counts = dict.fromkeys(SCORERS, 0)
    dropped = 0
    for k, q in enumerate(queries):
        if str(k) not in results:
            got = grid_labels(q, cfg)
            results[str(k)] = None if got is None else [got[0], got[1].tolist()]
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                saved = {"config": key, "results": results}
                (out / GRID_FILE).write_text(json.dumps(saved) + "\n", encoding="utf-8")
        if results[str(k)] is None:
            dropped += 1
        else:
            label, params = results[str(k)]
            xs.append(agent_features(q.query, q.candidates, cfg.embedder))
            ys.append(label)
            ps.append(unit_params(np.asarray(params, dtype=np.float64)))
            counts[SCORERS[label]] += 1
        if (k + 1) % 20 == 0:
            log(f"grid search {k + 1}/{len(queries)} ({time.perf_counter() - t0:.0f}s)")
        if deadline is not None and time.perf_counter() > deadline and k + 1 < len(queries):
            log(
                f"time limit: grid search stopped at query {k + 1}/{len(queries)}; "
                "rerun with the same --out to resume"
            )
            return None
    if len(xs) < 4:
        raise ConfigError(f"only {len(xs)} training queries carry a preference: use more queries")
    info = {
        "queries": len(queries),
        "labelled": len(xs),
        "dropped_no_preference": dropped,
        "label_counts": counts,
        "grid_seconds": round(time.perf_counter() - t0, 1),
    }
    return np.stack(xs), np.asarray(ys), np.stack(ps).astype(np.float32), info


def data_files(cfg: AgentTrainConfig) -> list[str]:
    """The ``shared/data`` files a run with ``cfg`` reads."""
    from ragsieve.data import MSMARCO, QASPER_TRAIN_P, QASPER_TRAIN_Q

    return [QASPER_TRAIN_Q, QASPER_TRAIN_P] * bool(cfg.qasper) + [MSMARCO] * bool(cfg.msmarco)


def train_agent(
    out: Path, data_dir: Path, cfg: AgentTrainConfig | None = None, opts: RunOptions = DEFAULT_RUN
) -> dict[str, Any]:
    """Grid-search labels, train (or resume from ``out``), and write ``agent.npz``,
    ``agent.json`` and ``MODEL_CARD.md`` into ``out``. A run stopped by ``opts``' time limit
    writes nothing but its checkpoint (``meta["training"]["train"]["finished"]`` is False)."""
    cfg = cfg or AgentTrainConfig()
    log = opts.log
    hashes = data_hashes(data_dir, data_files(cfg))
    t0 = time.perf_counter()
    deadline = t0 + 60 * opts.time_limit_min if opts.time_limit_min is not None else None
    built = build_dataset(data_dir, cfg, log, opts.seed, out, deadline)
    if built is None:
        stats = {"steps": 0, "scheduled_steps": None, "finished": False, "seconds": 0.0}
        return {"training": {"config": asdict(cfg), **run_record(opts, stats, hashes)}}
    x, y, p, info = built
    log(f"labels: {info['label_counts']} ({info['dropped_no_preference']} dropped)")
    if deadline is not None:  # what is left of the limit is the network's
        left = max(0.0, deadline - time.perf_counter()) / 60
        opts = replace(opts, time_limit_min=left)
    weights, losses, stats = train_network(x, y, p, cfg, out, opts, log)
    model = AgentModel(weights, {})
    probs, _ = model.predict(x)
    train_acc = float(np.mean(np.argmax(probs, axis=1) == y))
    record = run_record(opts, stats, hashes)
    meta = {
        "scorers": list(SCORERS),
        "params": list(PARAMS),
        "embedder": cfg.embedder,
        "input_dim": int(x.shape[1]),
        "utility": "ie = evidence_recall x evidence_precision of the selected context (--no-llm)",
        "training": {
            **info,
            "config": asdict(cfg),
            "train_seconds": stats["seconds"],
            "final_losses": {k: round(v, 5) for k, v in losses.items()},
            "train_accuracy": round(train_acc, 4),
            **record,
        },
    }
    if not stats["finished"]:
        return meta
    model.meta = meta
    model.save(out)
    (out / GRID_FILE).unlink(missing_ok=True)  # like the loop's checkpoint: the model is the result
    t = meta["training"]
    card = f"""# ragsieve CARROT configuration agent

Algorithm 6 (Siamese encoder 2d -> 512 -> 256 -> 128, scorer classifier over {list(SCORERS)},
regression of (iterations, c, lambda)) on [query vector, mean candidate vector] of the
`{cfg.embedder}` embedder. Labels from a grid search of MCTS settings per training query (utility
= evidence recall x precision of the selected context); {t["labelled"]} labelled queries of
{t["queries"]} ({t["label_counts"]}); train accuracy {t["train_accuracy"]}. Adam lr {cfg.lr},
{cfg.epochs} epochs of {cfg.pairs} pairs, batch {cfg.batch_size}, margin {cfg.margin}.

{card_section(record)}"""
    (out / "MODEL_CARD.md").write_text(card, encoding="utf-8")
    return meta
