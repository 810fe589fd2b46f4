"""The options every ``train-*`` command shares, so that each reads them the same way.

A command declares ``data_dir: DataOpt = None``, ``seed: SeedOpt = 13``,
``device: DeviceOpt = "cpu"``, ``time_limit: TimeLimitOpt = None`` and
``threads: ThreadsOpt = N`` (its own defaults), then calls :func:`run_options`, which checks the
device before any data is read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from ragsieve.training.run import RunOptions, torch_device

SeedOpt = Annotated[
    int, typer.Option("--seed", help="Random seed (data sampling, initialisation, batch order).")
]
DeviceOpt = Annotated[
    str, typer.Option("--device", help="cpu (default) | cuda (a GPU that torch can use).")
]
TimeLimitOpt = Annotated[
    float | None,
    typer.Option(
        "--time-limit",
        min=0.0,
        help="Stop after this many minutes of training; a checkpoint stays in --out and the "
        "same command resumes from it.",
    ),
]
ThreadsOpt = Annotated[int, typer.Option("--threads", min=1, help="torch CPU threads.")]
DataOpt = Annotated[
    Path | None, typer.Option("--data", help="shared/data folder (default: found).")
]


def run_options(
    seed: int,
    device: str,
    time_limit: float | None,
    threads: int,
    stop_after: int | None = None,
) -> RunOptions:
    """:class:`RunOptions` from the shared options, progress to :func:`log`; a one-line error
    for a device torch cannot use, raised now rather than after minutes of data building."""
    opts = RunOptions(
        seed=seed, device=device, threads=threads, time_limit_min=time_limit, stop_after=stop_after
    )
    torch_device(opts.device)
    return replace(opts, log=log)


def log(msg: str) -> None:
    """Progress lines go to stderr (stdout carries the result, ``--json`` included)."""
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


#: What a ``train-*`` command says of a run that stopped at its time or step limit.
STOPPED = "stopped early (rerun to resume)"


def report(record: dict[str, Any], as_json: bool, summary: Callable[[], str]) -> None:
    """A command's result on stdout: its record as JSON with ``--json``, printed as every
    other command's (:func:`ragsieve.cli.common.print_json`), else the line (or lines)
    ``summary()`` writes."""
    if as_json:
        from ragsieve.cli.common import print_json

        print_json(record)
    else:
        typer.echo(summary())
