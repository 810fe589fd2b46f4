"""SentenceAttnLinker on the real packaged MiniLM: window coverage, Eq. 3 blocks, normalised rows,
top-T links (Eq. 4), and the two baselines."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ragsieve.errors import ConfigError
from ragsieve.link import (
    AdjacentLinker,
    AttnLinkerConfig,
    CosineLinker,
    SentenceAttnLinker,
    plan_windows,
)

SENTENCES = [
    "Marie Curie was born in Warsaw in 1867.",
    "She moved to Paris to study physics and mathematics.",
    "There she met Pierre Curie, a professor of physics.",
    "They married in 1895 and worked together on radioactivity.",
    "In 1898 the couple discovered polonium and radium.",
    "Polonium was named after her native country.",
    "She received the Nobel Prize in Physics in 1903.",
    "Pierre died in a street accident in 1906.",
    "She took over his professorship at the Sorbonne.",
    "In 1911 she won a second Nobel Prize, in Chemistry.",
    "She founded the Radium Institute in Paris.",
    "During the war she ran mobile X-ray units.",
    "Her daughter Irene also won a Nobel Prize.",
    "Marie Curie died in 1934 of aplastic anaemia.",
]


def test_windows_cover_every_pair_within_the_distance() -> None:
    rng = random.Random(0)
    for d, cap in ((2, 40), (5, 48), (8, 48)):
        cfg = AttnLinkerConfig(distance=d, max_sentence_tokens=cap)
        lengths = [rng.randint(1, cap) for _ in range(200)]
        wins = plan_windows(lengths, cfg)
        assert wins[0][0] == 0 and wins[-1][1] == 200
        for a, b in wins:
            assert sum(lengths[a:b]) <= cfg.max_window_tokens - 2
            assert b - a > d
        for i in range(200):
            for j in range(i + 1, min(200, i + d + 1)):
                assert any(a <= i and j < b for a, b in wins), (i, j)


def test_window_geometry_that_cannot_cover_the_distance_is_refused() -> None:
    with pytest.raises(ConfigError, match="lower distance"):
        AttnLinkerConfig(distance=20, max_sentence_tokens=48)
    with pytest.raises(ConfigError):
        AttnLinkerConfig(distance=0)


@pytest.fixture(scope="module")
def small_window_linker() -> SentenceAttnLinker:
    # Windows of at most 64 word pieces force several overlapping windows over 14 sentences.
    return SentenceAttnLinker(
        AttnLinkerConfig(distance=3, max_sentence_tokens=14, max_window_tokens=64)
    )


def test_rows_are_normalised_and_cover_exactly_the_pairs_within_the_distance(
    small_window_linker: SentenceAttnLinker,
) -> None:
    ids = small_window_linker.link([SENTENCES])[0]
    a = ids.dense()
    n = len(SENTENCES)
    assert len(plan_windows([14] * n, small_window_linker.config)) > 2
    np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=1e-5)
    for i in range(n):
        for j in range(n):
            near = 0 < abs(i - j) <= 3
            assert (a[i, j] > 0) == near, (i, j, a[i, j])
    top = ids.top(2)
    for i, row in enumerate(top):
        assert len(row) == 2
        assert row[0][1] >= row[1][1]
        assert row[0][1] == pytest.approx(a[i].max())
    assert [len(r) for r in small_window_linker.link([[], ["One sentence."]])[1].top(3)] == [0]


def _reference_blocks(ids: list[list[int]], cls: int, sep: int) -> np.ndarray:
    """Eq. 3 computed independently: the fp32 MiniLM's attentions from transformers, averaged
    over layers and heads, summed over each pair of sentences' tokens."""
    import torch
    from transformers import AutoModel

    from ragsieve.embed.base import minilm_dir

    model = AutoModel.from_pretrained(str(minilm_dir()), attn_implementation="eager").eval()
    seq = [cls, *[t for x in ids for t in x], sep]
    with torch.inference_mode():
        att = model(input_ids=torch.tensor([seq]), output_attentions=True).attentions
    mean = sum(x[0].mean(dim=0) for x in att).numpy() / len(att)
    bounds = np.cumsum([1, *[len(x) for x in ids]])
    n = len(ids)
    want = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            want[i, j] = mean[bounds[i] : bounds[i + 1], bounds[j] : bounds[j + 1]].sum()
    return want


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_blocks_are_layer_and_head_means_of_token_attention_summed_per_sentence(
    backend: str,
) -> None:
    lk = SentenceAttnLinker(
        AttnLinkerConfig(distance=3, max_sentence_tokens=14, max_window_tokens=64, backend=backend)
    )
    lk.link([SENTENCES[:2]])  # loads the model
    ids = lk._sentence_ids(SENTENCES[:3])
    (block,) = lk.block_matrices(ids, [(0, 3)])
    want = _reference_blocks(ids, lk._cls, lk._sep)
    if backend == "torch":
        np.testing.assert_allclose(block, want, rtol=1e-4, atol=1e-5)
    else:
        # int8 weights: the same attention to within a few hundredths of a token's mass, and
        # the same strongest link from every sentence.
        np.testing.assert_allclose(block, want, atol=0.05 * block.max())
        off = ~np.eye(3, dtype=bool)
        assert [int(np.argmax(np.where(off[i], block[i], -1))) for i in range(3)] == [
            int(np.argmax(np.where(off[i], want[i], -1))) for i in range(3)
        ]
    # Rows of the attention sum to 1 per token, so a block row sums to at most the sentence's
    # token count (the rest goes to [CLS]/[SEP]).
    assert np.all(block.sum(axis=1) <= np.array([len(x) for x in ids]) + 1e-4)


def test_baselines_link_neighbours_and_similar_sentences() -> None:
    adj = AdjacentLinker(1).link([SENTENCES])[0].top(2)
    assert [j for j, _ in adj[0]] == [1]
    assert sorted(j for j, _ in adj[5]) == [4, 6]
    cos = CosineLinker().link([SENTENCES])[0]
    np.testing.assert_allclose(cos.dense().sum(axis=1), 1.0, atol=1e-5)
    # "Polonium was named after her native country" relates most to the polonium discovery.
    assert cos.top(1)[5][0][0] == 4


def test_forward_passes_are_bounded_by_window_count_and_attention_cells() -> None:
    lk = SentenceAttnLinker(AttnLinkerConfig())
    widths = [100] * 40 + [300] * 7 + [512] * 5
    groups = lk._batches(widths)
    assert [i for g in groups for i in g] == list(range(len(widths)))  # every window, in order
    for g in groups:
        top = max(widths[i] for i in g)
        assert len(g) <= lk.config.batch_size
        assert len(g) == 1 or len(g) * top * top <= lk.config.max_batch_cells
    assert [len(g) for g in groups if widths[g[0]] == 512] == [2, 2, 1]
