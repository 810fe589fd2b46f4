"""The LLM protocol and the spec-string registry that picks a backend.

Every stage that needs a language model (answering, SAGE's self-feedback, a relevance judge)
takes an :class:`LLM` and calls one verb, :meth:`LLM.generate`. Backends are chosen by a short
spec string so that a CLI flag or a TOML value can name them:

======================================  ======================================================
spec                                    backend
======================================  ======================================================
``local`` (default)                     SmolLM2-135M-Instruct Q4_1 inside the wheel, in-process
``local:/path/model.gguf``              any GGUF file, in-process through llama.cpp
``qwen-0.5b``                           opt-in Qwen2.5-Coder 0.5B Q4_K_M joined from six wheels
``qwen-1.5b``                           opt-in Qwen2.5-Coder 1.5B Q4_K_M joined from 22 wheels
``openai:MODEL@BASE_URL``               any OpenAI-compatible ``/chat/completions`` endpoint
``openai:MODEL``                        the same at ``$OPENAI_BASE_URL`` or api.openai.com
======================================  ======================================================

Heavy imports (llama.cpp, httpx) happen only when a backend is built, so importing this module
is cheap.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from ragsieve.errors import ConfigError
from ragsieve.types import Generation

DEFAULT_SPEC = "local"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"

SPEC_FORMS = (
    "'local', 'local:/path/model.gguf', 'qwen-0.5b', 'qwen-1.5b', 'openai:MODEL' or "
    "'openai:MODEL@BASE_URL'"
)

Message = dict[str, str]


@runtime_checkable
class LLM(Protocol):
    """A chat model: messages in, one :class:`~ragsieve.types.Generation` out.

    ``messages`` are OpenAI-style ``{"role": ..., "content": ...}`` dicts so that one prompt
    module serves every backend. ``temperature=0`` must be deterministic (greedy) because the
    evaluation compares methods on identical generations.
    """

    name: str

    def generate(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: list[str] | None = None,
    ) -> Generation: ...


_OPENAI_WITH_URL = re.compile(r"^(?P<model>[^@]*?)@(?P<url>https?://\S+)$")

Factory = Callable[..., LLM]
_NAMED: dict[str, Factory] = {}


def register_llm(name: str, factory: Factory) -> None:
    """Register an extra exact spec name (e.g. a tuned local model) for :func:`get_llm`."""
    if not name or ":" in name:
        raise ConfigError(f"invalid LLM registry name {name!r}: use a short name without ':'")
    _NAMED[name] = factory


def get_llm(spec: str = DEFAULT_SPEC, **kwargs: Any) -> LLM:
    """Build the backend named by ``spec``; ``kwargs`` go to the backend's constructor.

    Local backends accept ``n_ctx``, ``n_threads``, ``seed``, ``verbose``, ``cache_prompt``;
    the OpenAI backend accepts ``api_key``, ``timeout``, ``max_retries``, ``backoff``.
    """
    spec = (spec or "").strip()
    try:
        return _build(spec, kwargs)
    except TypeError as exc:  # an option this backend does not take, e.g. api_key for "local"
        m = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
        if not m:
            raise
        raise ConfigError(f"LLM spec {spec!r} does not take the option {m.group(1)!r}") from None


def _build(spec: str, kwargs: dict[str, Any]) -> LLM:
    if spec in _NAMED:
        return _NAMED[spec](**kwargs)
    if spec == "local":
        from ragsieve.llm.gguf import smollm2_path
        from ragsieve.llm.local import LlamaCppLLM

        kwargs.setdefault("name", "local")
        kwargs.setdefault("span_first", True)  # measured weaker than the span: docs/llm.md
        return LlamaCppLLM(smollm2_path(), **kwargs)
    if spec.startswith("local:"):
        from ragsieve.llm.gguf import check_gguf
        from ragsieve.llm.local import LlamaCppLLM

        path = spec[len("local:") :].strip()
        if not path:
            raise ConfigError("LLM spec 'local:' needs a GGUF path, e.g. 'local:/models/m.gguf'")
        kwargs.setdefault("name", spec)
        return LlamaCppLLM(check_gguf(path), **kwargs)
    if spec.startswith("openai:"):
        model, base_url = _parse_openai(spec)
        from ragsieve.llm.openai_compat import OpenAICompatLLM

        kwargs.setdefault("name", spec)
        return OpenAICompatLLM(model, base_url, **kwargs)
    from ragsieve.llm.gguf import SPLIT_MODELS
    from ragsieve.llm.local import LlamaCppLLM  # no llama.cpp until a model loads

    if spec in SPLIT_MODELS:  # qwen-0.5b, qwen-1.5b: opt-in models joined from part wheels
        split = SPLIT_MODELS[spec]
        kwargs.setdefault("name", split.name)
        kwargs.setdefault("span_first", split.span_first)
        return LlamaCppLLM(split.path(), **kwargs)
    raise ConfigError(f"unknown LLM spec {spec!r}: use {SPEC_FORMS}")


def _parse_openai(spec: str) -> tuple[str, str]:
    """Split ``openai:MODEL[@BASE_URL]``; the URL is recognised by its scheme so that model
    names may contain ':' or '/' (``openai:qwen2.5:0.5b@http://...``)."""
    rest = spec[len("openai:") :].strip()
    m = _OPENAI_WITH_URL.match(rest)
    if m:
        model, base_url = m.group("model").strip(), m.group("url")
    elif "@" in rest:
        raise ConfigError(
            f"LLM spec {spec!r}: the part after '@' must be an http(s) URL, "
            "e.g. 'openai:gpt-4o-mini@https://api.openai.com/v1'"
        )
    else:
        model = rest
        base_url = os.environ.get("OPENAI_BASE_URL", "").strip() or OPENAI_DEFAULT_BASE_URL
    if not model:
        raise ConfigError(
            f"LLM spec {spec!r} names no model: use 'openai:MODEL' or 'openai:MODEL@BASE_URL'"
        )
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - raises for a port that is not a number or out of range
    except ValueError as e:
        raise ConfigError(f"LLM spec {spec!r}: bad URL {base_url!r} ({e})") from None
    if not parts.hostname:
        raise ConfigError(f"LLM spec {spec!r}: the URL {base_url!r} names no host")
    return model, base_url.rstrip("/")
