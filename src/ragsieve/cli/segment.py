"""Segmentation commands: ``segment`` and ``train-segmenter``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

import ragsieve.cli.train as train_cli
from ragsieve.errors import ConfigError, InputError, require_extra
from ragsieve.io import SUPPORTED


def segment_cmd(
    file: Annotated[
        Path, typer.Argument(help=f"A file that index reads: {', '.join(sorted(SUPPORTED))}.")
    ],
    segmenter: Annotated[
        str, typer.Option("--segmenter", help="sage | fixed | paragraph.")
    ] = "sage",
    chunk_tokens: Annotated[
        int | None,
        typer.Option(
            "--chunk-tokens", min=8, help="Max tokens (fixed 200, paragraph 512, sage 400)."
        ),
    ] = None,
    ss: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="sage: split below this pair score.")
    ] = None,
    min_tokens: Annotated[
        int | None, typer.Option(min=0, help="sage: merge segments shorter than this.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")] = False,
) -> None:
    """Cut FILE into chunks and print them (JSON: a list of {text, start, end, ...})."""
    from ragsieve.index.store import DEFAULT_CHUNK_TOKENS
    from ragsieve.io import read_file
    from ragsieve.segment import get_segmenter

    if not file.is_file():
        raise InputError(f"{file} is not a file")
    opts: dict[str, object] = {
        "chunk_tokens": chunk_tokens or DEFAULT_CHUNK_TOKENS.get(segmenter, 200)
    }
    if segmenter == "sage":
        if ss is not None:
            opts["ss"] = ss
        if min_tokens is not None:
            opts["min_tokens"] = min_tokens
    elif ss is not None or min_tokens is not None:
        raise ConfigError("--ss and --min-tokens apply to --segmenter sage only")
    seg = get_segmenter(segmenter, **opts)
    docs = read_file(file)
    chunks = seg.segment(docs)
    rows = [
        {
            "doc_id": c.doc_id,
            "index": c.index,
            "text": c.text,
            "start": c.start,
            "end": c.end,
            "tokens": c.n_tokens,
        }
        for per_doc in chunks
        for c in per_doc
    ]
    if as_json:
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2) + "\n")
        return
    for r in rows:
        typer.echo(
            f"--- {r['doc_id']} #{r['index']} [{r['start']}:{r['end']}] {r['tokens']} tokens"
        )
        typer.echo(r["text"])


def train_segmenter_cmd(
    out: Annotated[Path, typer.Option("--out", help="Output folder for the trained head.")],
    data_dir: train_cli.DataOpt = None,
    qasper_papers: Annotated[int, typer.Option(help="QASPER train papers (-1: all 888).")] = 250,
    val_papers: Annotated[
        int, typer.Option(help="QASPER validation papers for Table X (-1: all 281).")
    ] = 100,
    epochs: Annotated[int, typer.Option(min=1, help="Passes over the pairs.")] = 10,
    loss: Annotated[str, typer.Option(help="mse (Algorithm 1) | bce.")] = "mse",
    seed: train_cli.SeedOpt = 13,
    device: train_cli.DeviceOpt = "cpu",
    threads: train_cli.ThreadsOpt = 2,
    time_limit: train_cli.TimeLimitOpt = None,
    feature_sets: Annotated[
        str, typer.Option(help="Comma-separated Table X rows: x1,x2 | x1,x2,diff | ... | all.")
    ] = "",
    cache: Annotated[
        Path | None, typer.Option(help="Folder to cache sentence vectors between runs.")
    ] = None,
    finetune_embedder: Annotated[
        bool,
        typer.Option(
            "--finetune-embedder",
            help="Algorithm 1 in full: train MiniLM with the head (slow; not the shipped model).",
        ),
    ] = False,
    finetune_pairs: Annotated[
        int, typer.Option(min=64, help="Training pairs sampled for --finetune-embedder.")
    ] = 20000,
    protocol: Annotated[
        str,
        typer.Option(
            help="Training labels: adjacent (shipped: label 0 at each paragraph break) | paper "
            "(label 0 for a random sentence of another paragraph, Section IV-C read literally)."
        ),
    ] = "adjacent",
    as_json: Annotated[bool, typer.Option("--json", help="Print the training report.")] = False,
) -> None:
    """Train SAGE's segmentation head (frozen MiniLM, MLP on [x1, x2, x1-x2, x1*x2]) and print
    Table X on held-out QASPER validation papers."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ragsieve.data import find_data_dir
    from ragsieve.segment.model import FEATURE_SETS
    from ragsieve.segment.train import SegTrainConfig, train_segmenter

    if loss not in ("mse", "bce"):
        raise ConfigError(f"unknown loss {loss!r}: use mse or bce")
    if protocol not in ("adjacent", "paper"):
        raise ConfigError(f"unknown protocol {protocol!r}: use adjacent or paper")
    sets = ["x1,x2", "x1,x2,diff", "x1,x2,prod", "all"]
    if feature_sets:
        # names contain commas themselves: split on ';' or accept the names verbatim
        wanted = [f.strip() for f in feature_sets.split(";") if f.strip()]
        bad = [f for f in wanted if f not in FEATURE_SETS]
        if bad:
            raise ConfigError(f"unknown feature set {bad[0]!r}: use {'; '.join(FEATURE_SETS)}")
        sets = wanted if "all" in wanted else [*wanted, "all"]
    require_extra("train", "ragsieve train-segmenter")
    opts = train_cli.run_options(seed, device, time_limit, threads)
    cfg = SegTrainConfig(
        qasper_papers=qasper_papers,
        val_papers=val_papers,
        epochs=epochs,
        loss=loss,
        finetune_embedder=finetune_embedder,
        finetune_pairs=finetune_pairs,
        protocol=protocol,
    )
    info = train_segmenter(
        out, find_data_dir(data_dir), cfg, feature_sets=sets, cache_dir=cache, opts=opts
    )
    if as_json:
        sys.stdout.write(json.dumps(info, indent=2) + "\n")
        return
    typer.echo(
        "| features | acc (natural) | acc (balanced) | boundary P | boundary R | boundary F1 "
        "| acc (paper protocol) |"
    )
    typer.echo("|---|---:|---:|---:|---:|---:|---:|")
    for name, m in info["table_x"].items():
        typer.echo(
            f"| {name} | {m['acc_natural']:.4f} | {m['acc_balanced']:.4f} | "
            f"{m['boundary_precision']:.4f} | {m['boundary_recall']:.4f} | {m['boundary_f1']:.4f} "
            f"| {m.get('acc_paper_protocol', float('nan')):.4f} |"
        )
    if not info["finished"]:
        typer.echo(f"stopped early (rerun to resume): nothing shipped yet -> {out}")
        return
    typer.echo(f"trained on {info['train_pairs']} pairs in {info['seconds']:.0f}s -> {out}")
