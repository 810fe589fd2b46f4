"""``ragsieve serve`` exits non-zero within 5 s, with its one-line error, whenever start-up
fails, having stopped what it started (issue 32: with a method the index cannot serve, the
in-process llama.cpp server's thread kept 8 of 20 runs alive in accept())."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error

from ragsieve.llm.server import free_port

pytestmark = pytest.mark.integration

LIMIT_S = 5.0


def _serve(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "ragsieve.cli", "serve", *args, "--port", str(free_port())]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return p, time.monotonic() - t0


def test_a_method_the_index_cannot_serve_exits_every_time(
    sample_index_dir: Path, tmp_path: Path
) -> None:
    config = tmp_path / "pareto.toml"
    config.write_text('[method]\nname = "pareto"\n')
    for _ in range(5):
        p, seconds = _serve("--index", str(sample_index_dir), "--config", str(config))
        assert_one_line_error(p, 2, "no sentence table")
        # Interpreter start and the index's query embedder take about 2 s of it.
        assert seconds < LIMIT_S + 3, seconds


def test_other_start_up_failures_exit_at_once(sample_index_dir: Path, tmp_path: Path) -> None:
    cases = [
        (["--index", str(tmp_path / "none")], 3, "no index at"),
        (["--index", str(sample_index_dir), "--llm", "local:/no/such.gguf"], 2, "no/such.gguf"),
        (["--index", str(sample_index_dir), "--token", " "], 2, "token is empty"),
    ]
    for args, code, fragment in cases:
        p, seconds = _serve(*args)
        assert_one_line_error(p, code, fragment)
        assert seconds < LIMIT_S + 3, (args, seconds)
