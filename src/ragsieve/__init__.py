"""ragsieve: precise retrieval for retrieval-augmented generation.

Quick start::

    from ragsieve import Index, ask
    index = Index.open_or_create("my-index")
    index.add_paths(["docs/"])
    answer = ask("What is X?", index=index)
    print(answer.text, answer.context.n_tokens)
"""

from __future__ import annotations

import os

# Lance logs routine notices ("No existing dataset ... will be created") at WARN level.
os.environ.setdefault("LANCE_LOG", "error")
os.environ.setdefault("LANCEDB_LOG", "error")
# llama.cpp's and torch's OpenMP threads spin-wait by default; on a shared 2-core machine that
# cut llama.cpp generation from ~40 to 2-10 tokens/s (docs/llm.md). It must be set before torch
# or xllamacpp load the OpenMP runtime, hence here.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

import importlib
from typing import TYPE_CHECKING, Any

from ragsieve.types import (
    Answer,
    AnswerLine,
    Chunk,
    Context,
    Document,
    Scored,
    Sentence,
    SourceSpan,
)

if TYPE_CHECKING:
    from ragsieve.api import Ranked, ask, prune, search
    from ragsieve.index import Index, IndexConfig

# The API and the index load on first use (PEP 562): ``import ragsieve`` alone, or a module
# that needs neither (the pool selector, the framework adapters), skips the Lance and Arrow
# imports (about 0.7 s).
_LAZY = {
    "Ranked": "ragsieve.api",
    "ask": "ragsieve.api",
    "prune": "ragsieve.api",
    "search": "ragsieve.api",
    "Index": "ragsieve.index",
    "IndexConfig": "ragsieve.index",
}


# ``ragsieve.rerank`` is both a subpackage and the in-memory reranking function. Importing any
# ``ragsieve.rerank.*`` module binds this package's attribute to the subpackage, and PEP 562's
# ``__getattr__`` is asked only for missing names, so the function would be hidden behind the
# module (a TypeError: 'module' object is not callable). The subpackage (light: no Lance, no
# torch) is imported first and the name is then bound to the function, which loads the API on
# its first call.
importlib.import_module("ragsieve.rerank")


def rerank(
    query: str, passages: list[str], *, top_k: int | None = None, model: str | None = None
) -> list[Ranked]:
    """``passages`` scored for ``query`` by a reranker, best first, in memory (no index):
    :func:`ragsieve.api.rerank`, whose ``model`` defaults to the shipped ensemble."""
    from ragsieve.api import rerank as run

    return run(query, passages, top_k=top_k, **({} if model is None else {"model": model}))


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ragsieve' has no attribute {name!r}")


__all__ = [
    "Answer",
    "AnswerLine",
    "Chunk",
    "Context",
    "Document",
    "Index",
    "IndexConfig",
    "Ranked",
    "Scored",
    "Sentence",
    "SourceSpan",
    "__version__",
    "ask",
    "prune",
    "rerank",
    "search",
]
