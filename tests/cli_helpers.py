"""The real ``ragsieve`` command in a subprocess, and the one-line error contract, shared by the
CLI tests (``pythonpath = ["tests"]`` in pyproject.toml makes this importable) and by the
bad-input sweep (benchmarks/sweep_rm.py): the CLI as another user, a disk filled to the brim."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
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


def ask_json(question: str, index: Path, *options: str) -> Any:
    """``ragsieve ask QUESTION --index INDEX OPTIONS --max-tokens 16 --json`` (a short answer
    from the local LLM), asserted to exit 0; the JSON it printed."""
    p = run("ask", question, "--index", str(index), *options, "--max-tokens", "16", "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


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


def nobody_cli() -> list[str] | None:
    """A command line that runs the CLI as a user a mode-000 folder stops: this one when not
    root, else uid 65534 through ``setpriv`` (with a system Python of the same version when
    this one sits under a private /root). None when there is none."""
    if os.geteuid() != 0:
        return [sys.executable, "-m", "ragsieve.cli"]
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    drop = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    site_dir = sysconfig.get_paths()["purelib"]
    import ragsieve  # the sources this sweep runs (PYTHONPATH), for the other user too

    src = str(Path(ragsieve.__file__).resolve().parents[1])
    boot = (
        f"import site, sys, runpy; sys.path.insert(0, {src!r}); site.addsitedir({site_dir!r}); "
        "sys.argv = ['ragsieve', *sys.argv[1:]]; "
        "runpy.run_module('ragsieve.cli', run_name='__main__')"
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for argv in ([sys.executable, "-c", boot], [f"/usr/bin/{version}", "-S", "-c", boot]):
        try:
            probe = subprocess.run(
                [*drop, *argv, "--version"], capture_output=True, timeout=120, cwd="/"
            )
        except OSError:
            continue
        if probe.returncode == 0:
            return [*drop, *argv]
    return None


def fill_disk(disk: Path) -> None:
    """Write to ``disk`` until the device is full (ENOSPC)."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
    finally:
        os.close(fd)
