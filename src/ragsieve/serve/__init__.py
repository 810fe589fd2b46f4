"""``ragsieve serve``: the search and ask pipeline as an HTTP API (FastAPI + uvicorn).

Kept import-light on purpose: FastAPI, uvicorn and the models are imported only when a server
is actually built (:func:`ragsieve.serve.app.create_app`); the ``serve`` command is
:mod:`ragsieve.cli.serve`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["create_app"]


def create_app(*args: Any, **kwargs: Any) -> FastAPI:
    """Build the FastAPI app; see :func:`ragsieve.serve.app.create_app` (imported lazily)."""
    from ragsieve.serve.app import create_app as _create_app

    return _create_app(*args, **kwargs)
