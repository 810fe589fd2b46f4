"""The options every ``train-*`` command shares, read the same way: a device torch cannot use
or an unknown one is a one-line error before any data is read, and nothing is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.integration

COMMANDS = ("train-reranker", "train-segmenter", "train-agent", "train-tagger")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragsieve.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="the error of a machine without CUDA")
@pytest.mark.parametrize("command", COMMANDS)
def test_device_cuda_without_a_gpu_is_one_line(command: str, tmp_path: Path) -> None:
    res = _run(command, "--out", str(tmp_path / "m"), "--device", "cuda", "--seed", "1")
    assert res.returncode == 2 and not (tmp_path / "m").exists()
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "--device cuda" in lines[0] and "--device cpu" in lines[0]


def test_unknown_device_and_bad_time_limit(tmp_path: Path) -> None:
    res = _run("train-agent", "--out", str(tmp_path / "m"), "--device", "tpu")
    assert res.returncode == 2 and "--device must be cpu or cuda" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    res = _run("train-segmenter", "--out", str(tmp_path / "m"), "--time-limit", "-1")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "--time-limit" in res.stderr and not (tmp_path / "m").exists()
