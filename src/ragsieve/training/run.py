"""How a training run executes, apart from what it learns: seed, device, threads, time limit,
where progress goes and the command its model card records.

Every trainer takes a :class:`RunOptions` beside its recipe config, so that ``--seed``,
``--device``, ``--time-limit`` and ``--threads`` mean the same for every ``train-*`` command.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError

DEVICES = ("cpu", "cuda")


@dataclass(frozen=True)
class RunOptions:
    """``seed`` drives data sampling, initialisation and batch order; ``time_limit_min`` and
    ``stop_after`` (a step count, the schedule unchanged) stop a run early with a checkpoint
    that a rerun resumes from; ``checkpoint_every`` steps a checkpoint is also written.
    ``log`` takes the progress lines; ``command`` is the command line the model card records
    (``None``: this process's, :func:`~ragsieve.training.card.command_line`)."""

    seed: int = 13
    device: str = "cpu"
    threads: int = 1
    time_limit_min: float | None = None
    stop_after: int | None = None
    checkpoint_every: int = 100
    log: Callable[[str], None] = field(default=print, compare=False, repr=False)
    command: str | None = None

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ConfigError(f"--device must be cpu or cuda, got {self.device!r}")
        if self.threads < 1:
            raise ConfigError(f"threads must be >= 1, got {self.threads}")
        if self.checkpoint_every < 1:
            raise ConfigError(f"checkpoint_every must be >= 1, got {self.checkpoint_every}")


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and torch's global generators (CUDA's too, when present)."""
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # seeds every CUDA device as well


def torch_device(name: str) -> Any:
    """``torch.device(name)``; a one-line :class:`ConfigError` when CUDA is asked for and torch
    cannot use it (a CPU build of torch, or no GPU)."""
    import torch

    if name not in DEVICES:
        raise ConfigError(f"--device must be cpu or cuda, got {name!r}")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f"--device cuda: torch {torch.__version__} sees no CUDA device; use --device cpu"
        )
    return torch.device(name)


def begin(opts: RunOptions) -> Any:
    """The start of every run: check the device, set torch's CPU threads, seed everything.
    Returns the ``torch.device``."""
    import torch

    device = torch_device(opts.device)
    torch.set_num_threads(opts.threads)
    seed_everything(opts.seed)
    return device
