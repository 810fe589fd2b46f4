"""A client for any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, llama.cpp).

Plain ``httpx`` instead of the ``openai`` SDK: one small request shape is all we need, and
owning the retry loop lets us give the user one line that names the URL and the last failure
instead of a stack of SDK exceptions.

Retry policy: connection errors, timeouts, HTTP 429 and 5xx are transient and retried with
exponential backoff (``backoff * 2**attempt`` seconds, capped, honouring a short
``Retry-After``); any other 4xx means the request itself is wrong (bad key, unknown model), so
retrying would only waste time and it fails at once.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import httpx

from ragsieve.errors import ConfigError, LLMError
from ragsieve.llm.chat import ChatModel, ChatRequest
from ragsieve.types import Generation, Usage

API_KEY_ENV = ("RAGSIEVE_LLM_API_KEY", "OPENAI_API_KEY")
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.5
MAX_BACKOFF = 8.0


def _one_line(text: object, limit: int = 160) -> str:
    """A short, printable excerpt of a server's reply for an error message.

    Whitespace runs become one space and anything unprintable (NUL, escape sequences that would
    drive the terminal) is shown escaped (``\\x00``), so a garbage reply cannot garble stderr.
    """
    s = " ".join(str(text)[: limit * 4].split())
    s = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in s)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _transport_reason(exc: httpx.TransportError, timeout: float) -> str:
    """A short lower-case reason ("connection refused", "timed out after 5s") for a message."""
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out after {timeout:g}s"
    text = str(exc) or type(exc).__name__
    low = text.lower()
    for known in ("connection refused", "name or service not known", "connection reset"):
        if known in low:
            return known
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect: " + _one_line(text, 100)
    return _one_line(text, 100)


def _http_reason(resp: httpx.Response) -> str:
    """``HTTP 503: <server's error message>`` from an error response, JSON or not."""
    detail = ""
    try:
        body = resp.json()
        err = body.get("error", body) if isinstance(body, dict) else body
        detail = err.get("message", "") if isinstance(err, dict) else str(err)
    except (ValueError, UnicodeDecodeError):
        detail = resp.text
    detail = _one_line(detail, 120)
    return f"HTTP {resp.status_code}" + (f": {detail}" if detail else "")


def _retry_after(resp: httpx.Response) -> float | None:
    value = resp.headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class OpenAICompatLLM(ChatModel):
    """Chat completions over HTTP against ``{base_url}/chat/completions``.

    ``max_retries`` counts re-tries after the first attempt. The ``httpx.Client`` is kept for
    connection reuse and is safe to share between threads.
    """

    def __init__(
        self,
        model: str,
        base_url: str = "https://api.openai.com/v1",
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        max_backoff: float = MAX_BACKOFF,
        extra_body: dict[str, Any] | None = None,
        name: str | None = None,
        n_ctx: int | None = None,
    ) -> None:
        if not model:
            raise ConfigError("OpenAI-compatible LLM needs a model name")
        base_url = base_url.strip().rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"LLM base URL must start with http:// or https://, got {base_url!r}")
        if timeout <= 0:
            raise ConfigError(f"LLM timeout must be positive, got {timeout}")
        if max_retries < 0:
            raise ConfigError(f"LLM max_retries must be >= 0, got {max_retries}")
        if api_key is None:
            api_key = next((os.environ[k] for k in API_KEY_ENV if os.environ.get(k)), None)
        if not api_key and base_url.startswith("https://api.openai.com"):
            raise ConfigError(
                f"no API key for {base_url}: set RAGSIEVE_LLM_API_KEY or OPENAI_API_KEY"
            )
        if n_ctx is not None and n_ctx < 16:
            raise ConfigError(f"n_ctx must be at least 16, got {n_ctx}")
        #: The served model's context window when the user named it (``--llm-ctx``): contexts
        #: are then trimmed to fit it (ragsieve.llm.budget); None: unknown, nothing trimmed.
        self.n_ctx = n_ctx
        self.model = model
        self.base_url = base_url
        self.url = base_url + "/chat/completions"
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.extra_body = dict(extra_body or {})
        self.name = name or f"openai:{model}@{base_url}"
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(headers=headers, timeout=self.timeout)

    def __repr__(self) -> str:  # never show the key
        return f"OpenAICompatLLM(model={self.model!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        self._client.close()

    def _sleep_before_retry(self, attempt: int, hint: float | None) -> None:
        delay = min(self.max_backoff, self.backoff * (2**attempt))
        if hint is not None:
            delay = min(self.max_backoff, max(delay, hint))
        if delay > 0:
            time.sleep(delay)

    def _post(self, payload: dict[str, Any]) -> httpx.Response:
        """POST with retries; returns a 2xx response or raises a one-line LLMError."""
        last = ""
        unreachable = True
        for attempt in range(self.max_retries + 1):
            hint: float | None = None
            try:
                resp = self._client.post(self.url, json=payload)
            except httpx.TransportError as exc:
                last, unreachable = _transport_reason(exc, self.timeout), True
            else:
                if resp.is_success:
                    return resp
                if resp.status_code == 429 or resp.status_code >= 500:
                    last, unreachable = _http_reason(resp), False
                    hint = _retry_after(resp)
                else:
                    raise LLMError(
                        f"LLM endpoint {self.base_url} rejected the request: {_http_reason(resp)}"
                    )
            if attempt < self.max_retries:
                self._sleep_before_retry(attempt, hint)
        what = "unreachable" if unreachable else "failed"
        raise LLMError(
            f"LLM endpoint {self.base_url} {what} after {self.max_retries} retries: {last}"
        )

    def _complete(self, request: ChatRequest) -> Generation:
        """One chat completion; usage from the response, else counted with cl100k."""
        payload: dict[str, Any] = {
            **self.extra_body,
            "model": self.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.stop:
            payload["stop"] = list(request.stop)
        resp = self._post(payload)
        try:
            body = resp.json()
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
            raise LLMError(
                f"LLM endpoint {self.base_url} returned malformed JSON: {_one_line(resp.text, 200)}"
            ) from None
        return self._parse(body, request.messages)

    def _parse(self, body: Any, messages: list[dict[str, str]]) -> Generation:
        try:
            choice = body["choices"][0]
            text = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(
                f"LLM endpoint {self.base_url} returned no choices[0].message.content: "
                f"{_one_line(json.dumps(body), 120)}"
            ) from None
        if text is None:  # e.g. a refusal or tool call: no text, not a transport failure
            text = ""
        if not isinstance(text, str):
            raise LLMError(
                f"LLM endpoint {self.base_url} returned non-text content ({type(text).__name__})"
            )
        usage = _usage(body.get("usage"))
        if usage is None:
            from ragsieve.text import count_tokens

            prompt = "\n".join(str(m.get("content", "")) for m in messages)
            usage = Usage(count_tokens(prompt), count_tokens(text))
        return Generation(
            text=text,
            usage=usage,
            model=str(body.get("model") or self.model),
            finish_reason=str(choice.get("finish_reason") or ""),
        )


def _usage(raw: Any) -> Usage | None:
    """The response's token usage, or None when absent or unusable (then we count ourselves)."""
    if not isinstance(raw, dict):
        return None
    try:
        return Usage(int(raw["prompt_tokens"]), int(raw["completion_tokens"]))
    except (KeyError, TypeError, ValueError):
        return None
