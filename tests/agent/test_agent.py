"""The configuration agent: grid-search labels on real chunks, Algorithm 6 training on real
embeddings, numpy inference, save/load, and its use inside ``carrot[agent=true]``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragsieve.agent.features import agent_features
from ragsieve.agent.model import PARAM_RANGES, SCORERS, AgentModel, shipped_agent_dir
from ragsieve.agent.predict import ConfigAgent
from ragsieve.agent.train import (
    GRID_FILE,
    AgentTrainConfig,
    Query,
    grid_labels,
    train_agent,
    train_network,
)
from ragsieve.errors import ConfigError
from ragsieve.index import Index
from ragsieve.methods import get_method
from ragsieve.text.tokens import count_tokens
from ragsieve.training import CHECKPOINT, RunOptions

pytestmark = pytest.mark.integration

BEES = [
    "How do honey bees tell each other where flowers are?",
    "What is the waggle dance of bees?",
    "How do bees make honey from nectar?",
    "Why do honey bee colonies swarm?",
]
SPACE = [
    "When was Voyager 1 launched?",
    "What did Voyager find at Jupiter?",
    "Has Voyager left the solar system?",
    "What is on the Voyager golden record?",
]


def _chunks(sample_index_dir: Path, query: str, n: int = 3) -> list[str]:
    from ragsieve.retrieve import get_retriever

    idx = Index.open(sample_index_dir)
    return [s.chunk.text for s in get_retriever("dense", idx).retrieve([query], n)[0]]


def _toy_training(sample_index_dir: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    qs = BEES + SPACE
    x = np.stack([agent_features(q, _chunks(sample_index_dir, q)) for q in qs])
    y = np.asarray([0] * len(BEES) + [3] * len(SPACE))
    p = np.tile(np.asarray([[0.1, 0.5, 0.2]], dtype=np.float32), (len(qs), 1))
    p[len(BEES) :] = [0.9, 0.2, 0.8]
    return x, y, p


def test_features_are_query_and_mean_chunk_embeddings(sample_index_dir: Path) -> None:
    chunks = _chunks(sample_index_dir, SPACE[0])
    x = agent_features(SPACE[0], chunks)
    assert x.shape == (768,) and x.dtype == np.float32
    assert np.linalg.norm(x[:384]) == pytest.approx(1.0, abs=1e-4)  # a unit query vector
    alone = agent_features(SPACE[0], [])
    assert np.allclose(alone, np.concatenate([x[:384], np.zeros(384)]), atol=1e-5)


def test_algorithm_6_learns_real_query_domains_and_is_reproducible(
    sample_index_dir: Path, tmp_path: Path
) -> None:
    x, y, p = _toy_training(sample_index_dir)
    cfg = AgentTrainConfig(pairs=256, epochs=15)
    logs: list[str] = []
    run = RunOptions(seed=3)
    w1, losses, stats = train_network(x, y, p, cfg, tmp_path / "a", run, logs.append)
    assert stats["finished"] and stats["steps"] == 15 * 8
    # Stopped mid-epoch and resumed: the weights and epoch losses of the uninterrupted run.
    out = tmp_path / "b"
    _, _, first = train_network(x, y, p, cfg, out, RunOptions(seed=3, stop_after=20), logs.append)
    assert not first["finished"] and (out / CHECKPOINT).is_file()
    w2, losses2, _ = train_network(x, y, p, cfg, out, run, lambda _: None)
    assert all(np.array_equal(w1[k][0], w2[k][0]) for k in w1)  # fixed seed, same weights
    assert losses2 == losses and not (out / CHECKPOINT).exists()
    assert logs and set(losses) == {"con", "cla", "reg"}
    model = AgentModel(w1, {"scorers": list(SCORERS), "embedder": "minilm"})
    probs, params = model.predict(x)
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert np.array_equal(np.argmax(probs, axis=1), y)  # separable domains are learned
    for j, name in enumerate(("iterations", "c", "lambda_")):
        lo, hi = PARAM_RANGES[name]
        assert np.all((params[:, j] >= lo) & (params[:, j] <= hi))
    # Regression moves towards each domain's targets.
    assert params[: len(BEES), 0].mean() < params[len(BEES) :, 0].mean()
    model.save(tmp_path / "agent")
    agent = ConfigAgent.load(tmp_path / "agent")
    pred = agent.predict(SPACE[1], _chunks(sample_index_dir, SPACE[1]))
    assert pred.reranker == "bm25" and pred.iterations >= 1
    with pytest.raises(ConfigError, match="train-agent"):
        ConfigAgent.load(tmp_path / "missing")


def test_train_agent_stops_in_the_grid_search_and_resumes(
    shared_data: Path, tmp_path: Path
) -> None:
    cfg = AgentTrainConfig(qasper=3, msmarco=6, candidates=3, pairs=64, epochs=2)
    cfg.grid = {"iterations": [1, 10], "c": [2.4], "lambda_": [0.0, 1.0]}
    out = tmp_path / "agent"
    quick = RunOptions(seed=13, time_limit_min=1e-9, log=lambda _: None)
    stopped = train_agent(out, shared_data, cfg, opts=quick)
    assert not stopped["training"]["train"]["finished"]
    assert (out / GRID_FILE).is_file() and not (out / "agent.npz").exists()
    logs: list[str] = []
    meta = train_agent(out, shared_data, cfg, opts=RunOptions(seed=13, log=logs.append))
    assert any("resuming the grid search at query 2/9" in m for m in logs)
    t = meta["training"]
    assert t["train"]["finished"] and t["queries"] == 9 and t["labelled"] >= 4
    assert not (out / GRID_FILE).exists() and not (out / CHECKPOINT).exists()
    card = (out / "MODEL_CARD.md").read_text("utf-8")
    assert t["data_sha256"]["qasper/questions_train.json"] in card
    assert len(t["data_sha256"]) == 3 and t["seed"] == 13
    pred = ConfigAgent.load(out).predict("when was the berlin wall built", ["The wall went up."])
    assert pred.reranker in SCORERS


def test_grid_labels_on_real_chunks(sample_index_dir: Path) -> None:
    question = "When was Voyager 1 launched?"
    texts = _chunks(sample_index_dir, question, 3)
    evidence = list(texts)  # every candidate is gold
    q = Query(question, texts, [count_tokens(t) for t in texts], evidence, "test")
    cfg = AgentTrainConfig(candidates=3, budget=1024)
    cfg.grid = {"iterations": [1, 10], "c": [2.4], "lambda_": [0.0, 1.0]}
    got = grid_labels(q, cfg)
    # Selection maximises benefit W, not utility, so every run may pick the same context (no
    # preference, None); when runs differ the label must be a scorer with the best utility.
    if got is not None:
        label, params, info = got
        assert 0 <= label < len(SCORERS)
        assert params[0] in (1, 10) and params[1] == 2.4 and params[2] in (0.0, 1.0)
        best = max(info["utilities"].values())
        assert info["utilities"][SCORERS[label]] == best
        assert 0.0 < best <= 1.0
    # No gold among the candidates: every run has utility 0, no preference, dropped.
    none = Query(question, texts, q.costs, ["an unrelated sentence about cheese"], "test")
    assert grid_labels(none, cfg) is None


@pytest.mark.skipif(
    not (shipped_agent_dir() / "agent.npz").is_file(), reason="no shipped agent yet"
)
def test_shipped_agent_drives_carrot(sample_index_dir: Path) -> None:
    agent = ConfigAgent.load()
    assert agent.model.meta["training"]["labelled"] > 0
    m = get_method("carrot", Index.open(sample_index_dir), agent=True)
    r = m.retrieve(["How do honey bees communicate?"])[0]
    pred = r.trace["selection"]["agent"]
    assert pred["reranker"] in SCORERS and r.trace["reranker"] == pred["reranker"]
    assert r.trace["selection"]["iterations"] == pred["iterations"]
    assert r.context.n_tokens <= 1024 and "agent" in r.timings
