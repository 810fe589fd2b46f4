"""Two runs in flight (``run_each``) on the packaged MiniLM with int8 activations (a real
session that reads one text a run): the same outputs as one run after another, in feed order,
from concurrent callers and in a forked child."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import ragsieve.embed.onnx as onnx
from ragsieve.embed import index_embedder, int8_activation_build
from ragsieve.embed.base import MiniLMOnnxEmbedder

pytestmark = pytest.mark.integration

TEXTS = [
    "Augustin Fresnel's first lens was installed at Cordouan in 1823.",
    "The Rosetta Stone is a granodiorite stele. It was found in 1799 by French soldiers.",
    "A honey bee colony has one queen.",
    "The Cordouan lighthouse stands at the mouth of the Gironde estuary. " * 5,
]


@pytest.fixture(scope="module")
def a8() -> MiniLMOnnxEmbedder:
    emb = int8_activation_build(index_embedder("minilm"))
    assert isinstance(emb, MiniLMOnnxEmbedder)
    return emb


def _feeds(emb: MiniLMOnnxEmbedder) -> list[dict[str, np.ndarray]]:
    out = []
    for e in emb._tok.encode_batch(TEXTS):
        ids = np.asarray([e.ids], dtype=np.int64)
        out.append(
            {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
        )
    return out


def test_runs_in_flight_give_the_sequential_outputs_in_feed_order(a8: MiniLMOnnxEmbedder) -> None:
    feeds = _feeds(a8)
    in_flight = min(2, os.cpu_count() or 1)
    assert in_flight == onnx.RUN_WORKERS
    sequential = [a8._sess.run(None, f) for f in feeds]
    together = onnx.run_each(a8._sess, feeds)
    assert len(together) == len(feeds)
    for a, b in zip(sequential, together, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    # feeds of different lengths come back in the order they went in
    assert [r[0].shape[1] for r in together] == [f["input_ids"].shape[1] for f in feeds]
    assert len({f["input_ids"].shape[1] for f in feeds}) == len(feeds)


def test_vectors_equal_with_one_run_at_a_time(a8: MiniLMOnnxEmbedder, monkeypatch) -> None:
    two = a8.embed(TEXTS)
    monkeypatch.setattr(onnx, "RUN_WORKERS", 1)
    one = a8.embed(TEXTS)
    assert np.array_equal(one, two)
    assert float(two[0] @ two[3]) > float(two[0] @ two[2])  # Cordouan is nearer than bees


def test_concurrent_callers_each_get_their_own_vectors(a8: MiniLMOnnxEmbedder) -> None:
    """A server's request threads share the pool: each call still gets its own outputs."""
    alone = a8.embed(TEXTS)
    with ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda i: a8.embed([TEXTS[i], TEXTS[-1 - i]]), [0, 1, 2, 3] * 2))
    for j, v in enumerate(got):
        i = j % 4
        assert np.array_equal(v, alone[[i, 3 - i]])


def _child(conn) -> None:  # type: ignore[no-untyped-def]
    emb = int8_activation_build(index_embedder("minilm"))
    assert emb is not None
    conn.send(emb.embed(TEXTS).tolist())
    conn.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_starts_its_own_pool(a8: MiniLMOnnxEmbedder, monkeypatch) -> None:
    """A child forked after the pool started inherits no pool threads; its runs still finish."""
    monkeypatch.setattr(onnx, "RUN_WORKERS", 2)  # the pool runs even on a single core
    parent = a8.embed(TEXTS)
    assert onnx._POOL is not None
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send,))
    proc.start()
    assert recv.poll(120), "the forked child's embedder never answered"
    assert np.array_equal(np.asarray(recv.recv(), dtype=np.float32), parent)
    proc.join(30)
    assert proc.exitcode == 0
