"""The optimisation loop every trainer shares: steps, checkpoint and resume, time limit.

A trainer builds its model, optimiser, (optional) scheduler and a fixed list of batches, then
hands :meth:`Loop.run` a ``loss_fn(step) -> loss tensor`` for batch ``step``. The loop does the
rest: zero the gradients, backward, clip (``clip_norm``), step the optimiser and scheduler,
track a loss EMA, log progress, and stop at ``opts.time_limit_min`` or ``opts.stop_after``.

Resume: a checkpoint (model, optimiser, scheduler, step, elapsed seconds, loss EMA, every RNG
state and ``extra``) is written every ``opts.checkpoint_every`` steps and when the run stops
early. A run started with the same ``out_dir`` continues from it, so that a stopped and resumed
run replays the same batches with the same dropout draws as an uninterrupted one. A checkpoint
written with another ``config`` is refused. The checkpoint is deleted when the run finishes:
the exported model is the result.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.training.run import RunOptions, torch_device

CHECKPOINT = "checkpoint.pt"


def _plain(config: dict[str, Any]) -> Any:
    """``config`` as JSON would return it (tuples become lists), so that it compares equal
    after a round trip through a checkpoint."""
    return json.loads(json.dumps(config, sort_keys=True, default=str))


@dataclass(frozen=True)
class Tracking:
    """How a :class:`Loop` reports and where it keeps its checkpoint: the loss EMA's decay,
    a log line every ``log_every`` steps, the checkpoint's file name in ``out_dir``."""

    ema_decay: float = 0.95
    log_every: int = 25
    checkpoint: str = CHECKPOINT


class Loop:
    """``n_steps`` optimiser steps over ``model``, resumable from ``out_dir/checkpoint``.

    ``config`` is what the run learns from (the recipe, the seed, the data sizes): a checkpoint
    is resumed only by a run with an equal one. Device, threads and limits are not part of it.
    ``extra`` is a dict a ``loss_fn`` may keep running totals in; it is checkpointed too.
    ``tracking``: the EMA's decay, the log's cadence and the checkpoint's name (:class:`Tracking`).
    """

    def __init__(
        self,
        out_dir: Path,
        model: Any,
        optimizer: Any,
        n_steps: int,
        opts: RunOptions,
        config: dict[str, Any],
        log: Callable[[str], None] = print,
        scheduler: Any = None,
        clip_norm: float | None = None,
        tracking: Tracking | None = None,
    ) -> None:
        self.device = torch_device(opts.device)
        self.model = model.to(self.device)
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.n_steps = n_steps
        self.opts = opts
        self.config = _plain({**config, "seed": opts.seed})
        self.log = log
        self.clip_norm = clip_norm
        tracking = tracking or Tracking()
        self.ema_decay = tracking.ema_decay
        self.log_every = tracking.log_every
        self.path = Path(out_dir) / tracking.checkpoint
        self.extra: dict[str, Any] = {}

    # ------------------------------------------------------------------ checkpoint

    def _save(self, step: int, seconds: float, ema: float, first: float | None) -> None:
        import torch

        self.path.parent.mkdir(parents=True, exist_ok=True)
        state = {
            "config": self.config,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
            "step": step,
            "seconds": seconds,
            "ema": ema,
            "first_loss": first,
            "extra": self.extra,
            "rng": {
                "python": random.getstate(),
                "numpy": np.random.get_state(),
                "torch": torch.get_rng_state(),
                "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            },
        }
        tmp = self.path.with_suffix(".tmp")
        torch.save(state, tmp)
        tmp.replace(self.path)  # a run killed mid-write leaves the previous checkpoint

    def _load(self) -> tuple[int, float, float, float | None]:
        import torch

        state = torch.load(self.path, map_location=self.device, weights_only=False)
        if state.get("config") != self.config:
            raise ConfigError(
                f"{self.path} was written with other training options: "
                "remove it or use another --out"
            )
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scheduler is not None and state["scheduler"] is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        self.extra = state["extra"]
        rng = state["rng"]
        random.setstate(rng["python"])
        np.random.set_state(rng["numpy"])
        torch.set_rng_state(rng["torch"].cpu())
        if rng["cuda"] is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all([s.cpu() for s in rng["cuda"]])
        return state["step"], state["seconds"], state["ema"], state["first_loss"]

    # ------------------------------------------------------------------ run

    def run(self, loss_fn: Callable[[int], Any]) -> dict[str, Any]:
        """Steps from the checkpoint's (or 0) to ``n_steps``, or until a limit stops the run.

        Returns ``{steps, scheduled_steps, finished, seconds, final_loss_ema, first_loss,
        device}``; the model is left in eval mode."""
        import torch

        start, spent, ema, first = 0, 0.0, 0.0, None
        if self.path.is_file():
            start, spent, ema, first = self._load()
            self.log(f"resuming at step {start}/{self.n_steps} ({spent / 60:.1f} min done)")
        opts, n = self.opts, self.n_steps
        self.model.train()
        t0 = time.perf_counter()
        step, finished = start, True
        while step < n:
            loss = loss_fn(step)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if self.clip_norm is not None:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip_norm)
            self.optimizer.step()
            if self.scheduler is not None:
                self.scheduler.step()
            value = float(loss.detach())
            first = value if first is None else first
            ema = self.ema_decay * ema + (1 - self.ema_decay) * value if step else value
            step += 1
            now = time.perf_counter() - t0
            if step % self.log_every == 0 or step == n:
                rate = (step - start) / max(now, 1e-9)
                self.log(
                    f"step {step}/{n} loss {ema:.4f} {(spent + now) / 60:.1f} min, "
                    f"eta {(n - step) / max(rate, 1e-9) / 60:.1f} min"
                )
            if step == n:
                break
            timed_out = opts.time_limit_min is not None and now > 60 * opts.time_limit_min
            if timed_out or (opts.stop_after is not None and step >= opts.stop_after):
                self._save(step, spent + now, ema, first)
                why = "time limit" if timed_out else "--stop-after"
                self.log(f"{why}: stopped at step {step}/{n}; rerun with the same --out to resume")
                finished = False
                break
            if step % opts.checkpoint_every == 0:
                self._save(step, spent + now, ema, first)
        self.model.eval()
        if finished and self.path.is_file():
            self.path.unlink()
        return {
            "steps": step,
            "scheduled_steps": n,
            "finished": finished,
            "seconds": round(spent + time.perf_counter() - t0, 1),
            "final_loss_ema": round(ema, 4),
            "first_loss": round(first, 4) if first is not None else None,
            "device": str(self.device),
        }
