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

__version__ = "0.1.0"

from ragsieve.api import ask, search  # noqa: E402
from ragsieve.index import Index, IndexConfig  # noqa: E402
from ragsieve.types import Answer, Chunk, Context, Document, Scored, Sentence  # noqa: E402

__all__ = [
    "Answer",
    "Chunk",
    "Context",
    "Document",
    "Index",
    "IndexConfig",
    "Scored",
    "Sentence",
    "__version__",
    "ask",
    "search",
]
