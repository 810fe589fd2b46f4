"""The shipped chat backends' common base: :meth:`ChatModel.generate`, the
:class:`~ragsieve.llm.base.LLM` verb, written once over each backend's
:meth:`ChatModel._complete`.

A module apart from :mod:`ragsieve.llm.base`, which builds the backends: they import this one,
and it imports none of them (no import circle).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Self

from ragsieve.llm.control import cut_at_control
from ragsieve.types import Generation


@dataclass(frozen=True)
class ChatRequest:
    """One ``generate`` call as a :class:`ChatModel` backend completes it: the
    messages, the token cap, the temperature (0: greedy) and the stop strings (empty: none)."""

    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float
    stop: tuple[str, ...] = ()


class ChatModel(ABC):
    """What the shipped backends share: :meth:`generate` (the ``LLM`` verb, written once),
    the reply cut at a chat marker it spells out, and ``with`` closing the backend.

    A backend completes one :class:`ChatRequest` in :meth:`_complete` and frees what it holds
    in :meth:`close`. Users' own LLMs need not subclass it: the protocol is all that is asked.
    """

    name: str

    def generate(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> Generation:
        """One chat completion of ``messages`` (see :meth:`_complete` in each backend).

        A reply that spells out a chat marker (it saw one as text in a passage) ends there.
        """
        request = ChatRequest(messages, max_tokens, temperature, tuple(stop or ()))
        gen = self._complete(request)
        return replace(gen, text=cut_at_control(gen.text))

    @abstractmethod
    def _complete(self, request: ChatRequest) -> Generation:
        """The backend's completion of ``request``, or a one-line
        :class:`~ragsieve.errors.LLMError`."""

    @abstractmethod
    def close(self) -> None:
        """Free what the backend holds (a model, connections)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
