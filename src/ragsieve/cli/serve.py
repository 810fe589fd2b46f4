"""The ``ragsieve serve`` command.

Only Typer is imported at module level: this module is imported on every ``ragsieve`` command,
and FastAPI, uvicorn and the models must cost nothing unless a server is started.
"""

from __future__ import annotations

import logging
import socket
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ragsieve.defaults import DEFAULT_METHOD
from ragsieve.errors import ConfigError, InputError

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _check_port(host: str, port: int) -> None:
    """Fail fast, with one line, if ``host:port`` cannot be bound (before loading models).

    A small race remains (another process may take the port before uvicorn binds it); uvicorn
    then reports it itself.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise InputError(f"cannot resolve --host {host!r}: {e.strerror}") from None
    family = infos[0][0]
    try:
        # create_server sets SO_REUSEADDR like uvicorn, so a port in TIME_WAIT is not "busy".
        with socket.create_server((host, port), family=family):
            pass
    except OSError as e:
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def _check_model_files(spec: Any, llm: str, config: Path) -> None:
    """Every file a ``--config`` method would read its models from must exist now: a server
    that started without them would fail every request (exit 2, one line, before any load)."""
    from ragsieve.serve.gate import check_default_method

    try:
        check_default_method(spec, llm)
    except ConfigError as e:
        raise ConfigError(f"--config {config}: {e}") from None


#: Seconds a failed start-up may take to exit after its error line (then it is forced).
EXIT_GRACE_S = 3.0


def _exit_soon(code: int) -> None:
    """Make sure a failed start-up ends: the error propagates and prints as usual, but if a
    thread something started (a model server's listener) keeps the process alive, it exits
    with ``code`` after :data:`EXIT_GRACE_S` seconds anyway."""
    import os
    import threading
    import time

    def force() -> None:
        time.sleep(EXIT_GRACE_S)
        sys.stderr.flush()
        os._exit(code)

    threading.Thread(target=force, name="ragsieve-exit", daemon=True).start()


def serve(
    index_dir: Annotated[Path, typer.Option("--index", "-i", help="Index directory.")],
    host: Annotated[
        str, typer.Option(help="Interface to listen on (0.0.0.0: all; use --token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port.")] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="RAGSIEVE_TOKEN",
            help="Require 'Authorization: Bearer TOKEN' on /search, /ask and /explain.",
            show_envvar=True,
        ),
    ] = None,
    llm: Annotated[
        str,
        typer.Option(help="local | local:PATH.gguf | openai:MODEL@URL | qwen-0.5b | qwen-1.5b."),
    ] = "local",
    llm_ctx: Annotated[
        int | None,
        typer.Option(
            "--llm-ctx",
            min=16,
            help="The LLM's context window in tokens (local default 4096); contexts are "
            "trimmed to fit it.",
        ),
    ] = None,
    llm_timeout: Annotated[
        float | None, typer.Option(min=0.1, help="openai: seconds per LLM request.")
    ] = None,
    llm_retries: Annotated[
        int | None, typer.Option(min=0, max=10, help="openai: retries of a failed LLM call.")
    ] = None,
    rerankers: Annotated[
        str,
        typer.Option(
            help="Comma-separated models a request may make the server load, by an option or "
            "by its method's defaults: reranker names, 'tagger', 'agent'; '*' allows any "
            "(loads models from paths or hubs on request). The default method's are always "
            "usable."
        ),
    ] = "ensemble,bi-encoder,bm25,cross-encoder,tagger,agent",
    reload_interval: Annotated[
        float, typer.Option(min=0, help="Seconds between checks for a new index commit.")
    ] = 1.0,
    log_level: Annotated[
        str, typer.Option(help="critical | error | warning | info | debug.")
    ] = "info",
    access_log: Annotated[
        bool, typer.Option("--access-log/--no-access-log", help="Log every request.")
    ] = True,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            exists=True,
            dir_okay=False,
            help="A TOML [method] table: the method of POST /ask and /explain requests that "
            f"name none (default: {DEFAULT_METHOD}).",
        ),
    ] = None,
) -> None:
    """Serve the index over HTTP: POST /search, /ask, /explain, GET /health, the evidence
    viewer at /, API docs at /docs."""
    level = log_level.lower()
    if level not in ("critical", "error", "warning", "info", "debug"):
        raise ConfigError(f"unknown --log-level {log_level!r}: use info, warning, error, debug")
    logging.basicConfig(
        level=level.upper(), format="%(levelname)s:     %(name)s: %(message)s", stream=sys.stderr
    )
    default_method: Any = DEFAULT_METHOD
    if config is not None:
        from ragsieve.methods import check_spec, spec_from_toml

        default_method = check_spec(spec_from_toml(config))
        _check_model_files(default_method, llm, config)
    _check_port(host, port)
    allowed = None if rerankers.strip() == "*" else [r.strip() for r in rerankers.split(",")]

    import uvicorn

    # Imported here, not at the top: ragsieve.cli imports this module to register ``serve``.
    from ragsieve.cli.common import llm_options
    from ragsieve.serve.app import create_app

    try:
        app = create_app(
            index_dir,
            llm_spec=llm,
            token=token,
            llm_options=llm_options(llm_timeout, llm_retries, llm_ctx),
            rerankers=[r for r in allowed if r] if allowed is not None else None,
            reload_interval=reload_interval,
            default_method=default_method,
        )
    except BaseException as e:
        _exit_soon(int(getattr(e, "exit_code", 1)))
        raise
    log = logging.getLogger("ragsieve.serve")
    if token is None and host not in LOOPBACK:
        log.warning("listening on %s without --token: anyone who can reach it may query", host)
    shown = f"[{host}]" if ":" in host else host
    log.info("serving %s at http://%s:%d (docs: /docs)", index_dir, shown, port)
    # One process, one copy of the models: concurrency comes from FastAPI's thread pool.
    uvicorn.run(app, host=host, port=port, log_level=level, access_log=access_log, workers=1)
