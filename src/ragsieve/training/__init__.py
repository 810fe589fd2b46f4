"""One training harness for every model ragsieve trains (reranker, tagger, segmenter, agent).

Each trainer keeps its recipe (data, model, loss) and gets from here what every run needs:

* :class:`RunOptions` (``run.py``): seed, ``device`` (``cpu`` default, ``cuda``), threads,
  ``time_limit_min``, ``stop_after``, ``checkpoint_every``, ``log`` (progress lines) and
  ``command`` (for the card), so that a trainer's entry takes ``(out, data_dir, cfg=None,
  opts=DEFAULT_RUN)`` and nothing else about the run; :func:`begin` checks the device,
  sets the threads and seeds Python, numpy and torch (:func:`seed_everything`);
  :func:`torch_device` gives a one-line error when CUDA is asked for and unavailable.
* :class:`Loop` (``loop.py``): ``Loop(out_dir, model, optimizer, n_steps, opts, config, log,
  scheduler=, clip_norm=, tracking=).run(loss_fn)``, where ``loss_fn(step)`` returns batch
  ``step``'s loss tensor; the loop steps the optimiser, checkpoints to
  ``out_dir/checkpoint.pt`` (every ``checkpoint_every`` steps and when a limit stops it),
  resumes from it with every RNG state
  (refusing one written with another ``config``), logs a loss EMA and deletes the checkpoint
  when the run finishes. Returns ``{steps, scheduled_steps, finished, seconds,
  final_loss_ema, first_loss, device}``.
* :func:`adamw_warmup` (``optim.py``): AdamW with linear warm-up and decay, MiniLM's schedule.
* :func:`export_onnx` and :func:`quantize_int8_per_channel` (``export.py``): fp32 ONNX, then
  int8 dynamic quantisation with per-output-channel scales; :func:`require_onnx` checks the
  exporter is installed before a run starts.
* :func:`data_hashes`, :func:`run_record`, :func:`card_section` (``card.py``): sha256 of every
  data file read, and the run's facts in ``training_info.json`` and ``MODEL_CARD.md``.

Usage::

    opts = RunOptions(seed=13, device="cpu", time_limit_min=30)
    begin(opts)                                   # seed, threads, device check
    model = build(); opt, sched = adamw_warmup(model.bert, heads, 5e-5, 1e-3, 0.01, 0.06, n)
    loop = Loop(out, model, opt, n, opts, asdict(cfg), log, scheduler=sched, clip_norm=1.0)
    stats = loop.run(lambda i: loss_of(batches[i], loop.device))
    export_onnx(model, out / "model_fp32.onnx", example_inputs, names, outputs, axes)
    quantize_int8_per_channel(out / "model_fp32.onnx", out / "model.onnx")
    record = run_record(opts, stats, data_hashes(data_dir, files))

torch is imported inside the functions: importing this package costs nothing.
"""

from __future__ import annotations

from ragsieve.training.card import card_section, command_line, data_hashes, run_record
from ragsieve.training.export import export_onnx, quantize_int8_per_channel, require_onnx
from ragsieve.training.loop import CHECKPOINT, Loop, Tracking
from ragsieve.training.optim import adamw_warmup
from ragsieve.training.run import RunOptions, begin, seed_everything, torch_device

__all__ = [
    "CHECKPOINT",
    "Loop",
    "RunOptions",
    "Tracking",
    "adamw_warmup",
    "begin",
    "card_section",
    "command_line",
    "data_hashes",
    "export_onnx",
    "quantize_int8_per_channel",
    "require_onnx",
    "run_record",
    "seed_everything",
    "torch_device",
]
