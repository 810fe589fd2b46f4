"""The ``ragsieve train-agent`` command: CARROT's configuration agent."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import ragsieve.cli.train as train_cli
from ragsieve.errors import require_extra


def train_agent_cmd(
    out: Annotated[Path, typer.Option("--out", help="Output folder (agent.npz, agent.json).")],
    data_dir: train_cli.DataOpt = None,
    qasper: Annotated[int, typer.Option(min=0, help="QASPER train queries.")] = 90,
    msmarco: Annotated[int, typer.Option(min=0, help="MS MARCO queries.")] = 90,
    epochs: Annotated[int, typer.Option(min=1, help="Training epochs (paper: 60).")] = 60,
    pairs: Annotated[int, typer.Option(min=32, help="Contrastive pairs per epoch.")] = 6000,
    seed: train_cli.SeedOpt = 13,
    device: train_cli.DeviceOpt = "cpu",
    threads: train_cli.ThreadsOpt = 1,
    time_limit: train_cli.TimeLimitOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the training record.")] = False,
) -> None:
    """Train CARROT's configuration agent from a grid search on training queries (CPU)."""
    from ragsieve.agent.train import AgentTrainConfig, train_agent
    from ragsieve.data import find_data_dir
    from ragsieve.errors import ConfigError

    if qasper + msmarco == 0:
        raise ConfigError("nothing to train on: --qasper and --msmarco are both 0")
    require_extra("train", "ragsieve train-agent")
    opts = train_cli.run_options(seed, device, time_limit, threads)
    cfg = AgentTrainConfig(qasper=qasper, msmarco=msmarco, epochs=epochs, pairs=pairs)
    meta = train_agent(out, find_data_dir(data_dir), cfg, opts)
    t = meta["training"]
    line = (
        f"trained on {t['labelled']} labelled queries ({t['label_counts']}), "
        f"train accuracy {t['train_accuracy']:.2f} -> {out}"
        if t["train"]["finished"]
        else f"{train_cli.STOPPED}: nothing written but the checkpoint -> {out}"
    )
    train_cli.report(meta, as_json, lambda: line)
