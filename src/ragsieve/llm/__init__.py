"""The LLM layer: one :class:`LLM` protocol, backends chosen by spec string, all prompts.

Importing this package is cheap: llama.cpp and httpx load only when a backend is built.

>>> from ragsieve.llm import get_llm, build_answer_messages
>>> llm = get_llm("local")                       # packaged SmolLM2, in-process
>>> gen = llm.generate(build_answer_messages("Capital?", ["The capital of Zubrowka is Lutz."]))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragsieve.llm.base import DEFAULT_SPEC, LLM, get_llm, register_llm
from ragsieve.llm.prompts import (
    Feedback,
    build_answer_messages,
    build_feedback_messages,
    build_judge_messages,
    parse_choice,
    parse_feedback,
    parse_judge,
)

if TYPE_CHECKING:
    from ragsieve.llm.local import LlamaCppLLM
    from ragsieve.llm.openai_compat import OpenAICompatLLM

__all__ = [
    "DEFAULT_SPEC",
    "LLM",
    "Feedback",
    "LlamaCppLLM",
    "OpenAICompatLLM",
    "build_answer_messages",
    "build_feedback_messages",
    "build_judge_messages",
    "get_llm",
    "parse_choice",
    "parse_feedback",
    "parse_judge",
    "register_llm",
]


def __getattr__(name: str) -> Any:
    """Lazy access to the backend classes so that ``import ragsieve.llm`` stays light."""
    if name == "LlamaCppLLM":
        from ragsieve.llm.local import LlamaCppLLM

        return LlamaCppLLM
    if name == "OpenAICompatLLM":
        from ragsieve.llm.openai_compat import OpenAICompatLLM

        return OpenAICompatLLM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
