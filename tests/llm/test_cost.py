"""What an answer costs: a local model's answer costs 0 unless prices are given, a remote
model's is priced at SAGE's example prices, and given prices win (the real SmolLM2 on a real
index; the HTTP and viewer sides are in tests/serve, the CLI's in tests/test_cli_ask.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragsieve
from ragsieve.errors import ConfigError
from ragsieve.llm.cost import (
    DEFAULT_PRICE_IN_PER_M,
    DEFAULT_PRICE_OUT_PER_M,
    LOCAL_SPECS,
    Prices,
    answer_prices,
    is_local_llm,
    llm_cost,
)
from ragsieve.llm.gguf import SPLIT_MODELS
from ragsieve.llm.local import LlamaCppLLM
from ragsieve.llm.openai_compat import OpenAICompatLLM

pytestmark = pytest.mark.integration

Q = "Who found the Rosetta Stone?"


def test_which_models_are_local_and_what_they_are_charged(local_llm: LlamaCppLLM) -> None:
    remote = OpenAICompatLLM("gpt-4o-mini", "http://127.0.0.1:9/v1")  # built, never called
    named = LlamaCppLLM(local_llm.model_path, name="my-tuned-model")  # register_llm's kind
    assert set(SPLIT_MODELS) <= set(LOCAL_SPECS)  # every opt-in local model is free
    for llm in (local_llm, named, "local", "local:/models/m.gguf", "qwen-0.5b", "qwen-1.5b"):
        assert is_local_llm(llm), llm
        assert answer_prices(llm) == (0.0, 0.0)
    for llm in (remote, "openai:gpt-4o-mini"):
        assert not is_local_llm(llm), llm
        assert answer_prices(llm) == (DEFAULT_PRICE_IN_PER_M, DEFAULT_PRICE_OUT_PER_M)
    assert answer_prices(local_llm, 0.15, 0.6) == (0.15, 0.6)
    assert answer_prices(remote, 0.15, None) == (0.15, DEFAULT_PRICE_OUT_PER_M)
    named.close()


def test_a_local_answer_costs_0_unless_prices_are_given(
    local_llm: LlamaCppLLM, sample_index_dir: Path
) -> None:
    run = {"method": "naive", "llm": local_llm, "k": 2, "max_tokens": 8}
    free = ragsieve.ask(Q, sample_index_dir, **run)
    assert free.usage.prompt_tokens > 0 and free.cost == 0 and free.to_json()["cost"] == 0
    priced = ragsieve.ask(Q, sample_index_dir, prices=Prices(0.15, 0.6), **run)
    u = priced.usage
    assert priced.cost > 0
    assert priced.cost == pytest.approx(llm_cost(u.prompt_tokens, u.completion_tokens, 0.15, 0.6))
    pair = ragsieve.ask(Q, sample_index_dir, prices=(0.15, 0.6), **run)
    v = pair.usage
    assert pair.cost == pytest.approx(llm_cost(v.prompt_tokens, v.completion_tokens, 0.15, 0.6))
    with pytest.raises(ConfigError, match=r"prices\.in_per_m must be a real number"):
        ragsieve.ask(Q, sample_index_dir, prices=(-1.0, None), **run)
    with pytest.raises(ConfigError, match="unknown run option"):
        ragsieve.ask(Q, sample_index_dir, price_in_per_m=0.15, **run)
