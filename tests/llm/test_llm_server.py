"""The real client path: OpenAICompatLLM against a llama.cpp server process on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ragsieve.errors import LLMError
from ragsieve.llm import build_answer_messages, get_llm
from ragsieve.llm.openai_compat import OpenAICompatLLM
from ragsieve.llm.server import ServerOptions, ServerProcess, free_port, start_server

pytestmark = pytest.mark.integration


def test_server_is_healthy_and_local(llama_server: ServerProcess) -> None:
    assert llama_server.alive()
    assert llama_server.host == "127.0.0.1"
    assert httpx.get(llama_server.url + "/health", timeout=60).status_code == 200


def test_grounded_answer_over_http(llama_server: ServerProcess) -> None:
    llm = get_llm(f"openai:smollm2@{llama_server.base_url}", api_key=llama_server.api_key)
    assert isinstance(llm, OpenAICompatLLM)
    msgs = build_answer_messages(
        "What is the capital of Zubrowka?", ["The capital of Zubrowka is Lutz."]
    )
    gen = llm.generate(msgs, max_tokens=48)
    assert "Lutz" in gen.text
    assert gen.usage.prompt_tokens > 20 and gen.usage.completion_tokens > 0
    assert gen.finish_reason == "stop"
    # the same greedy decode as the in-process backend on the same file
    assert llm.generate(msgs, max_tokens=48).text == gen.text


def test_a_reply_over_http_depends_on_its_prompt_alone(
    llama_server: ServerProcess, corpus_prompts: list[list[dict[str, str]]]
) -> None:
    """The client sends no ``cache_prompt`` (other OpenAI-compatible servers refuse unknown
    fields), so the server's default decides: off, the same prompt gets the same reply in any
    order, as in-process (with the server's cache on, 2 or 3 of these 6 changed in reverse,
    twice)."""
    llm = OpenAICompatLLM("smollm2", llama_server.base_url, api_key=llama_server.api_key)
    first = [llm.generate(m, max_tokens=24).text for m in corpus_prompts]
    backwards = [llm.generate(m, max_tokens=24).text for m in reversed(corpus_prompts)]
    assert backwards[::-1] == first


def test_stop_and_max_tokens_over_http(llama_server: ServerProcess) -> None:
    llm = OpenAICompatLLM("smollm2", llama_server.base_url, api_key=llama_server.api_key)
    gen = llm.generate([{"role": "user", "content": "Tell me a story."}], max_tokens=3)
    assert gen.usage.completion_tokens == 3
    assert gen.finish_reason == "length"


def test_wrong_api_key_is_rejected_without_retry(llama_server: ServerProcess) -> None:
    llm = OpenAICompatLLM("smollm2", llama_server.base_url, api_key="wrong", backoff=5.0)
    with pytest.raises(LLMError, match="rejected the request: HTTP 401"):
        llm.generate([{"role": "user", "content": "hi"}], max_tokens=2)


def test_bad_model_file_fails_fast(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)  # right magic, no model inside
    with pytest.raises(LLMError, match="exited with code"):
        start_server(bad, ServerOptions(port=free_port()), startup_timeout=60)


def test_cli_help_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ragsieve.llm.server", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "OpenAI-compatible" in out.stdout


def test_options_reach_the_child_as_flags_and_the_key_does_not(
    llama_server: ServerProcess,
) -> None:
    options = ServerOptions(port=8123, n_threads=2, api_key="k3y", alias="m", verbose=True)
    assert options.flags() == [
        *("--host", "127.0.0.1", "--n-ctx", "4096", "--port", "8123"),
        *("--n-threads", "2", "--alias", "m", "--verbose"),
    ]
    assert ServerOptions(cache_prompt=True).flags()[-1] == "--cache-prompt"
    assert "k3y" not in repr(options)
    cmdline = Path(f"/proc/{llama_server.pid}/cmdline").read_bytes().split(b"\0")
    assert cmdline[cmdline.index(b"--alias") + 1] == b"smollm2"
    assert cmdline[cmdline.index(b"--n-ctx") + 1] == b"2048"
    assert llama_server.api_key.encode() not in b"".join(cmdline)


def test_the_alias_is_the_one_model_name_the_server_reports(llama_server: ServerProcess) -> None:
    resp = httpx.get(
        f"{llama_server.base_url}/models",
        headers={"Authorization": f"Bearer {llama_server.api_key}"},
        timeout=60,
    )
    assert resp.status_code == 200
    assert [m["id"] for m in resp.json()["data"]] == ["smollm2"]
