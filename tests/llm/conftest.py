"""Fixtures for the LLM layer: the packaged SmolLM2 loaded in-process, and a real llama.cpp
OpenAI-compatible server process. (The scripted fault servers live in test_llm_http_faults.py:
with ``--import-mode=importlib`` test modules cannot import a shared helper module.)"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragsieve.errors import ConfigError
from ragsieve.llm import build_answer_messages, get_llm
from ragsieve.llm.gguf import smollm2_path
from ragsieve.llm.local import LlamaCppLLM
from ragsieve.llm.server import ServerOptions, ServerProcess, start_server

# Sleep, not spin, at llama.cpp's OpenMP barriers (see ragsieve.llm.local.prefer_passive_openmp);
# only effective if libgomp is not loaded yet, so set it as early as this conftest runs.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

SERVER_API_KEY = "test-secret-key"


@pytest.fixture(scope="session")
def smollm2_file() -> Path:
    try:
        return smollm2_path()
    except ConfigError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def corpus_prompts(corpus_dir: Path) -> list[list[dict[str, str]]]:
    """Answer prompts over the sample corpus's paragraphs: prompts that share their start,
    where llama.cpp's prompt cache would reuse the one before. Of the 16 (four files, four
    questions each), with the cache on, "Where is it now?" over the first and the third file
    changed its reply when the prompts came in reverse order; these six (those two, the
    question before each and the prompt after each) showed the same two changes, twice, and
    cost 12 replies a pass instead of 32."""
    asks = ["When was it made?", "Who found it?", "What is it made of?", "Where is it now?"]
    out = []
    for path in sorted(corpus_dir.glob("*.md")):
        paras = [p for p in path.read_text(encoding="utf-8").split("\n\n") if len(p) > 80]
        out += [build_answer_messages(q, paras[:4]) for q in asks]
    return out[2:5] + out[10:13]


@pytest.fixture(scope="session")
def local_llm(smollm2_file: Path) -> Iterator[LlamaCppLLM]:
    """The default ``get_llm("local")`` backend, loaded once for the session."""
    llm = get_llm("local", n_ctx=2048)
    assert isinstance(llm, LlamaCppLLM)
    yield llm
    llm.close()


@pytest.fixture(scope="module")
def llama_server(smollm2_file: Path) -> Iterator[ServerProcess]:
    """A real OpenAI-compatible llama.cpp server process serving SmolLM2 on a free port,
    protected by an API key; killed at teardown."""
    options = ServerOptions(n_ctx=2048, api_key=SERVER_API_KEY, alias="smollm2")
    srv = start_server(smollm2_file, options)
    try:
        yield srv
    finally:
        srv.stop()
    assert not srv.alive()
