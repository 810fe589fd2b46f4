"""``ragsieve serve`` exits non-zero, with its one-line error, whenever start-up fails, having
stopped what it started (issue 32: with a method the index cannot serve, the in-process
llama.cpp server's thread kept 8 of 20 runs alive in accept()); and a ``--config`` method whose
model files are missing stops it before it listens (issue 45: it started, reported ready, and
failed every request).

The subprocess timeout only guards a hang (a server that starts never exits); how fast it
exits is not checked here (start-up took 10-26 s on a machine at load 8).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error

from ragsieve.llm.server import free_port

pytestmark = pytest.mark.integration

#: Seconds after which a ``serve`` that should have failed counts as hung.
HANG_S = 120


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "ragsieve.cli", "serve", *args, "--port", str(free_port())]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_S)


def test_a_method_the_index_cannot_serve_exits_every_time(
    sample_index_dir: Path, tmp_path: Path
) -> None:
    # pareto builds its own sentences on an index without the table; source=table insists on it
    config = tmp_path / "pareto.toml"
    config.write_text('[method]\nname = "pareto"\nsource = "table"\n')
    for _ in range(5):
        p = _serve("--index", str(sample_index_dir), "--config", str(config))
        assert_one_line_error(p, 2, "no sentence table")


def test_other_start_up_failures_exit_at_once(sample_index_dir: Path, tmp_path: Path) -> None:
    cases = [
        (["--index", str(tmp_path / "none")], 3, "no index at"),
        (["--index", str(sample_index_dir), "--llm", "local:/no/such.gguf"], 2, "no/such.gguf"),
        (["--index", str(sample_index_dir), "--token", " "], 2, "token is empty"),
    ]
    for args, code, fragment in cases:
        assert_one_line_error(_serve(*args), code, fragment)


@pytest.mark.parametrize(
    ("table", "fragment"),
    [
        ('name = "tagger"\nmodel = "{tmp}/nope"', "uses model={tmp}/nope, but its file"),
        ('name = "full"\ntagger_model = "{tmp}/nope"', "tagger_model={tmp}/nope, but its file"),
        ('name = "tagger"\nmodel = "{tmp}/empty"', "{tmp}/empty/model.onnx is missing"),
        ('name = "carrot"\nagent = true\nagent_dir = "{tmp}/nope"', "{tmp}/nope/agent.npz"),
        ('name = "sage"\nreranker = "cross-encoder:{tmp}/nope"', "{tmp}/nope/model.onnx"),
        ('name = "naive"\nreranker = "{tmp}/nope"', "reranker={tmp}/nope, but its file"),
        ('name = "tagger"\nmodel = "\\u0000"', "but its file \\x00"),
        ('name = "saki"\njudge = "llm"\nllm = "local:{tmp}/x.gguf"', "judges with llm=local:"),
    ],
)
def test_a_config_with_a_missing_model_file_exits_2(
    sample_index_dir: Path, tmp_path: Path, table: str, fragment: str
) -> None:
    """Every file a ``--config`` method reads its models from is checked before the server
    loads anything: one line naming the option and the file, exit 2."""
    (tmp_path / "empty").mkdir()
    config = tmp_path / "method.toml"
    config.write_text("[method]\n" + table.replace("{tmp}", str(tmp_path)) + "\n")
    p = _serve("--index", str(sample_index_dir), "--config", str(config))
    line = assert_one_line_error(p, 2, fragment.replace("{tmp}", str(tmp_path)))
    assert line.startswith(f"error: --config {config}: method "), line


def test_a_config_whose_models_exist_starts(sample_index_dir: Path, tmp_path: Path) -> None:
    """The check refuses only what is missing: the shipped tagger named as its own folder is
    served (the server answers /health, then is stopped)."""
    from server_helpers import start_server, stop_server

    from ragsieve.tag.model import shipped_model_dir

    config = tmp_path / "method.toml"
    config.write_text(f'[method]\nname = "tagger"\nmodel = "{shipped_model_dir()}"\n')
    llm = f"openai:x@http://127.0.0.1:{free_port()}/v1"  # no LLM is called here
    srv = start_server(
        sample_index_dir, tmp_path / "server.log", "--config", str(config), "--llm", llm
    )
    try:
        import httpx

        body = {"question": "Who found the Rosetta Stone?"}
        r = httpx.post(srv.url + "/explain", json=body, timeout=HANG_S)
        assert r.status_code == 200, r.text
        assert r.json()["method"] == "tagger" and r.json()["selected"]
    finally:
        stop_server(srv)
