"""The tagger's training recipe: what a run learns from and how (:class:`TaggerTrainConfig`).

The network (:mod:`ragsieve.tag.fit.net`) is the packaged all-MiniLM-L6-v2 encoder with two linear
heads (Provence's design, Chirkova et al., ICLR 2025): a **token head** whose logits, averaged
over a sentence's word pieces, give that sentence's keep logit, and a **passage head** on the
mean-pooled last hidden state, the reranking score. One forward pass over
``[CLS] question [SEP] title: sentences [SEP]`` yields both, and every sentence is judged beside
its neighbours.

Loss, per window (:func:`batch_loss`): binary cross-entropy on every labelled sentence; for a
positive passage whose gold is the paragraph (sentence labels unknown), a multiple-instance
term asks that its best sentence be kept; binary cross-entropy of the passage head on the
passage label; and, where the window holds the answer text inside a gold sentence, the span
head's start and end cross-entropy (SQuAD's extractive reader on the same encoder; with
``null_span_weight``, a negative window's start and end at [CLS], SQuAD 2.0's "no answer").
A share of the passages also gets layout lines (page numbers, running heads, rules) labelled 0
(:func:`~ragsieve.tag.fit.junk.add_junk`). (Provence labels tokens with an LLM's sentence choices;
ours come from the datasets' own gold, so the loss is on pooled sentence logits, which is what
inference thresholds.) :func:`mix` is what one pass reads;
:func:`train_net` runs the passes through the training harness's
:class:`~ragsieve.training.Loop`. The steps of a run (data, fit, export) are
:mod:`ragsieve.tag.fit.train`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.tag.encode import NO_SENTENCE, PassageEncoder, find_answer, load_tokenizer
from ragsieve.tag.fit.data import UNKNOWN, Example, SourceSizes, vary_lengths
from ragsieve.tag.fit.entity import add_look_alikes
from ragsieve.tag.fit.junk import add_junk
from ragsieve.tag.fit.net import (
    build_net,
    reranker_weights,
    sentence_logits_torch,
    tokenizer_path,
)
from ragsieve.tag.span import SPAN_HEAD
from ragsieve.training import Loop, RunOptions, adamw_warmup, begin
from ragsieve.training.minilm import base_model_path


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
    #: (docs/tagger.md; the same batch order both passes).
    epochs: int = 2
    #: HotpotQA sentence-gold examples are few and closest to multi-hop use: seen this often
    #: (5: the shipped model, adopted over 3 by reader F1 on dev, docs/tagger.md).
    hotpot_repeat: int = 5
    mil_weight: float = 0.5
    passage_weight: float = 0.5
    #: Softmax cross-entropy over a passage's labelled sentences (the gold ones against the
    #: rest): the same passage answers different questions with different sentences.
    listwise_weight: float = 0.5
    #: The passage head regresses the teacher's logit (mean squared error, OpenProvence's
    #: 0.05 x rerank-score MSE); ``teacher``: ``none`` (the shipped model's recipe: two
    #: retrainings without it kept fewer tokens at more dev answers) or ``reranker`` (the
    #: shipped cross-encoder, Provence's distillation; the recipe before).
    distill_weight: float = 0.05
    teacher: str = "none"
    #: ``reranker``: start from the shipped cross-encoder (Provence starts from a reranker);
    #: ``minilm``: from the plain bi-encoder weights.
    init: str = "reranker"
    #: Share of passages cut to windows of 1-10 sentences (``tag.fit.data.vary_lengths``).
    vary_rate: float = 0.4
    #: Share of sentence-labelled passages given one or two layout lines labelled 0
    #: (``tag.fit.junk.add_junk``), so that layout is never evidence. 0 trains without them.
    junk_rate: float = 0.05
    #: Weight of the span head's start/end cross-entropy (as the other auxiliary
    #: terms' 0.5). 0 trains no span target (the head stays at its initial weights).
    span_weight: float = 0.5
    #: Positive examples whose gold sentence holds a look-alike of the answer (another number
    #: or name, ``tag.fit.entity.look_alike``) are seen this often: hard span examples for the
    #: wrong entity of one sentence. 1 (the shipped model) adds none.
    look_alike_repeat: int = 1
    #: Unanswerable windows for the span head (SQuAD 2.0's null answer, Devlin et al. 2019):
    #: above 0, the [CLS] piece joins the start/end softmax of every answer window, and every
    #: negative window (passage label 0) is trained to point at it with this weight. The
    #: exported folder then says ``span_null`` and its span scores are measured against "no
    #: answer here" (``tag.span.best_spans``). 0 (the shipped model) trains no null.
    null_span_weight: float = 0.0
    freeze_embeddings: bool = True
    #: Dev examples scored per source after training (the first ones, in file order).
    dev_per_source: int = 400
    #: Sources whose examples a run skips (ablations: ``["squad_train"]``).
    leave_out: list[str] = field(default_factory=list)
    sizes: SourceSizes = field(default_factory=SourceSizes)

    def __post_init__(self) -> None:
        """The word-valued options are known ones and the numbers are numbers of their field's
        kind (non-negative; a ``*_repeat`` at least 1), checked where the recipe is built (as
        :class:`~ragsieve.training.RunOptions` checks its own): a one-line error before any
        data is read, not after minutes of tokenising on a lent GPU (``--set x=abc``)."""
        for f in fields(self):
            value, kind = getattr(self, f.name), type(f.default)
            if kind not in (int, float, bool):
                continue
            wanted = (int, float) if kind is float else (kind,)
            if not isinstance(value, wanted) or (kind is not bool and isinstance(value, bool)):
                what = {int: "an integer", float: "a number", bool: "true or false"}[kind]
                raise ConfigError(f"{f.name} must be {what}, got {value!r}")
            least = 1 if f.name.endswith("_repeat") else 0
            if value < least:
                raise ConfigError(f"{f.name} must be at least {least}")
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


@dataclass
class _Item:
    window: Any
    labels: list[int]
    passage_label: int
    mil: bool
    teacher: float = 0.0
    #: The answer's first and last word piece in the window (-1: no span target).
    span: tuple[int, int] = (-1, -1)


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
        if ex.answer:  # the same text as a sentence has the same word pieces
            texts.setdefault(ex.answer, len(texts))
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
        span = (-1, -1)
        if ex.answer and plabel == 1:
            gold = {i for i, y in enumerate(labels) if y in (1, UNKNOWN)}
            span = find_answer(w, ids[texts[ex.answer]], gold) or span
        out.append(_Item(w, labels, plabel, mil, span=span))
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
        "span": torch.tensor([list(it.span) for it in batch], dtype=torch.long),
    }
    if device is not None:
        t = {k: v.to(device, non_blocking=True) for k, v in t.items()}
    return {**t, "n": n}


def batch_loss(net: Any, t: dict[str, Any], cfg: TaggerTrainConfig) -> Any:
    import torch
    import torch.nn.functional as F

    tok, plogit, span = net(t["input_ids"], t["attention_mask"], t["token_type_ids"])
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
    body = t["sentence_of"] != NO_SENTENCE  # start/end only on passage pieces ...
    if cfg.null_span_weight:
        body[:, 0] = True  # ... and [CLS], the null answer

    def span_ce(rows: Any, target: Any) -> Any:
        """Start and end cross-entropy of the windows ``rows`` against ``target`` [n, 2]."""
        logits = span[rows].float().masked_fill(~body[rows].unsqueeze(-1), -1e4)
        return 0.5 * (
            F.cross_entropy(logits[..., 0], target[:, 0])
            + F.cross_entropy(logits[..., 1], target[:, 1])
        )

    has = t["span"][:, 0] >= 0
    if cfg.span_weight and has.any():
        loss = loss + cfg.span_weight * span_ce(has, t["span"][has])
    null = t["passage"] == 0
    if cfg.null_span_weight and null.any():
        cls = torch.zeros((int(null.sum()), 2), dtype=torch.long, device=span.device)
        loss = loss + cfg.null_span_weight * span_ce(null, cls)
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
            p = net(t["input_ids"], t["attention_mask"], t["token_type_ids"])[1]
            for i, v in zip(idx, p.float().cpu().numpy().tolist(), strict=True):
                items[i].teacher = float(v)


def _initial_net(cfg: TaggerTrainConfig) -> Any:
    """The network a run starts from (``cfg.init``)."""
    if cfg.init == "reranker":
        net = build_net()
        missing, _ = net.load_state_dict(reranker_weights(), strict=False)
        if [k for k in missing if not k.startswith(("token_head.", SPAN_HEAD))]:
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
    heads = [
        *net.token_head.parameters(),
        *net.passage_head.parameters(),
        *net.span_head.parameters(),
    ]
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


def mix(train_ex: list[Example], cfg: TaggerTrainConfig, seed: int) -> list[Example]:
    """What one pass reads: a share cut to shorter windows (:func:`vary_lengths`), a share
    given layout lines (:func:`add_junk`), the HotpotQA sentence-gold examples
    ``hotpot_repeat`` times and those with a look-alike answer ``look_alike_repeat`` times."""
    out = vary_lengths(train_ex, random.Random(seed + 7), cfg.vary_rate)
    if cfg.junk_rate:
        out = add_junk(out, random.Random(seed + 11), cfg.junk_rate)
    out = out + [e for e in out if e.source == "hotpot"] * (cfg.hotpot_repeat - 1)
    return add_look_alikes(out, cfg.look_alike_repeat)
