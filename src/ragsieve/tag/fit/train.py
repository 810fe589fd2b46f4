"""Train the evidence tagger (``ragsieve train-tagger``): fixed seed, CPU, resumable, time limit.

The steps of a run; the recipe they follow (data mix, loss, schedule) is
:mod:`ragsieve.tag.fit.recipe`, the network :mod:`ragsieve.tag.fit.net`, the trained folder's
card and thresholds :mod:`ragsieve.tag.fit.card`.

The run goes through the training harness (``ragsieve.training``): seed, device, threads and
time limit are its :class:`~ragsieve.training.RunOptions` (:data:`DEFAULT_RUN` for the shipped
model), the steps its :class:`~ragsieve.training.Loop` (checkpoint every 100 steps and at the
time limit; a rerun with the same ``--out`` resumes with the same batches and RNG states), the
export its fp32 ONNX and per-channel int8 quantisation, the card its run section and data
hashes. :class:`TaggerTrainConfig` is the recipe only. The output folder gets ``model.onnx``
(int8), ``model_fp32.onnx``, ``tokenizer.json``, ``tagger_config.json``, ``training_info.json``
and ``MODEL_CARD.md``. On a machine that has only the repository (a GPU lease), the same run is
three steps: ``python -m ragsieve.tag.fit.train prepare | fit | export`` (:func:`main`).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ragsieve.errors import ConfigError, InputError
from ragsieve.tag.fit.args import OneLineParser, run_main
from ragsieve.tag.fit.card import finish, set_operating_point
from ragsieve.tag.fit.data import (
    SOURCE_FILES,
    Example,
    build_examples,
    dedupe,
    load_examples,
    save_examples,
)
from ragsieve.tag.fit.net import export_model, load_weights, save_weights
from ragsieve.tag.fit.recipe import (
    DEFAULT_RUN,
    RUN_FIELDS,
    TaggerTrainConfig,
    mix,
    split_config,
    train_net,
)
from ragsieve.training import RunOptions, data_hashes, require_onnx, run_record, torch_device


def prepare(
    data_dir: Path,
    cfg: TaggerTrainConfig,
    log: Callable[[str], None] = print,
    opts: RunOptions = DEFAULT_RUN,
) -> tuple[list[Example], list[Example], dict[str, str]]:
    """The deduplicated train examples, the dev examples (the first ``dev_per_source`` of each
    source) and the sha256 of every data file read (a missing file fails first)."""
    hashes = data_hashes(data_dir, [f for fs in SOURCE_FILES.values() for f in fs])
    t0 = time.perf_counter()
    examples = dedupe(build_examples(data_dir, cfg.sizes, opts.seed))
    train_ex = [e for e in examples if e.split == "train"]
    dev: list[Example] = []
    for source in sorted({e.source for e in examples if e.split == "dev"}):
        dev += [e for e in examples if e.split == "dev" and e.source == source][
            : cfg.dev_per_source
        ]
    log(f"{len(train_ex)} train and {len(dev)} dev examples in {time.perf_counter() - t0:.0f}s")
    return train_ex, dev, hashes


def _counts(examples: list[Example]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in examples:
        counts[e.source] = counts.get(e.source, 0) + 1
    return counts


def fit(
    train_ex: list[Example],
    cfg: TaggerTrainConfig,
    out_dir: Path,
    log: Callable[[str], None],
    opts: RunOptions = DEFAULT_RUN,
) -> tuple[Any, dict[str, Any]]:
    """:func:`mix`, then :func:`train_net`: the part of a run that wants a GPU."""
    mixed = mix([e for e in train_ex if e.source not in cfg.leave_out], cfg, opts.seed)
    log(f"training on {len(mixed)} examples {_counts(mixed)} on {opts.device}")
    net, stats = train_net(mixed, cfg, out_dir, log, opts)
    return net, {**stats, "examples": _counts(mixed)}


def train(
    out: Path, data_dir: Path, cfg: TaggerTrainConfig | None = None, opts: RunOptions = DEFAULT_RUN
) -> dict[str, Any]:
    """Build the data, train (or resume), export fp32 + int8 ONNX, score the dev split and
    write the config and the model card."""
    cfg = cfg or TaggerTrainConfig()
    log = opts.log
    require_onnx("train-tagger")  # first: a missing exporter must not cost a 30-minute run
    torch_device(opts.device)
    train_ex, dev, hashes = prepare(data_dir, cfg, log, opts)
    net, stats = fit(train_ex, cfg, out, log, opts)
    examples = stats.pop("examples")
    return export(net, out, dev, cfg, run_record(opts, stats, hashes), examples, log)


def export(
    net: Any,
    out_dir: Path,
    dev: list[Example],
    cfg: TaggerTrainConfig,
    record: dict[str, Any],
    examples: dict[str, int],
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """fp32 and int8 ONNX, then :func:`finish`; ``record`` is the harness's
    :func:`~ragsieve.training.run_record` of the run that trained ``net``."""
    sizes = export_model(net, out_dir)
    info = {
        "config": asdict(cfg),
        "examples": examples,
        "dev_examples": len(dev),
        **record,
    }
    return finish(out_dir, dev, info, sizes, log)


def _fit_record(fitted: dict[str, Any], opts: RunOptions, hashes: dict[str, str]) -> dict:
    """The run record of a ``fit`` step from its ``fit.json`` (the fitting machine's device
    name and torch, its loop stats), with the data hashes of the examples it read."""
    fitted = dict(fitted)
    device, torch_version = fitted.pop("device", opts.device), fitted.pop("torch", None)
    command = fitted.pop("command", None) or "python -m ragsieve.tag.fit.train fit"
    record = run_record(replace(opts, command=command), fitted, hashes)
    if opts.device == "cuda" and not str(device).startswith("cuda"):
        device = f"cuda ({device})"  # fit.json before the harness: the GPU's name alone
    record["device"] = device
    record["torch"] = torch_version or "not recorded (fit.json before the harness)"
    return record


def parse_sets(pairs: list[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` pairs as config values: JSON where the value parses (``2``,
    ``1e-4``, ``true``, ``["squad_train"]``), else the plain word (``teacher=none``), as
    Hydra-style overrides read; a pair without ``=`` is a one-line error."""
    out: dict[str, Any] = {}
    for kv in pairs:
        key, sep, value = kv.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"--set {kv!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _is_tagger_folder(path: Path) -> bool:
    """What ``operating-point`` rewrites is there."""
    return all((path / f).is_file() for f in ("tagger_config.json", "training_info.json"))


#: The inputs each step reads: option, what it must be, and the test of that.
STEP_INPUTS: dict[str, tuple[tuple[str, str, Callable[[Path], bool]], ...]] = {
    "prepare": (("data", "a folder", Path.is_dir),),
    "fit": (("examples", "a file", Path.is_file),),
    "export": (
        ("weights", "a folder", Path.is_dir),
        ("examples", "a file", Path.is_file),
        ("data", "a folder", Path.is_dir),
    ),
    "operating-point": (("out", "a trained tagger's folder", _is_tagger_folder),),
}


def _check_step_inputs(args: Any) -> None:
    """Every input the step reads is given and exists (one line, before any long part)."""
    for name, what, ok in STEP_INPUTS.get(args.step, ()):
        path = getattr(args, name)
        if path is None:
            raise InputError(f"{args.step} needs --{name}")
        if not ok(path):
            raise InputError(f"--{name} {path}: not {what}")


def main(argv: list[str] | None = None) -> None:
    """The three steps of a run on another machine (a GPU lease gets the repository only):

    ``prepare --data DIR --out FILE``: the train examples, saved small (``save_examples``),
    with their data hashes beside them; ``fit --examples FILE --out DIR --device cuda``: the
    network, saved as fp16 weight parts, and ``fit.json`` (its stats, recipe and run options);
    ``export --weights DIR --examples FILE --data DIR --out DIR``: ONNX, dev metrics and the
    model card, here. ``--set KEY=VALUE`` sets a recipe field of :class:`TaggerTrainConfig`
    or a run option (``seed``, ``threads``, ...): :func:`parse_sets`. Bad input is one line
    (:func:`~ragsieve.tag.fit.args.run_main`), before any data is read."""
    ap = OneLineParser(prog="python -m ragsieve.tag.fit.train")
    ap.add_argument("step", choices=("prepare", "fit", "export", "operating-point"))
    ap.add_argument("--threshold", type=float, default=None)
    ap.add_argument("--passage-threshold", type=float, default=None)
    ap.add_argument("--how", default="chosen on the dev split by benchmarks/tagger_sweep.py")
    ap.add_argument("--data", type=Path)
    ap.add_argument("--examples", type=Path)
    ap.add_argument("--weights", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device", default=DEFAULT_RUN.device)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--seed", type=int, default=DEFAULT_RUN.seed)
    ap.add_argument("--threads", type=int, default=DEFAULT_RUN.threads)
    ap.add_argument(
        "--set", action="append", default=[], help="config KEY=VALUE (a JSON value, or a word)"
    )
    args = ap.parse_args(argv)
    if args.time_limit is not None and args.time_limit <= 0:
        raise InputError(f"--time-limit must be positive minutes, got {args.time_limit}")
    saved: dict[str, Any] = {
        "device": args.device,
        "time_limit_min": args.time_limit,
        "seed": args.seed,
        "threads": args.threads,
        **parse_sets(args.set),
    }
    cfg, opts = split_config(saved)
    _check_step_inputs(args)
    log = print
    if args.step == "prepare":
        train_ex, _, hashes = prepare(args.data, cfg, log, opts)
        save_examples(args.out, train_ex)
        meta = {
            "data_sha256": hashes,
            "examples": _counts(train_ex),
            "config": {**asdict(cfg), "seed": opts.seed},
        }
        args.out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", "utf-8")
        log(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")
    elif args.step == "operating-point":
        if args.threshold is None or args.passage_threshold is None:
            raise ConfigError("operating-point needs --threshold and --passage-threshold")
        set_operating_point(args.out, args.threshold, args.passage_threshold, args.how)
    elif args.step == "fit":
        train_ex = load_examples(args.examples)
        net, stats = fit(train_ex, cfg, args.out, log, opts)
        save_weights(net, args.out)
        record = run_record(opts, stats, {})
        stats.update(device=record["device"], torch=record["torch"])
        stats["config"] = {**asdict(cfg), **{k: getattr(opts, k) for k in RUN_FIELDS}}
        (args.out / "fit.json").write_text(json.dumps(stats, indent=2) + "\n", "utf-8")
    else:
        meta = json.loads(args.examples.with_suffix(".json").read_text("utf-8"))
        fitted = json.loads((args.weights / "fit.json").read_text("utf-8"))
        cfg, fit_opts = split_config({**fitted.pop("config"), "sizes": cfg.sizes})
        _, dev, _ = prepare(args.data, cfg, log, fit_opts)
        net = load_weights(args.weights)
        examples = fitted.pop("examples", {})
        fitted["command"] = (
            f"python -m ragsieve.tag.fit.train fit --examples {args.examples.name} "
            f"--device {fit_opts.device} (prepared from shared/data; exported here)"
        )
        record = _fit_record(fitted, fit_opts, meta["data_sha256"])
        export(net, args.out, dev, cfg, record, examples, log)


if __name__ == "__main__":
    sys.exit(run_main(main, None))
