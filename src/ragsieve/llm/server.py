"""Run a GGUF model as a real OpenAI-compatible HTTP server process on 127.0.0.1.

Why a separate process: it lets tests and benchmarks exercise the genuine HTTP client path
(:class:`~ragsieve.llm.openai_compat.OpenAICompatLLM`) against llama.cpp's own C++ server,
and lets several ragsieve processes share one loaded model.

The child is ``python -m ragsieve.llm.server MODEL --port N``: it starts xllamacpp's server
(llama.cpp's ``llama-server`` engine, endpoints ``/health`` and ``/v1/chat/completions``) and
sleeps until SIGTERM/SIGINT, or until its parent dies when ``--exit-with-parent`` is given, so a
killed test run does not leave orphan servers behind.

From Python::

    with start_server(smollm2_path(), ServerOptions(n_ctx=2048)) as srv:
        llm = OpenAICompatLLM("smollm2", srv.base_url)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from typing import IO

import httpx

from ragsieve.errors import LLMError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_N_CTX = 4096
DEFAULT_STARTUP_TIMEOUT = 120.0


def free_port(host: str = DEFAULT_HOST) -> int:
    """A TCP port that was free a moment ago (the OS picks it; a tiny race is possible)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class ServerOptions:
    """How the llama.cpp server runs: the address it listens on, its context window and
    threads (None: :func:`~ragsieve.llm.local.default_threads`), the API key it asks for ("":
    none), the model name ``/v1/models`` reports ("": the file's) and whether it logs.

    ``cache_prompt`` is the server's default for a request that does not say (llama.cpp's is
    on): off, as in :class:`~ragsieve.llm.local.LlamaCppLLM`, a reply depends on its prompt
    alone, not on the prompt before it (docs/llm.md); a client may still ask for the cache.

    ``port`` None is a free port for :func:`start_server` (a child must not collide) and
    :data:`DEFAULT_PORT` for :func:`serve`.
    """

    host: str = DEFAULT_HOST
    port: int | None = None
    n_ctx: int = DEFAULT_N_CTX
    n_threads: int | None = None
    api_key: str = field(default="", repr=False)
    alias: str = ""
    verbose: bool = False
    cache_prompt: bool = False

    def flags(self) -> list[str]:
        """The child's command-line flags (:func:`main`) for these options, except the API
        key, which travels in the environment: ``ps`` shows a command line."""
        out = ["--host", self.host, "--n-ctx", str(self.n_ctx)]
        if self.port is not None:
            out += ["--port", str(self.port)]
        if self.n_threads:
            out += ["--n-threads", str(self.n_threads)]
        if self.alias:
            out += ["--alias", self.alias]
        if self.verbose:
            out.append("--verbose")
        if self.cache_prompt:
            out.append("--cache-prompt")
        return out


class ServerProcess:
    """Handle to a running server child process; ``stop()`` (or ``with``) ends it."""

    def __init__(
        self, proc: subprocess.Popen[bytes], host: str, port: int, log: IO[bytes], api_key: str
    ) -> None:
        self.proc = proc
        self.host = host
        self.port = port
        self.api_key = api_key
        self._log = log

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (append ``/chat/completions``)."""
        return self.url + "/v1"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, n_chars: int = 2000) -> str:
        """The end of the child's combined stdout/stderr, for error messages."""
        try:
            self._log.flush()
            with open(self._log.name, "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - n_chars))
                return f.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL if it has not exited after ``timeout`` seconds."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout)
        with contextlib.suppress(OSError):
            self._log.close()
            os.unlink(self._log.name)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(
    model_path: str | os.PathLike[str],
    options: ServerOptions | None = None,
    *,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
) -> ServerProcess:
    """Start the server child with ``options`` (default :class:`ServerOptions`) and return
    once ``GET /health`` answers 200.

    Raises LLMError with the tail of the child's log if it exits or never becomes healthy.
    """
    from ragsieve.llm.gguf import check_gguf

    model = check_gguf(model_path)
    options = options or ServerOptions()
    port = options.port or free_port(options.host)
    options = replace(options, port=port)
    cmd = [sys.executable, "-m", "ragsieve.llm.server", str(model), *options.flags()]
    cmd.append("--exit-with-parent")
    env = dict(os.environ)
    if options.api_key:
        env["RAGSIEVE_SERVER_API_KEY"] = options.api_key  # not on the command line
    # The log goes to a file, not a pipe: an unread pipe would block the child once it fills.
    # It outlives this function (ServerProcess.stop closes and removes it): no `with`.
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115
        prefix="ragsieve-llm-server-", suffix=".log", delete=False
    )
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
    server = ServerProcess(proc, options.host, port, log, options.api_key)
    try:
        _wait_healthy(server, startup_timeout)
    except LLMError as exc:
        tail = " ".join(server.log_tail(600).split())[-300:]
        server.stop()
        raise LLMError(f"{exc}; log: {tail}" if tail else str(exc)) from None
    except BaseException:
        server.stop()
        raise
    return server


def _wait_healthy(server: ServerProcess, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while True:
            if not server.alive():
                raise LLMError(
                    f"LLM server on port {server.port} exited with code {server.proc.returncode}"
                )
            try:
                if client.get(server.url + "/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise LLMError(f"LLM server on port {server.port} not healthy after {timeout:g}s")
            time.sleep(0.1)


def serve(
    model_path: str, options: ServerOptions | None = None, *, exit_with_parent: bool = False
) -> None:
    """Run the server with ``options`` (default :class:`ServerOptions`) in this process until
    SIGTERM/SIGINT (the body of the CLI)."""
    from ragsieve.llm.gguf import check_gguf
    from ragsieve.llm.local import default_threads, prefer_passive_openmp

    prefer_passive_openmp()
    import xllamacpp

    options = options or ServerOptions()
    model = check_gguf(model_path)
    threads = options.n_threads or default_threads()
    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = options.n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = [options.host]
    params.port = DEFAULT_PORT if options.port is None else options.port
    params.verbosity = 3 if options.verbose else -1
    params.cache_prompt = options.cache_prompt  # a request's default: off unless asked
    if options.api_key:
        params.api_keys = [options.api_key]
    if options.alias:
        params.model_alias = {options.alias}  # a set of names in xllamacpp, not one string
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        srv = xllamacpp.Server(params)
    except (RuntimeError, ValueError) as exc:
        raise LLMError(f"llama.cpp could not serve {model.name}: {exc}") from exc
    print(f"ragsieve LLM server: {model.name} on {srv.listening_address}/v1", flush=True)
    parent = os.getppid()
    while not stop.wait(0.5):
        if exit_with_parent and os.getppid() != parent:
            break
    del srv


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m ragsieve.llm.server",
        description="Serve a GGUF model over an OpenAI-compatible HTTP API (llama.cpp).",
    )
    ap.add_argument("model", nargs="?", default="", help="GGUF path (default: packaged SmolLM2)")
    ap.add_argument("--host", default=DEFAULT_HOST)
    ap.add_argument("--port", type=int, default=DEFAULT_PORT)
    ap.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX)
    ap.add_argument("--n-threads", type=int, default=None)
    ap.add_argument("--alias", default="", help="model name reported by /v1/models")
    ap.add_argument("--verbose", action="store_true", help="show the llama.cpp log")
    ap.add_argument(
        "--cache-prompt",
        action="store_true",
        help="reuse the previous prompt's KV cache by default (faster; replies then depend "
        "on the prompt before)",
    )
    ap.add_argument("--exit-with-parent", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    from ragsieve.errors import RagsieveError
    from ragsieve.llm.gguf import smollm2_path

    try:
        model = args.model or str(smollm2_path())
        options = ServerOptions(
            host=args.host,
            port=args.port,
            n_ctx=args.n_ctx,
            n_threads=args.n_threads,
            api_key=os.environ.get("RAGSIEVE_SERVER_API_KEY", ""),
            alias=args.alias,
            verbose=args.verbose,
            cache_prompt=args.cache_prompt,
        )
        serve(model, options, exit_with_parent=args.exit_with_parent)
    except RagsieveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
