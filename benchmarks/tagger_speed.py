"""The tag stage against the raw int8 forward passes over the same tokens (issue 31 (f)).

    .venv/bin/python -m benchmarks tagger_speed [--questions 30] [--batch-size N] [--workers N]

AMOR HotpotQA pools (10 paragraphs), both hops, the shipped model at its defaults. One warm
process: for each question, ``prune`` is timed whole; the windows of every reading it made are
recorded and then fed to the same onnxruntime session in the same length-sorted batches, timed
alone (the floor: what the model costs), once one run after another and once two in flight
(``embed.onnx.run_each``, what ``prune`` does). Printed: seconds per question of each, and the
ratios. ``--batch-size`` overrides the tagger's windows per run (default: one; 16 before issue
34); ``--workers 1`` runs the tagger's windows one after another (before stop 40).

``--guards N`` then times ``prune`` with the shipped file against a copy without its attention
NaN guards (``embed.graph.drop_nan_guards``, what the training export now writes), N rounds
alternating over the same questions, and checks that both keep the same sentences.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import amor_pools

import ragsieve.embed.onnx as onnx
from ragsieve.tag.model import DEFAULT_BATCH_SIZE, OnnxTagger, Passage, Tagged
from ragsieve.tag.prune import prune
from ragsieve.tag.settings import TaggerSettings

#: The pruner as this benchmark has always timed it: no lead or link carrying.
BARE = TaggerSettings(lead=False, link=False)


class Recording:
    """The shipped tagger, recording every (question, passages) it is asked to read."""

    name = "tagger"

    def __init__(self, inner: OnnxTagger) -> None:
        self.inner = inner
        self.calls: list[tuple[str, list[Passage]]] = []
        self.threshold = inner.threshold
        self.passage_threshold = inner.passage_threshold
        self.stacker = inner.stacker  # the default decision: stacked where the model has one

    def tag(self, question: str, passages: Sequence[Passage]) -> list[Tagged]:
        self.calls.append((question, list(passages)))
        return self.inner.tag(question, passages)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    ap.add_argument("--workers", type=int, default=onnx.RUN_WORKERS)
    ap.add_argument("--guards", type=int, default=0, help="rounds of with/without NaN guards")
    args = ap.parse_args()
    onnx.RUN_WORKERS = args.workers
    tagger = OnnxTagger(batch_size=args.batch_size)
    rec = Recording(tagger)
    prune(rec, "warm up", [("t", ["One sentence."])], BARE)
    enc, sess = tagger._encoder, tagger._session  # the same objects inference uses
    assert enc is not None
    pools = amor_pools(args.questions)
    whole, raw, raw2, tokens = [], [], [], 0
    for question, pool in pools:
        rec.calls.clear()
        t0 = time.perf_counter()
        prune(rec, question, pool, BARE)
        whole.append(time.perf_counter() - t0)
        windows = [w for q, ps in rec.calls for w in enc.windows(q, ps)]
        tokens += sum(len(w.ids) for w in windows)
        order = sorted(range(len(windows)), key=lambda i: len(windows[i].ids))
        batches = [
            enc.batch([windows[i] for i in order[s : s + tagger.batch_size]])
            for s in range(0, len(order), tagger.batch_size)
        ]
        feeds = [
            {k: a[k] for k in ("input_ids", "attention_mask", "token_type_ids")} for a in batches
        ]
        t0 = time.perf_counter()
        for feed in feeds:
            sess.run(None, feed)
        raw.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        onnx.run_each(sess, feeds)
        raw2.append(time.perf_counter() - t0)
    w, f, f2 = float(np.sum(whole)), float(np.sum(raw)), float(np.sum(raw2))
    n = len(whole)
    pieces = tokens / n
    print(f"{n} questions, batch size {tagger.batch_size}, {pieces:.0f} word pieces a question")
    print(
        f"tag stage (prune, both hops, {onnx.RUN_WORKERS} in flight): {w / n:.3f} s/q "
        f"(p50 {np.median(whole):.3f})"
    )
    print(
        f"raw int8 forward, same windows, one after another: {f / n:.3f} s/q "
        f"(p50 {np.median(raw):.3f})"
    )
    print(
        f"raw int8 forward, same windows, {onnx.RUN_WORKERS} in flight: {f2 / n:.3f} s/q "
        f"(p50 {np.median(raw2):.3f})"
    )
    print(f"ratio: {w / f:.2f}x the sequential forward, {w / f2:.2f}x the in-flight one")
    if args.guards:
        guards(tagger, pools, args.guards)


def guards(shipped: OnnxTagger, pools: list[tuple[str, list[Passage]]], rounds: int) -> None:
    """``prune`` with the shipped file and with a copy without NaN guards, alternating."""
    import shutil
    import tempfile

    from ragsieve.embed.graph import drop_nan_guards

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tagger"
        shutil.copytree(shipped.model_dir, folder)
        dropped = drop_nan_guards(folder / "model.onnx")
        edited = OnnxTagger(folder, batch_size=shipped.batch_size)
        taggers = {"shipped": shipped, "no guards": edited}
        times: dict[str, list[float]] = {k: [] for k in taggers}
        kept: dict[str, list[Any]] = {k: [] for k in taggers}
        prune(edited, "warm up", [("t", ["One sentence."])], BARE)
        for r in range(rounds):
            for name in taggers if r % 2 == 0 else reversed(list(taggers)):
                for q, pool in pools:
                    t0 = time.perf_counter()
                    out = prune(taggers[name], q, pool, BARE)
                    times[name].append(time.perf_counter() - t0)
                    if r < 2:
                        kept[name].append([(k.passage, k.sentence) for k in out.kept])
        same = kept["shipped"] == kept["no guards"]
        print(f"{dropped} NaN guards dropped; {rounds} rounds alternating; same kept: {same}")
        for name, ts in times.items():
            print(f"{name}: p50 {np.median(ts):.3f} s, mean {np.mean(ts):.3f} s a question")


if __name__ == "__main__":
    main()
