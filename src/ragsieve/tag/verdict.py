"""What the tagger returns for one passage (:class:`Tagged`) and what it reads (:data:`Passage`).

In a module of their own so that the model (:mod:`ragsieve.tag.model`) and the stacker it loads
(:mod:`ragsieve.tag.stack`) both import them without importing each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: A passage as the tagger reads it: its title ("" for none) and its sentences.
Passage = tuple[str, Sequence[str]]


@dataclass(frozen=True)
class Tagged:
    """One passage's verdict: ``probs[i]`` is sentence i's keep probability; ``relevance``
    the passage head's probability."""

    probs: np.ndarray
    relevance: float
    #: The passage head's input (the mean-pooled last hidden state) of the window that gave
    #: ``relevance``; only from a tagger built with ``pooled=True`` (refitting the head).
    pooled: np.ndarray | None = None

    def kept(self, threshold: float) -> list[int]:
        return [i for i, p in enumerate(self.probs) if p >= threshold]
