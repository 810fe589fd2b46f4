"""Reranker commands: ``train-reranker``, ``rerank`` (many queries in one process),
``eval-reranker`` and ``train-fusion``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

import ragsieve.cli.train as train_cli
from ragsieve.errors import ConfigError, InputError, require_extra
from ragsieve.jsonl import read_jsonl

RerankerOpt = Annotated[
    str,
    typer.Option(
        "--reranker",
        help="ensemble (default) | cross-encoder | bi-encoder | bm25 | a cross-encoder dir "
        "or ORG/NAME.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def train_reranker(
    out: Annotated[Path, typer.Option("--out", help="Output folder for the trained model.")],
    data_dir: train_cli.DataOpt = None,
    qasper_groups: Annotated[int, typer.Option(min=0, help="QASPER train groups.")] = 1300,
    msmarco_groups: Annotated[int, typer.Option(min=0, help="MS MARCO groups.")] = 1700,
    max_length: Annotated[int, typer.Option(min=16, max=512, help="Training length.")] = 128,
    seed: train_cli.SeedOpt = 13,
    device: train_cli.DeviceOpt = "cpu",
    threads: train_cli.ThreadsOpt = 1,
    time_limit: train_cli.TimeLimitOpt = None,
    stop_after: Annotated[
        int | None,
        typer.Option(min=1, help="Stop after N steps (LR schedule unchanged; rerun resumes)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Fine-tune the cross-encoder reranker from the packaged MiniLM weights (fixed seed, CPU
    by default, resumable)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ragsieve.data import find_data_dir
    from ragsieve.rerank.train import TrainConfig, train

    if qasper_groups + msmarco_groups == 0:
        raise ConfigError("nothing to train on: --qasper-groups and --msmarco-groups are both 0")
    require_extra("train", "ragsieve train-reranker")
    opts = train_cli.run_options(seed, device, time_limit, threads, stop_after)
    cfg = TrainConfig(
        qasper_groups=qasper_groups, msmarco_groups=msmarco_groups, max_length=max_length
    )
    info = train(out, find_data_dir(data_dir), cfg, opts)
    done = info["train"]
    state = "trained" if done["finished"] else train_cli.STOPPED
    line = f"{state} in {done['seconds']:.0f}s on {info['pairs']} pairs -> {out}"
    train_cli.report(info, as_json, lambda: line)


def train_fusion_cmd(
    out: Annotated[Path, typer.Option("--out", help="Output JSON file for the fusion weights.")],
    data_dir: train_cli.DataOpt = None,
    qasper: Annotated[int, typer.Option(min=0, help="QASPER train lists (whole papers).")] = 300,
    msmarco: Annotated[int, typer.Option(min=0, help="MS MARCO lists.")] = 300,
    negatives: Annotated[
        int, typer.Option(min=1, help="BM25-mined negatives per MS MARCO list.")
    ] = 19,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 13,
) -> None:
    """Fit the ``ensemble`` reranker's weights (cross-encoder + bi-encoder + BM25) on training
    data; ``models/reranker/fusion.json`` in the package was made by this command."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    require_extra("train", "ragsieve train-fusion")
    from ragsieve.data import find_data_dir
    from ragsieve.rerank.fusion import train_fusion

    if qasper + msmarco == 0:
        raise ConfigError("nothing to fit on: --qasper and --msmarco are both 0")
    info = train_fusion(
        out,
        find_data_dir(data_dir),
        qasper=qasper,
        msmarco=msmarco,
        negatives=negatives,
        seed=seed,
        command="ragsieve " + " ".join(sys.argv[1:]),
        log=train_cli.log,
    )
    typer.echo(f"fitted on {info['training']['pairs']} pairs -> {out}")


def _read_queries(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for n, obj in read_jsonl(path, expect="an object with id, query, passages"):
        where = f"{path}:{n}"
        if "id" not in obj:
            raise InputError(f'{where}: missing "id"')
        if not isinstance(obj.get("query"), str) or not obj["query"].strip():
            raise InputError(f'{where}: "query" must be a non-empty string')
        passages = obj.get("passages")
        if not isinstance(passages, list):
            raise InputError(f'{where}: "passages" must be a list of {{id, text}}')
        for k, p in enumerate(passages):
            if not isinstance(p, dict) or "id" not in p or not isinstance(p.get("text"), str):
                raise InputError(
                    f'{where}: passage {k} must be an object with "id" and string "text"'
                )
        rows.append(obj)
    return rows


def rerank_cmd(
    queries: Annotated[
        Path, typer.Option("--queries", help="JSONL: {id, query, passages: [{id, text}]}.")
    ],
    reranker: RerankerOpt = "ensemble",
) -> None:
    """Score many queries' passages in one process: a JSON line per query, best first."""
    from ragsieve.rerank.factory import get_reranker

    rows = _read_queries(queries)  # validate the whole file before loading a model
    scorer = get_reranker(reranker)
    out = sys.stdout
    for obj in rows:
        texts = [p["text"] for p in obj["passages"]]
        scores = scorer.score(obj["query"], texts) if texts else []
        ranked = sorted(
            (
                {"id": p["id"], "score": round(float(s), 6)}
                for p, s in zip(obj["passages"], scores, strict=True)
            ),
            key=lambda r: -r["score"],
        )
        out.write(json.dumps({"id": obj["id"], "scores": ranked}, ensure_ascii=False) + "\n")
    out.flush()


def eval_reranker(
    rerankers: Annotated[
        str, typer.Option("--rerankers", help="Comma-separated scorers, side by side.")
    ] = "bm25,bi-encoder,cross-encoder,ensemble",
    datasets: Annotated[
        str, typer.Option("--datasets", help="Comma-separated: qasper-val, squad, hotpotqa.")
    ] = "qasper-val,squad,hotpotqa",
    n: Annotated[int, typer.Option("--n", min=1, help="Questions per dataset (seeded).")] = 200,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    data_dir: train_cli.DataOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """MRR@10, nDCG@10 and Recall@1 of rerankers on held-out ranking tasks, side by side."""
    from ragsieve.data import find_data_dir
    from ragsieve.rerank.evaluate import TASKS, format_table, run_eval

    names = [r.strip() for r in rerankers.split(",") if r.strip()]
    sets = [d.strip() for d in datasets.split(",") if d.strip()]
    bad = [d for d in sets if d not in TASKS]
    if bad:
        raise ConfigError(f"unknown dataset {bad[0]!r}: use {', '.join(TASKS)}")
    if not names:
        raise ConfigError("no reranker given")
    result = run_eval(
        names, sets, n=n, seed=seed, data_dir=find_data_dir(data_dir), log=train_cli.log
    )
    train_cli.report(result, as_json, lambda: format_table(result))
