"""Dev only: could the tagger's bridge hop read fewer passages? For the gold passages the hop
raises (their second reading passes the passage gate and beats the first by 0.05, or turns the
passage on), their rank among the other passages by BM25 of the hop's added sentences.

    .venv/bin/python benchmarks/hop_bm25.py      # the stacker's dev pools, HotpotQA part

A hop that read only the top-k by such a cheap lexical match would keep the share printed for
k of them; a floor on the first reading's passage relevance is measured the same way.
Results in BENCHMARKS.md, issue 31, "Stop 39".
"""

from __future__ import annotations

import collections
import time

import numpy as np

from ragsieve.data import find_data_dir
from ragsieve.rerank.bm25 import BM25Index
from ragsieve.tag.fit_stack import dev_pools
from ragsieve.tag.model import OnnxTagger


def main() -> None:
    tagger = OnnxTagger()
    th, pth = tagger.threshold, tagger.passage_threshold
    gold_ranks: list[int] = []
    raised_ranks: list[int] = []
    #: First-reading passage relevance of the raised gold passages and of the distractors, and
    #: how many distractors the second reading passes through the gate.
    raised_rel: list[float] = []
    distractor_rel: list[float] = []
    distractors_on = 0
    hop_s = [0.0, 0.0]
    n = 0
    for pools in dev_pools(find_data_dir(), squad=0).values():
        for q in pools:
            passages = [(t, s) for t, s, _ in q["pool"]]
            t0 = time.perf_counter()
            first = tagger.tag(q["question"], passages)
            hop_s[0] += time.perf_counter() - t0
            with_kept = [i for i, t in enumerate(first) if t.relevance >= pth and t.kept(th)]
            if not with_kept:
                continue
            bridge = max(with_kept, key=lambda i: (first[i].relevance, float(first[i].probs.max())))
            added = " ".join(str(passages[bridge][1][j]).strip() for j in first[bridge].kept(th))
            others = [i for i in range(len(passages)) if i != bridge]
            t0 = time.perf_counter()
            second = tagger.tag(f"{q['question']} {added}", [passages[i] for i in others])
            hop_s[1] += time.perf_counter() - t0
            n += 1
            texts = [f"{passages[i][0]}: {' '.join(passages[i][1])}" for i in others]
            order = list(np.argsort(-BM25Index(texts).scores(added), kind="stable"))
            for k, i in enumerate(others):
                s, f = second[k], first[i]
                if not any(q["pool"][i][2]):
                    distractor_rel.append(f.relevance)
                    distractors_on += int(s.relevance >= pth)
                    continue
                rank = order.index(k) + 1
                gold_ranks.append(rank)
                if s.relevance >= pth and (
                    s.probs.max() > f.probs.max() + 0.05 or f.relevance < pth
                ):
                    raised_ranks.append(rank)
                    raised_rel.append(f.relevance)
    print(f"{n} dev questions with a hop; hop 1 {hop_s[0] / n:.3f} s, hop 2 {hop_s[1] / n:.3f} s")
    tops = " | ".join(f"top {k}" for k in range(1, 10))
    print(f"| gold passages (not the bridge) | n | {tops} |")
    print("|---|---:|" + "---:|" * 9)
    for name, ranks in (("all", gold_ranks), ("raised by the hop", raised_ranks)):
        c = collections.Counter(ranks)
        cum = np.cumsum([c.get(k, 0) for k in range(1, 10)]) / max(len(ranks), 1)
        print(f"| {name} | {len(ranks)} | " + " | ".join(f"{x:.2f}" for x in cum) + " |")
    raised, dis = np.asarray(raised_rel), np.asarray(distractor_rel)
    print(f"\ndistractors passing the hop's gate: {distractors_on} of {len(dis)}")
    print(
        "first-reading relevance, 10th percentile: raised gold "
        f"{np.quantile(raised, 0.1):.4f}, distractors {np.quantile(dis, 0.1):.4f}"
    )
    for floor in (0.003, 0.01, 0.02, 0.05):
        print(
            f"a floor of {floor} on it skips {np.mean(dis < floor):.0%} of the distractors "
            f"and {np.mean(raised < floor):.0%} of the raised gold passages"
        )


if __name__ == "__main__":
    main()
