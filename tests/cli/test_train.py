"""The options every ``train-*`` command shares, read the same way: a device torch cannot use
or an unknown one is a one-line error before any data is read, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.integration

COMMANDS = ("train-reranker", "train-segmenter", "train-agent", "train-tagger")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the error of a machine without CUDA")
@pytest.mark.parametrize("command", COMMANDS)
def test_device_cuda_without_a_gpu_is_one_line(command: str, tmp_path: Path) -> None:
    res = run(command, "--out", str(tmp_path / "m"), "--device", "cuda", "--seed", "1")
    assert res.returncode == 2 and not (tmp_path / "m").exists()
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "--device cuda" in lines[0] and "--device cpu" in lines[0]


def test_unknown_device_and_bad_time_limit(tmp_path: Path) -> None:
    res = run("train-agent", "--out", str(tmp_path / "m"), "--device", "tpu")
    assert res.returncode == 2 and "--device must be cpu or cuda" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    res = run("train-segmenter", "--out", str(tmp_path / "m"), "--time-limit", "-1")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "--time-limit" in res.stderr and not (tmp_path / "m").exists()
