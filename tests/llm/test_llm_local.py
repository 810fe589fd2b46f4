"""The default in-process backend: SmolLM2-135M through llama.cpp (xllamacpp)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ragsieve.errors import LLMError
from ragsieve.llm import LLM, build_answer_messages, build_judge_messages
from ragsieve.llm.local import LlamaCppLLM
from ragsieve.types import Generation

pytestmark = pytest.mark.integration

QUESTION = "What is the capital of Zubrowka?"
CHUNKS = ["Zubrowka exports cheese and timber.", "The capital of Zubrowka is Lutz."]


def test_grounded_answer_with_usage(local_llm: LlamaCppLLM) -> None:
    assert isinstance(local_llm, LLM)
    gen = local_llm.generate(build_answer_messages(QUESTION, CHUNKS), max_tokens=48)
    assert isinstance(gen, Generation)
    assert "Lutz" in gen.text
    assert gen.usage.prompt_tokens > 20  # the chat template + context + question
    assert 0 < gen.usage.completion_tokens <= 48
    assert gen.finish_reason == "stop"
    assert gen.model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert local_llm.name == "local"


def test_temperature_zero_is_deterministic(local_llm: LlamaCppLLM) -> None:
    msgs = [{"role": "user", "content": "Name three colours."}]
    first = local_llm.generate(msgs, max_tokens=16)
    assert first.text
    assert local_llm.generate(msgs, max_tokens=16) == first


def test_a_reply_depends_on_its_prompt_alone(
    local_llm: LlamaCppLLM, corpus_prompts: list[list[dict[str, str]]]
) -> None:
    """llama.cpp's prompt cache, left on (``cache_prompt=True``), changed 2 of these 6 greedy
    replies when the prompts came in reverse order; off (the default), the same prompt gets
    the same reply whatever came before. (Asked again in reverse, every prompt follows another
    prompt than the first time: the case in which the cache changed replies.)"""
    prompts = corpus_prompts
    assert len(prompts) == 6 and not local_llm.cache_prompt
    first = [local_llm.generate(m, max_tokens=24).text for m in prompts]
    backwards = [local_llm.generate(m, max_tokens=24).text for m in reversed(prompts)]
    assert backwards[::-1] == first


def test_max_tokens_and_stop(local_llm: LlamaCppLLM) -> None:
    msgs = [{"role": "user", "content": "Tell me a story about a cat."}]
    gen = local_llm.generate(msgs, max_tokens=5)
    assert gen.usage.completion_tokens == 5
    assert gen.finish_reason == "length"
    full = local_llm.generate(msgs, max_tokens=24).text
    word = full.split()[4]  # stop at the fifth word of the greedy continuation
    stopped = local_llm.generate(msgs, max_tokens=24, stop=[word])
    assert stopped.text.strip() == full[: full.index(word)].strip()
    assert stopped.finish_reason == "stop"


def test_concurrent_calls_are_serialised(local_llm: LlamaCppLLM) -> None:
    msgs = build_answer_messages(QUESTION, CHUNKS)
    expected = local_llm.generate(msgs, max_tokens=24).text
    results: list[str] = []

    def worker() -> None:
        results.append(local_llm.generate(msgs, max_tokens=24).text)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 3


def test_yes_probability_is_a_probability(local_llm: LlamaCppLLM) -> None:
    p_rel = local_llm.yes_probability(build_judge_messages(QUESTION, CHUNKS[1]))
    p_irr = local_llm.yes_probability(build_judge_messages(QUESTION, "Bananas are yellow."))
    # SmolLM2 judges at chance (MODELS.md): only the contract is tested here.
    assert 0.0 <= p_rel <= 1.0 and 0.0 <= p_irr <= 1.0
    probs = local_llm.next_token_logprobs(build_judge_messages(QUESTION, CHUNKS[1]), top=5)
    assert 1 <= len(probs) <= 5
    assert all(lp <= 0.0 for lp in probs.values())


def test_context_overflow_is_llm_error(smollm2_file: Path) -> None:
    # llama.cpp rounds n_ctx up to a multiple of 256, so overflow it by far
    with LlamaCppLLM(smollm2_file, n_ctx=256) as small:
        with pytest.raises(LLMError, match="exceeds the available context size") as err:
            small.generate([{"role": "user", "content": "word " * 1000}], max_tokens=4)
        assert "\n" not in str(err.value)
        assert small.loaded
    assert not small.loaded
