"""What every trained model records about its run: data hashes, seed, device, torch, command.

``run_record`` goes into the trainer's ``training_info.json`` (or its model's metadata) and
``card_section`` renders it as the "Run" part of ``MODEL_CARD.md``, so that every card says
the same things the same way: which files were read (sha256 of each), how the run was made and
on what hardware.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragsieve.data import sha256_file
from ragsieve.errors import InputError
from ragsieve.training.run import RunOptions


def data_hashes(data_dir: Path, files: Iterable[str]) -> dict[str, str]:
    """``{relative path: sha256}`` of every data file a run reads (an :class:`InputError` for
    a missing one, so that it is found before a long run starts)."""
    out = {}
    for rel in sorted(set(files)):
        path = Path(data_dir) / rel
        if not path.is_file():
            raise InputError(f"training file {path} not found")
        out[rel] = sha256_file(path)
    return out


def command_line() -> str:
    """The command that started this process, as the card records it."""
    return " ".join(["ragsieve", *sys.argv[1:]])


def run_record(opts: RunOptions, stats: dict[str, Any], hashes: dict[str, str]) -> dict[str, Any]:
    """The run's facts: seed, device (with the GPU's name), threads, torch version, the loop's
    stats, data hashes and the command (``opts.command``, else this process's)."""
    import torch

    device = opts.device
    if device == "cuda" and torch.cuda.is_available():
        device = f"cuda ({torch.cuda.get_device_name(0)})"
    return {
        "seed": opts.seed,
        "device": device,
        "threads": opts.threads,
        "torch": torch.__version__,
        "train": stats,
        "data_sha256": hashes,
        "command": opts.command or command_line(),
    }


def card_section(record: dict[str, Any]) -> str:
    """The "Run" section of a model card, from :func:`run_record`'s dict."""
    train = record["train"]
    state = "finished" if train.get("finished", True) else "stopped early (not the recipe)"
    rows = "\n".join(f"| `{n}` | `{h}` |" for n, h in record["data_sha256"].items())
    return f"""## Run

`{record["command"]}`

Seed {record["seed"]}; device {record["device"]}, {record["threads"]} CPU thread(s);
torch {record["torch"]}; {train["steps"]}/{train["scheduled_steps"]} steps ({state}) in
{train["seconds"]} s, final loss EMA {train["final_loss_ema"]}.

| data file read | sha256 |
|---|---|
{rows}
"""
