"""The real ``ragsieve`` command in a subprocess, and the one-line error contract, shared by the
CLI tests (``pythonpath = ["tests"]`` in pyproject.toml makes this importable)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def run(
    *args: str, timeout: int = 300, module: str = "ragsieve.cli"
) -> subprocess.CompletedProcess[str]:
    """``python -m ragsieve.cli ARGS`` (or another ``module``) with text output captured."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def probe_json(code: str, timeout: int = 300) -> Any:
    """Run ``code`` in a fresh interpreter (nothing imported yet: what a new process loads),
    assert it exits 0, and return the JSON it printed on its last line."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def assert_one_line_error(p: subprocess.CompletedProcess[str], code: int, fragment: str) -> str:
    """Exit ``code``, stderr one line ``error: ...`` holding ``fragment``, no traceback; returns
    the line."""
    assert p.returncode == code, (p.returncode, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: ") and fragment in lines[0], lines[0]
    assert "Traceback" not in p.stderr
    return lines[0]
