"""Refit the tagger's passage head on its own hidden state, on the CPU, in minutes.

    python -m ragsieve.tag.fit.head --out DIR [--model DIR] [--squad 300] [--limit N]

The passage head is one linear layer over the mean-pooled last hidden state. Training pulls it
towards the cross-encoder's score (OpenProvence's distillation), and that teacher cannot tell a
HotpotQA distractor (chosen to share the question's words) from evidence: on the dev pools its
AUC is 0.674 on first readings and 0.545 on the bridge hop's, the head's 0.774 and 0.678, and a
logistic regression on the head's own input 0.858 and 0.822 (``passage_probe.py``, commit ef7752d).
This refit replaces the head with that logistic regression, the encoder untouched:

- **data**: the tagger's *training* pools (:func:`~ragsieve.tag.fit.pools.train_pools`: every
  HotpotQA training question and ``--squad`` SQuAD train questions), each read as inference
  reads it (both hops); every first and second reading is a row, labelled 1 when the passage
  holds a gold sentence. Two passages of the next pool, read with the question, are off-topic
  rows labelled 0: whole-passage rejection stays taught.
- **fit**: standardised logistic regression, its L2 strength by 5-fold log loss grouped by
  question; the standardisation is folded into the weights.
- **operating point**: the sentence threshold is kept; ``passage_threshold`` is moved so the
  new head passes the same share of gold first readings as the old one did at its threshold.

``DIR`` gets the model folder with the new head (and without the exporter's NaN guards) and no
``stack.json``: the stacker reads the head, so refit it next (``python -m
ragsieve.tag.fit.stack --model DIR``). About 6 minutes on 2 cores. No dev or test question is
read.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.data import find_data_dir
from ragsieve.embed.onnx import MODEL_FILES
from ragsieve.errors import ConfigError, InputError
from ragsieve.numeric import sigmoid
from ragsieve.tag.fit.args import OneLineParser, check_positive, run_main
from ragsieve.tag.fit.pools import Pool, train_pools
from ragsieve.tag.model import CONFIG_FILE, OnnxTagger
from ragsieve.tag.prune import readings
from ragsieve.tag.stack import STACK_FILE

C_GRID = (0.001, 0.003, 0.01, 0.03, 0.1)
OFF_TOPIC = 2


def head_rows(tagger: OnnxTagger, sets: dict[str, list[Pool]]) -> dict[str, np.ndarray]:
    """Pooled states ``x``, labels ``y``, question groups ``group``, whether a row is a first
    reading of an on-topic passage (``first``) and the old head's relevance ``old``."""
    xs: list[np.ndarray] = []
    ys: list[int] = []
    groups: list[int] = []
    first: list[bool] = []
    old: list[float] = []
    if not tagger.pooled:
        raise ConfigError("the head is fitted on pooled states: build the tagger with pooled=True")
    pools = [q for qs in sets.values() for q in qs]
    for k, q in enumerate(pools):
        passages = [(t, s) for t, s, _ in q["pool"]]
        gold = [int(any(g)) for _, _, g in q["pool"]]
        r = readings(tagger, q["question"], passages)
        other = pools[(k + 1) % len(pools)]["pool"][:OFF_TOPIC] if len(pools) > 1 else []
        off = tagger.tag(q["question"], [(t, s) for t, s, _ in other])
        read = [(t, gold[i], True) for i, t in enumerate(r.first)]
        read += [(t, gold[i], False) for i, t in enumerate(r.second) if t is not None]
        read += [(t, 0, False) for t in off]
        for t, y, is_first in read:
            if t.pooled is None:  # a passage with no sentence to read
                continue
            xs.append(t.pooled)
            ys.append(y)
            groups.append(k)
            first.append(is_first)
            old.append(t.relevance)
    return {
        "x": np.vstack(xs).astype(np.float64),
        "y": np.asarray(ys, dtype=np.int64),
        "group": np.asarray(groups),
        "first": np.asarray(first),
        "old": np.asarray(old),
    }


def fit_head(rows: dict[str, np.ndarray]) -> tuple[np.ndarray, float, dict[str, Any]]:
    """(weight, bias) of ``logit = pooled @ weight + bias``, and the fit's report."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss, roc_auc_score
    from sklearn.model_selection import GroupKFold
    from sklearn.preprocessing import StandardScaler

    x, y, group = rows["x"], rows["y"], rows["group"]
    if len(set(y.tolist())) < 2:
        raise InputError("the training pools need both gold and other passages")
    folds = min(5, len(set(group.tolist())))
    cv = {}
    for c in C_GRID:
        losses = []
        for a, b in GroupKFold(folds).split(x, y, group):
            sc = StandardScaler().fit(x[a])
            lr = LogisticRegression(C=c, max_iter=5000).fit(sc.transform(x[a]), y[a])
            losses.append(log_loss(y[b], lr.predict_proba(sc.transform(x[b]))[:, 1], labels=[0, 1]))
        cv[c] = float(np.mean(losses))
    c = min(cv, key=lambda k: cv[k])
    sc = StandardScaler().fit(x)
    lr = LogisticRegression(C=c, max_iter=5000).fit(sc.transform(x), y)
    weight = lr.coef_[0] / sc.scale_
    bias = float(lr.intercept_[0] - np.sum(lr.coef_[0] * sc.mean_ / sc.scale_))
    report = {
        "rows": len(y),
        "gold_rows": int(y.sum()),
        "questions": len(set(group.tolist())),
        "cv_log_loss": {str(k): round(v, 5) for k, v in cv.items()},
        "C": c,
        "train_auc_old_head": round(float(roc_auc_score(y, rows["old"])), 4),
        "train_auc_new_head": round(float(roc_auc_score(y, x @ weight + bias)), 4),
    }
    return weight, bias, report


def matched_threshold(
    rows: dict[str, np.ndarray], weight: np.ndarray, bias: float, old: float
) -> float:
    """The new head's passage threshold that passes the share of gold first readings the old
    head passed at ``old`` (0 stays 0: rejection off)."""
    if old <= 0:
        return 0.0
    gold = rows["first"] & (rows["y"] == 1)
    share = float(np.mean(rows["old"][gold] >= old))
    new = sigmoid(rows["x"][gold] @ weight + bias)
    return round(float(np.quantile(new, 1.0 - share)), 4)


def write_model(
    src: Path, out: Path, weight: np.ndarray, bias: float, pth: float, report: dict[str, Any]
) -> None:
    """``src``'s folder with the new head at ``out``, built beside it and moved in whole (a
    failed run leaves ``out`` as it was); its config, training info and card name the refit."""
    from ragsieve.embed.graph import drop_nan_guards
    from ragsieve.tag.graph import replace_passage_head

    tmp = out.with_name(out.name + ".fit_head.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(STACK_FILE, "*.tmp"))
    for name in MODEL_FILES.values():
        if (src / name).is_file():
            replace_passage_head(src / name, tmp / name, weight, bias)
            drop_nan_guards(tmp / name)
    conf = json.loads((tmp / CONFIG_FILE).read_text("utf-8"))
    conf["passage_threshold"] = pth
    (tmp / CONFIG_FILE).write_text(json.dumps(conf, indent=2) + "\n", "utf-8")
    info_path = tmp / "training_info.json"
    info = json.loads(info_path.read_text("utf-8")) if info_path.is_file() else {}
    info["passage_head_refit"] = report
    info_path.write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    card = tmp / "MODEL_CARD.md"
    if card.is_file():
        card.write_text(card.read_text("utf-8").rstrip() + "\n\n" + card_section(report), "utf-8")
    if out.exists():
        old = out.with_name(out.name + ".fit_head.old")
        shutil.rmtree(old, ignore_errors=True)
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old)
    else:
        tmp.rename(out)


def card_section(report: dict[str, Any]) -> str:
    """The model card's section on the refit."""
    return (
        "## Passage head refitted on the CPU (`python -m ragsieve.tag.fit.head`)\n\n"
        "The passage head (384 -> 1 over the mean-pooled last hidden state) was replaced by a "
        "logistic regression on that state, the encoder untouched: "
        f"{report['rows']} readings ({report['gold_rows']} holding gold) of "
        f"{report['questions']} training questions (HotpotQA train, SQuAD train; both hops; "
        f"{OFF_TOPIC} off-topic passages a question), C = {report['C']} by 5-fold grouped log "
        f"loss; training-row AUC {report['train_auc_old_head']} (old head) -> "
        f"{report['train_auc_new_head']}. Passage threshold {report['passage_threshold_old']} -> "
        f"{report['passage_threshold']} (the same share of gold first readings passes). "
        f"Deterministic (lbfgs, fixed pools); {report['seconds']:.0f} s on the CPU.\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Refit and write; a bad option or folder is one line on stderr and a non-zero exit."""
    return run_main(_run, argv)


def _run(argv: Sequence[str] | None) -> None:
    ap = OneLineParser(prog="python -m ragsieve.tag.fit.head", description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=None, help="tagger folder (default: shipped)")
    ap.add_argument("--out", type=Path, required=True, help="where the new folder goes")
    ap.add_argument("--squad", type=int, default=300, help="SQuAD train questions")
    ap.add_argument("--limit", type=int, default=None, help="at most N questions per set")
    args = ap.parse_args(argv)
    check_positive(args, "squad", "limit")
    t0 = time.perf_counter()
    tagger = OnnxTagger(args.model, pooled=True)
    old_pth = tagger.passage_threshold  # loads the model: a bad folder fails before the data
    if args.out.resolve() == tagger.model_dir.resolve():
        raise InputError("--out must differ from --model (the stacker there must be refitted)")
    sets = train_pools(find_data_dir(), args.squad)
    if args.limit:
        sets = {n: qs[: args.limit] for n, qs in sets.items()}
    rows = head_rows(tagger, sets)
    weight, bias, report = fit_head(rows)
    pth = matched_threshold(rows, weight, bias, old_pth)
    report.update(
        passage_threshold_old=old_pth,
        passage_threshold=pth,
        seconds=round(time.perf_counter() - t0, 1),
        pools={n: len(qs) for n, qs in sets.items()},
    )
    write_model(tagger.model_dir, args.out, weight, bias, pth, report)
    print(
        f"passage head refitted on {report['rows']} readings: training AUC "
        f"{report['train_auc_old_head']} -> {report['train_auc_new_head']}, passage threshold "
        f"{old_pth} -> {pth}"
    )
    print(f"-> {args.out} (now: python -m ragsieve.tag.fit.stack --model {args.out})")


if __name__ == "__main__":
    sys.exit(main())
