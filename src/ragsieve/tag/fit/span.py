"""Fit the tagger's span head on frozen features, on the CPU, in minutes.

    python -m ragsieve.tag.fit.span --model DIR [--examples FILE] [--head auto|linear|mlp]
    python -m ragsieve.tag.fit.span --model DIR --measure test

The span head reads the last hidden state of every word piece (the token head's input) and
gives a start and an end logit (``span_logits``, :mod:`ragsieve.tag.span`). Here the encoder is
frozen: its hidden states are computed once by the folder's own int8 graph, so the head is fitted
on exactly what it reads at run time.

- **data**: the tagger's training examples (:mod:`ragsieve.tag.fit.data`: ``--examples`` a saved
  file, else built from HotpotQA train (distractor and evidence-only), SQuAD v1.1 train, QED
  train, IRCoT 200-499 and MuSiQue train), *train split only*,
  every positive passage whose answer's word pieces lie in a gold sentence of one of its
  windows (yes/no answers have none): that window, read as inference reads it, is a row.
- **fit**: start and end cross-entropy over the window's sentence pieces (the question and title
  are never an answer), AdamW, fixed epochs and seed. ``--head auto`` fits a linear head and a
  one-hidden-layer MLP and keeps the MLP only if its dev F1 is at least
  :data:`MLP_MARGIN` higher.
- **dev**: the dev pools (:func:`ragsieve.tag.fit.pools.load_split`: the HotpotQA dev questions and
  SQuAD *train* questions of the dev articles), each question's gold passages read together; the
  best span (:func:`~ragsieve.tag.span.best_spans`) is scored by SQuAD F1 and EM against the
  answers. ``all``: every question (a yes/no answer scores 0); ``extractive``: those whose
  answer a gold passage spells.

The folder's ``model.onnx`` (and ``model_fp32.onnx`` where present) get the head, every other
output bit-identical (the stacker stays valid), and ``span.json`` the head's metadata, the dev
figures, the data and the command. ``--measure SPLIT`` writes nothing: it scores a folder's
head on ``dev`` or ``test`` (AMOR's 100 HotpotQA questions and SQuAD dev), given the gold
passages and through :func:`~ragsieve.tag.prune.prune` on the whole pool (the span among the
kept sentences).
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.data import find_data_dir
from ragsieve.embed.onnx import MODEL_FILES, cpu_session, model_files, run_each
from ragsieve.errors import ConfigError, InputError
from ragsieve.metrics import exact_match, f1
from ragsieve.tag.encode import PassageEncoder, Window, find_answer, load_tokenizer
from ragsieve.tag.fit.args import OneLineParser, check_positive, run_main
from ragsieve.tag.fit.data import SOURCES, Example, load_examples
from ragsieve.tag.fit.pools import Pool, load_split
from ragsieve.tag.model import CONFIG_FILE, DEFAULT_MAX_LENGTH, OnnxTagger
from ragsieve.tag.span import MAX_SPAN_PIECES, SPAN_OUTPUT, best_spans, char_span

SPAN_FILE = "span.json"
#: The MLP is kept only if its dev F1 (all questions) beats the linear head's by this much.
MLP_MARGIN = 0.02
MLP_HIDDEN = 256
EPOCHS = 12
BATCH = 32
LR = 2e-3
WEIGHT_DECAY = 1e-4
SEED = 11
#: Sources the default build reads: those with an answer text (sentence gold, or paragraph
#: gold where any sentence may spell it: IRCoT 200-499 and MuSiQue train).
SPAN_SOURCES = ("hotpot", "hotpot_evidence", "squad_train", "qed", "ircot", "musique")

Layers = list[tuple[np.ndarray, np.ndarray]]


@dataclass
class Rows:
    """Training windows: each one's sentence pieces' hidden states (float16), the answer's
    first and last piece among them, and its source."""

    hidden: list[np.ndarray] = field(default_factory=list)
    start: list[int] = field(default_factory=list)
    end: list[int] = field(default_factory=list)
    source: list[str] = field(default_factory=list)


class Reader:
    """The folder's int8 graph with the last hidden state as an output, and its encoder."""

    def __init__(self, model_dir: Path, threads: int | None = None) -> None:
        from ragsieve.tag.graph import with_hidden_output

        model, tok = model_files(model_dir)
        for path in (model, tok):
            if not path.is_file():
                raise ConfigError(f"tagger file {path} is missing: not a tagger folder")
        conf = model_dir / CONFIG_FILE
        config = json.loads(conf.read_text("utf-8")) if conf.is_file() else {}
        graph, self.name = with_hidden_output(model)
        self.session = cpu_session(graph, threads, "tagger")
        self.enc = PassageEncoder(
            load_tokenizer(tok), int(config.get("max_length", DEFAULT_MAX_LENGTH))
        )

    def hidden(self, windows: Sequence[Window]) -> list[np.ndarray]:
        """Each window's sentence pieces' hidden states ``[pieces, 384]`` (float32)."""
        arrays = [self.enc.batch([w]) for w in windows]
        feeds = [
            {k: a[k] for k in ("input_ids", "attention_mask", "token_type_ids")} for a in arrays
        ]
        outs = run_each(self.session, feeds, [self.name])
        return [
            np.asarray(o[0][0])[np.asarray(w.sentence_of) >= 0]
            for o, w in zip(outs, windows, strict=True)
        ]


def span_examples(data_dir: Path, sizes: dict[str, int], seed: int) -> list[Example]:
    """Examples of the span sources, ``sizes[name]`` train questions each (and, as the builders
    do, every dev question: the caller keeps the train split)."""
    out: list[Example] = []
    for name in SPAN_SOURCES:
        if sizes.get(name, 0) > 0:
            i = list(SOURCES).index(name)  # the seed build_examples gives this source
            out += SOURCES[name](data_dir, sizes[name], random.Random(seed * 1000 + i))
    return out


def training_rows(reader: Reader, examples: Sequence[Example], limit: int | None = None) -> Rows:
    """One row per train example with an answer: its first window that holds the answer's
    pieces in a gold sentence (for paragraph gold, any sentence)."""
    picked: list[tuple[Window, int, int, str]] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for ex in examples:
        if ex.split != "train" or not ex.answer or ex.passage_label != 1:
            continue
        key = (ex.question, ex.title, tuple(ex.sentences))
        if key in seen:
            continue
        seen.add(key)
        answer = reader.enc.tok.encode(ex.answer, add_special_tokens=False).ids
        if not answer or len(answer) > MAX_SPAN_PIECES:
            continue
        gold = {i for i, y in enumerate(ex.labels) if y != 0}
        for w in reader.enc.windows(ex.question, [(ex.title, ex.sentences)]):
            at = find_answer(w, answer, gold)
            if at is not None:
                body0 = next(i for i, s in enumerate(w.sentence_of) if s >= 0)
                picked.append((w, at[0] - body0, at[1] - body0, ex.source))
                break
        if limit and len(picked) >= limit:
            break
    rows = Rows()
    step = 256
    for k in range(0, len(picked), step):
        chunk = picked[k : k + step]
        for h, (_, a, b, src) in zip(reader.hidden([c[0] for c in chunk]), chunk, strict=True):
            rows.hidden.append(h.astype(np.float16))
            rows.start.append(a)
            rows.end.append(b)
            rows.source.append(src)
    return rows


def fit_head(rows: Rows, kind: str, epochs: int = EPOCHS, seed: int = SEED) -> Layers:
    """The span head's ``(weight, bias)`` layers: ``linear`` (384 -> 2) or ``mlp`` (384 ->
    :data:`MLP_HIDDEN`, ReLU, -> 2), by start and end cross-entropy over each window's
    sentence pieces."""
    import torch

    if not rows.hidden:
        raise InputError("no training window holds its answer: nothing to fit the span head on")
    torch.manual_seed(seed)
    dim = int(rows.hidden[0].shape[1])
    if kind == "linear":
        net: Any = torch.nn.Linear(dim, 2)
    elif kind == "mlp":
        net = torch.nn.Sequential(
            torch.nn.Linear(dim, MLP_HIDDEN), torch.nn.ReLU(), torch.nn.Linear(MLP_HIDDEN, 2)
        )
    else:
        raise ConfigError(f"unknown span head {kind!r}: use linear or mlp")
    opt = torch.optim.AdamW(net.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    order = np.arange(len(rows.hidden))
    rng = np.random.default_rng(seed)
    target = torch.tensor(np.stack([rows.start, rows.end], axis=1), dtype=torch.long)
    for _ in range(epochs):
        rng.shuffle(order)
        for k in range(0, len(order), BATCH):
            idx = order[k : k + BATCH]
            n = max(rows.hidden[i].shape[0] for i in idx)
            x = torch.zeros(len(idx), n, dim)
            mask = torch.ones(len(idx), n, dtype=torch.bool)
            for r, i in enumerate(idx):
                h = rows.hidden[i]
                x[r, : h.shape[0]] = torch.from_numpy(h.astype(np.float32))
                mask[r, : h.shape[0]] = False
            logits = net(x).masked_fill(mask[..., None], -1e4)  # [batch, pieces, 2]
            t = target[idx]
            loss = torch.nn.functional.cross_entropy(
                logits[:, :, 0], t[:, 0]
            ) + torch.nn.functional.cross_entropy(logits[:, :, 1], t[:, 1])
            opt.zero_grad()
            loss.backward()
            opt.step()
    linears = [net] if kind == "linear" else [net[0], net[2]]
    return [
        (m.weight.detach().numpy().T.astype(np.float32), m.bias.detach().numpy().astype(np.float32))
        for m in linears
    ]


def apply_head(layers: Layers, hidden: np.ndarray) -> np.ndarray:
    """``span_logits`` of ``layers`` over ``hidden`` (as the ONNX head computes them)."""
    x = np.asarray(hidden, dtype=np.float32)
    for k, (w, b) in enumerate(layers):
        x = x @ w + b
        if k < len(layers) - 1:
            x = np.maximum(x, 0.0)
    return x


@dataclass
class Question:
    """A dev question's gold passages as read: per window, sentence pieces' hidden states and
    sentence numbers (into ``sentences``), and the answers."""

    sentences: list[str]
    windows: list[tuple[np.ndarray, np.ndarray]]
    answers: list[str]
    extractive: bool
    source: str


def gold_readings(reader: Reader, sets: dict[str, list[Pool]]) -> list[Question]:
    """Every pool question's gold passages read together with the question."""
    out = []
    for name, pools in sets.items():
        for q in pools:
            gold = [(t, s) for t, s, g in q["pool"] if any(g)]
            if not gold:
                continue
            flat = [x for _, s in gold for x in s]
            base = np.cumsum([0] + [len(s) for _, s in gold])
            windows = reader.enc.windows(q["question"], gold)
            read = []
            for w, h in zip(windows, reader.hidden(windows), strict=True):
                sent = np.asarray(w.sentence_of)
                read.append((h, sent[sent >= 0] + base[w.passage]))
            text = " ".join(flat).lower()
            answers = [a for a in q["answers"] if a.strip()]
            extractive = any(a.strip().lower() in text for a in answers)
            out.append(Question(flat, read, answers, extractive, name))
    return out


def predict(layers: Layers, q: Question, tokenizer: Any) -> str:
    """The best span's text over the question's gold windows."""
    best: tuple[float, int, int, int] | None = None
    for h, sent in q.windows:
        for s, sp in best_spans(apply_head(layers, h), sent).items():
            if best is None or sp.score > best[0]:
                best = (sp.score, s, sp.first, sp.last)
    if best is None:
        return ""
    _, s, first, last = best
    a, b = char_span(tokenizer, q.sentences[s], first, last)
    return q.sentences[s][a:b]


def score(preds: Sequence[str], questions: Sequence[Question]) -> dict[str, Any]:
    """Mean F1 and EM, all questions and the extractive ones, per source and together."""
    out: dict[str, Any] = {}
    groups = {"all": list(range(len(questions)))}
    for name in dict.fromkeys(q.source for q in questions):
        groups[name] = [i for i, q in enumerate(questions) if q.source == name]
    for g, idx in groups.items():
        for sub, keep in (
            ("all", idx),
            ("extractive", [i for i in idx if questions[i].extractive]),
        ):
            if not keep:
                continue
            out[f"{g}/{sub}"] = {
                "n": len(keep),
                "f1": round(
                    float(np.mean([f1(preds[i], questions[i].answers) or 0.0 for i in keep])), 4
                ),
                "em": round(
                    float(
                        np.mean([exact_match(preds[i], questions[i].answers) or 0.0 for i in keep])
                    ),
                    4,
                ),
            }
    return out


def through_prune(model_dir: Path, sets: dict[str, list[Pool]]) -> dict[str, Any]:
    """Span F1/EM where the span is :func:`~ragsieve.tag.prune.prune`'s on the whole pool
    (defaults: the stacker, both hops), and how often the tagger gave one."""
    from ragsieve.tag.prune import prune
    from ragsieve.tag.settings import TaggerSettings

    # The pruner's own mechanics, carrying off, as this measure has always read them.
    bare = TaggerSettings(lead=False, link=False)
    tagger = OnnxTagger(model_dir)
    if not tagger.has_span:
        raise ConfigError(f"the tagger in {model_dir} has no span head: fit one first")
    out: dict[str, Any] = {}
    for name, pools in sets.items():
        f, e, given = [], [], 0
        for q in pools:
            pruned = prune(tagger, q["question"], [(t, s) for t, s, _ in q["pool"]], bare)
            pred = pruned.span.text if pruned.span is not None else ""
            given += pruned.span is not None
            answers = [a for a in q["answers"] if a.strip()]
            f.append(f1(pred, answers) or 0.0)
            e.append(exact_match(pred, answers) or 0.0)
        out[name] = {
            "n": len(pools),
            "f1": round(float(np.mean(f)), 4),
            "em": round(float(np.mean(e)), 4),
            "with_span": given,
        }
    return out


def read_head(model_dir: Path) -> Layers:
    """The span head's layers as the folder's int8 graph stores them."""
    import onnx
    from onnx import numpy_helper

    from ragsieve.tag.span import SPAN_HEAD

    m = onnx.load(str(model_files(model_dir)[0]))
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    layers = []
    k = 0
    while f"{SPAN_HEAD}{k}.weight" in inits:
        layers.append((inits[f"{SPAN_HEAD}{k}.weight"], inits[f"{SPAN_HEAD}{k}.bias"]))
        k += 1
    if not layers:
        raise ConfigError(f"the tagger in {model_dir} has no span head: fit one first")
    return layers


def write_head(model_dir: Path, layers: Layers, info: dict[str, Any]) -> None:
    """The folder's graphs with the head (every other output unchanged), ``span.json`` and the
    model card's span section (replacing an earlier one)."""
    from ragsieve.tag.graph import add_span_head

    for name in MODEL_FILES.values():
        if (model_dir / name).is_file():
            add_span_head(model_dir / name, model_dir / name, layers)
    (model_dir / SPAN_FILE).write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    write_card(model_dir, info)


def write_card(model_dir: Path, info: dict[str, Any]) -> None:
    """The model card's span section (replacing an earlier one), where the folder has a card."""
    card = model_dir / "MODEL_CARD.md"
    if card.is_file():
        text = card.read_text("utf-8")
        at = text.find(CARD_HEADING)
        if at >= 0:
            nxt = text.find("\n## ", at + len(CARD_HEADING))
            text = text[:at] + (text[nxt + 1 :] if nxt >= 0 else "")
        card.write_text(text.rstrip() + "\n\n" + card_section(info), "utf-8")


CARD_HEADING = "## Span head"
HEAD_NAMES = {"linear": "a linear", "mlp": "an MLP (ReLU)"}


def card_section(info: dict[str, Any]) -> str:
    """The model card's section on the span head."""
    dev = info["dev"][info["head"]]["all/all"]
    ext = info["dev"][info["head"]].get("all/extractive", dev)
    sizes = " -> ".join(str(w[0]) for w in info["layers"])
    return (
        f"{CARD_HEADING} (`python -m ragsieve.tag.fit.span`)\n\n"
        f"`{SPAN_OUTPUT}` ([batch, word pieces, 2]: start and end logits) is "
        f"{HEAD_NAMES[info['head']]} head ({sizes} -> 2) on the frozen last hidden state, "
        f"fitted on the CPU on {info['train_rows']} training windows (train split: "
        f"{', '.join(info['train_rows_by_source'])}) whose gold sentence holds the answer. "
        f"Dev (HotpotQA dev questions and SQuAD train dev articles, the gold passages given): "
        f"F1 {dev['f1']}, EM {dev['em']} over {dev['n']} questions; F1 {ext['f1']}, EM "
        f"{ext['em']} over the {ext['n']} whose answer the gold passages spell. Details in "
        f"`{SPAN_FILE}`.\n"
    )


def _say(t0: float, what: str) -> None:
    print(f"[{time.perf_counter() - t0:5.0f} s] {what}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Fit and write (or measure); a bad option or folder is one line on stderr and a non-zero
    exit."""
    return run_main(_run, argv)


def _run(argv: Sequence[str] | None) -> None:
    ap = OneLineParser(prog="python -m ragsieve.tag.fit.span", description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=None, help="tagger folder (default: shipped)")
    ap.add_argument("--examples", type=Path, default=None, help="saved examples (.jsonl.xz)")
    ap.add_argument("--head", choices=("auto", "linear", "mlp"), default="auto")
    ap.add_argument("--hotpot", type=int, default=600, help="HotpotQA train questions")
    ap.add_argument("--squad", type=int, default=5000, help="SQuAD train questions")
    ap.add_argument("--qed", type=int, default=2500, help="QED train questions")
    ap.add_argument("--evidence", type=int, default=500, help="HotpotQA evidence-only questions")
    ap.add_argument("--ircot", type=int, default=300, help="IRCoT train questions (200-499)")
    ap.add_argument("--musique", type=int, default=100, help="MuSiQue train questions")
    ap.add_argument("--rows", type=int, default=None, help="at most N training windows")
    ap.add_argument("--dev-squad", type=int, default=300, help="SQuAD dev-split questions")
    ap.add_argument("--limit", type=int, default=None, help="at most N questions per dev set")
    ap.add_argument("--measure", choices=("dev", "test"), default=None, help="score, no fit")
    args = ap.parse_args(argv)
    check_positive(args, "hotpot", "squad", "qed", "evidence", "ircot", "musique", "rows")
    check_positive(args, "dev_squad", "limit")
    from ragsieve.tag.model import shipped_model_dir

    model_dir = args.model if args.model is not None else shipped_model_dir()
    t0 = time.perf_counter()
    reader = Reader(model_dir)  # a bad folder fails before the data
    data = find_data_dir()
    if args.measure:
        layers = read_head(model_dir)
        sets = load_split(args.measure, data, args.limit, squad=args.dev_squad)
        questions = gold_readings(reader, sets)
        preds = [predict(layers, q, reader.enc.tok) for q in questions]
        report = {
            "split": args.measure,
            "given_gold_passages": score(preds, questions),
            "through_prune": through_prune(model_dir, sets),
        }
        print(json.dumps(report, indent=2))
        return
    if args.examples is not None:
        if not args.examples.is_file():
            raise InputError(f"examples file {args.examples} not found")
        examples = load_examples(args.examples)
        data_note: dict[str, Any] = {"examples": str(args.examples)}
    else:
        sizes = {
            "hotpot": args.hotpot,
            "hotpot_evidence": args.evidence,
            "squad_train": args.squad,
            "qed": args.qed,
            "ircot": args.ircot,
            "musique": args.musique,
        }
        examples = span_examples(data, sizes, seed=13)
        data_note = {"built": sizes, "seed": 13}
    _say(t0, f"{len(examples)} examples")
    rows = training_rows(reader, examples, args.rows)
    t_rows = time.perf_counter() - t0
    _say(t0, f"{len(rows.hidden)} training windows")
    dev = gold_readings(reader, load_split("dev", data, args.limit, squad=args.dev_squad))
    _say(t0, f"{len(dev)} dev questions read")
    kinds = ["linear", "mlp"] if args.head == "auto" else [args.head]
    fitted, dev_scores = {}, {}
    for kind in kinds:
        fitted[kind] = fit_head(rows, kind)
        preds = [predict(fitted[kind], q, reader.enc.tok) for q in dev]
        dev_scores[kind] = score(preds, dev)
        _say(t0, f"{kind} head: dev {dev_scores[kind]['all/all']}")
    kind = kinds[0]
    if len(kinds) == 2 and (
        dev_scores["mlp"]["all/all"]["f1"] >= dev_scores["linear"]["all/all"]["f1"] + MLP_MARGIN
    ):
        kind = "mlp"
    info = {
        "output": SPAN_OUTPUT,
        "input": "last hidden state (the token head's input), frozen",
        "head": kind,
        "layers": [list(w.shape) for w, _ in fitted[kind]],
        "max_span_pieces": MAX_SPAN_PIECES,
        "fit": {
            "epochs": EPOCHS,
            "batch": BATCH,
            "lr": LR,
            "weight_decay": WEIGHT_DECAY,
            "seed": SEED,
            "mlp_hidden": MLP_HIDDEN,
            "mlp_margin": MLP_MARGIN,
        },
        "train_rows": len(rows.hidden),
        "train_rows_by_source": {s: rows.source.count(s) for s in dict.fromkeys(rows.source)},
        "data": {**data_note, "split": "train (data.py's splits); dev: pools.load_split('dev')"},
        "dev": {"split": "dev", "dev_squad": args.dev_squad, "limit": args.limit, **dev_scores},
        "seconds": {"rows": round(t_rows, 1), "total": round(time.perf_counter() - t0, 1)},
        "command": " ".join(
            ["python -m ragsieve.tag.fit.span", *(argv if argv is not None else sys.argv[1:])]
        ),
    }
    write_head(model_dir, fitted[kind], info)
    best = dev_scores[kind]["all/all"]
    print(
        f"span head ({kind}) on {len(rows.hidden)} windows: dev F1 {best['f1']} EM {best['em']} "
        f"({best['n']} questions) -> {model_dir}"
    )


if __name__ == "__main__":
    sys.exit(main())
