"""A real ``ragsieve serve`` process on a free port, shared by the server tests
(``pythonpath = ["tests"]`` in pyproject.toml makes this importable)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from ragsieve.llm.server import free_port

STARTUP_TIMEOUT = 120.0
#: Debian's Chromium (``make browser``) and the flags it runs headless with, offline, for the
#: viewer's browser tests and docs/make_viewer_png.py.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_server(index: Path, log: Path, *args: str) -> Server:
    """``python -m ragsieve.cli serve`` on a free port; returns once /health answers."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "RAGSIEVE_TOKEN"}
    cmd = [sys.executable, "-m", "ragsieve.cli", "serve", "--index", str(index)]
    with log.open("wb") as out:  # a file, not a pipe: a full pipe would block the server
        proc = subprocess.Popen(
            [*cmd, "--port", str(port), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    srv = Server(proc, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}:\n{srv.log_text()}")
        try:
            if httpx.get(srv.url + "/health", timeout=2).status_code == 200:
                return srv
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    stop_server(srv)
    raise AssertionError(f"server not healthy after {STARTUP_TIMEOUT}s:\n{srv.log_text()}")


def stop_server(srv: Server) -> None:
    srv.proc.terminate()
    try:
        srv.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        srv.proc.kill()
        srv.proc.wait(timeout=60)


@contextmanager
def served(index: Path, log: Path, *args: str) -> Iterator[Server]:
    """A server for the block (:func:`start_server`); stopped after it, whose log must then
    hold no traceback."""
    srv = start_server(index, log, *args)
    try:
        yield srv
    finally:
        stop_server(srv)
    assert "Traceback" not in srv.log_text()
