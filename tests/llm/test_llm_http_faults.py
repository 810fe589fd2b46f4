"""OpenAICompatLLM against real local sockets: refused connections, 5xx/429 then success,
malformed JSON, missing fields, timeouts, non-retryable 4xx.

The faults come from tiny scripted ``http.server`` instances on 127.0.0.1 running in threads:
real sockets and real HTTP, so the client's actual retry and error paths run."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ragsieve.errors import ConfigError, LLMError
from ragsieve.llm.openai_compat import OpenAICompatLLM
from ragsieve.llm.server import free_port
from ragsieve.types import Generation, Usage


@dataclass
class Reply:
    """One scripted response: status and body, optionally after ``delay`` seconds."""

    status: int = 200
    body: str | bytes | dict[str, Any] | list[Any] = ""
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ScriptedServer:
    """A real HTTP server on 127.0.0.1 answering POSTs from a script (last reply repeats)."""

    base_url: str
    requests: list[dict[str, Any]]


def ok_body(text: str = "Lutz", usage: dict[str, int] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "scripted",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def start_scripted(script: list[Reply]) -> tuple[ScriptedServer, ThreadingHTTPServer]:
    """Serve ``script`` in a daemon thread; the caller shuts the returned httpd down."""
    log: list[dict[str, Any]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            with lock:
                n = len(log)
                log.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "json": json.loads(raw or b"null"),
                    }
                )
            reply = script[min(n, len(script) - 1)]
            if reply.delay:
                time.sleep(reply.delay)
            body = reply.body
            if not isinstance(body, str | bytes):
                body = json.dumps(body)
            data = body.encode() if isinstance(body, str) else body
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    return ScriptedServer(f"http://127.0.0.1:{httpd.server_address[1]}/v1", log), httpd


Start = Callable[[list[Reply]], ScriptedServer]
MSGS = [{"role": "user", "content": "What is the capital of Zubrowka?"}]


@pytest.fixture()
def scripted_server() -> Iterator[Callable[[list[Reply]], ScriptedServer]]:
    """Start scripted HTTP servers; all are shut down after the test."""
    servers: list[ThreadingHTTPServer] = []

    def start(script: list[Reply]) -> ScriptedServer:
        srv, httpd = start_scripted(script)
        servers.append(httpd)
        return srv

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def client(base_url: str, **kw: object) -> OpenAICompatLLM:
    kw.setdefault("backoff", 0.01)
    kw.setdefault("timeout", 60.0)  # a hang guard: the timeout tests pass their own
    return OpenAICompatLLM("test-model", base_url, api_key="k", **kw)  # type: ignore[arg-type]


def test_connection_refused_fails_after_retries_quickly() -> None:
    base = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there now
    llm = client(base, max_retries=3)
    t0 = time.monotonic()
    with pytest.raises(LLMError) as err:
        llm.generate(MSGS)
    assert time.monotonic() - t0 < 60  # a hang guard; the backoff is 0.01 s
    msg = str(err.value)
    assert msg == f"LLM endpoint {base} unreachable after 3 retries: connection refused"
    assert "\n" not in msg


def test_500_then_200_is_retried(scripted_server: Start) -> None:
    srv = scripted_server(
        [
            Reply(500, {"error": {"message": "boom"}}),
            Reply(503, "overloaded"),
            Reply(200, ok_body("Lutz", {"prompt_tokens": 11, "completion_tokens": 2})),
        ]
    )
    gen = client(srv.base_url, max_retries=3).generate(MSGS, max_tokens=7, stop=["\n"])
    assert gen == Generation("Lutz", Usage(11, 2), model="scripted", finish_reason="stop")
    assert len(srv.requests) == 3
    req = srv.requests[-1]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == "Bearer k"
    assert req["json"]["model"] == "test-model"
    assert req["json"]["messages"] == MSGS
    assert req["json"]["max_tokens"] == 7
    assert req["json"]["temperature"] == 0.0
    assert req["json"]["stop"] == ["\n"]


def test_429_is_retried_and_persistent_5xx_fails(scripted_server: Start) -> None:
    srv = scripted_server([Reply(429, {"error": {"message": "slow down"}}), Reply(200, ok_body())])
    assert client(srv.base_url).generate(MSGS).text == "Lutz"
    assert len(srv.requests) == 2

    srv = scripted_server([Reply(502, {"error": {"message": "bad gateway"}})])
    with pytest.raises(LLMError) as err:
        client(srv.base_url, max_retries=2).generate(MSGS)
    assert str(err.value) == (
        f"LLM endpoint {srv.base_url} failed after 2 retries: HTTP 502: bad gateway"
    )
    assert len(srv.requests) == 3


def test_other_4xx_is_not_retried(scripted_server: Start) -> None:
    srv = scripted_server([Reply(401, {"error": {"message": "invalid api key"}})])
    with pytest.raises(LLMError, match="rejected the request: HTTP 401: invalid api key"):
        client(srv.base_url, max_retries=3).generate(MSGS)
    assert len(srv.requests) == 1


def test_malformed_json_is_llm_error(scripted_server: Start) -> None:
    srv = scripted_server([Reply(200, "{not json")])
    with pytest.raises(LLMError, match="malformed JSON"):
        client(srv.base_url).generate(MSGS)
    assert len(srv.requests) == 1


@pytest.mark.parametrize(
    "body",
    [{"choices": []}, {"choices": [{"message": {}}]}, {"result": "Lutz"}, ["Lutz"]],
)
def test_missing_fields_is_llm_error(scripted_server: Start, body: Any) -> None:
    srv = scripted_server([Reply(200, body)])
    with pytest.raises(LLMError, match=r"no choices\[0\]\.message\.content"):
        client(srv.base_url).generate(MSGS)


def test_timeout_is_retried_then_llm_error(scripted_server: Start) -> None:
    srv = scripted_server([Reply(200, ok_body(), delay=3.0)])
    t0 = time.monotonic()
    with pytest.raises(LLMError) as err:
        client(srv.base_url, timeout=0.3, max_retries=1).generate(MSGS)
    assert time.monotonic() - t0 < 60  # a hang guard; the error below shows the timeout hit
    assert str(err.value) == (
        f"LLM endpoint {srv.base_url} unreachable after 1 retries: timed out after 0.3s"
    )
    assert len(srv.requests) == 2


def test_timeout_then_success(scripted_server: Start) -> None:
    # The late reply comes long after the timeout, and the timeout leaves the prompt reply
    # room on a loaded machine.
    srv = scripted_server([Reply(200, ok_body("late"), delay=60.0), Reply(200, ok_body("Lutz"))])
    assert client(srv.base_url, timeout=5.0, max_retries=2).generate(MSGS).text == "Lutz"


def test_usage_counted_when_absent(scripted_server: Start) -> None:
    from ragsieve.text import count_tokens

    srv = scripted_server([Reply(200, ok_body("The capital is Lutz."))])
    gen = client(srv.base_url).generate(MSGS)
    assert gen.usage == Usage(count_tokens(MSGS[0]["content"]), count_tokens(gen.text))
    assert gen.usage.prompt_tokens > 0 and gen.usage.completion_tokens > 0


def test_null_content_is_empty_text(scripted_server: Start) -> None:
    body = ok_body()
    body["choices"][0]["message"]["content"] = None
    srv = scripted_server([Reply(200, body)])
    assert client(srv.base_url).generate(MSGS).text == ""


def test_no_api_key_sends_no_authorization(
    scripted_server: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("RAGSIEVE_LLM_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    srv = scripted_server([Reply(200, ok_body())])
    OpenAICompatLLM("m", srv.base_url).generate(MSGS)
    assert "Authorization" not in srv.requests[0]["headers"]


def test_constructor_validation() -> None:
    with pytest.raises(ConfigError, match="http:// or https://"):
        OpenAICompatLLM("m", "ftp://x")
    with pytest.raises(ConfigError, match="timeout"):
        OpenAICompatLLM("m", "http://127.0.0.1:1/v1", timeout=0)
    with pytest.raises(ConfigError, match="max_retries"):
        OpenAICompatLLM("m", "http://127.0.0.1:1/v1", max_retries=-1)
    assert "k-secret" not in repr(OpenAICompatLLM("m", "http://h/v1", api_key="k-secret"))


def test_garbage_reply_is_echoed_short_and_escaped(scripted_server: Start) -> None:
    garbage = b"<html>\x00\x1b[31m" + b"x" * 5000 + b"\n\n</html>"
    srv = scripted_server([Reply(200, garbage)])
    with pytest.raises(LLMError, match="malformed JSON") as err:
        client(srv.base_url).generate(MSGS)
    msg = str(err.value)
    assert "\x00" not in msg and "\x1b" not in msg and "\n" not in msg
    assert "\\x00" in msg and "\\x1b" in msg
    assert len(msg) < 300


def test_cli_llm_timeout_and_retries_bound_a_hung_server(
    scripted_server: Start, sample_index_dir: Any
) -> None:
    """``ask --llm-timeout 0.5 --llm-retries 1``: two attempts of half a second, then exit 4."""
    import subprocess
    import sys

    srv = scripted_server([Reply(200, ok_body(), delay=5.0)])
    t0 = time.monotonic()
    p = subprocess.run(
        [
            *(sys.executable, "-m", "ragsieve.cli", "ask", "Who decoded the waggle dance?"),
            *("--index", str(sample_index_dir), "--llm", f"openai:m@{srv.base_url}"),
            *("--llm-timeout", "0.5", "--llm-retries", "1", "--method", "naive", "--k", "1"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 4, p.stderr
    assert p.stderr.strip().count("\n") == 0 and "timed out after 0.5s" in p.stderr
    assert "after 1 retries" in p.stderr
    assert len(srv.requests) == 2
    assert time.monotonic() - t0 < 60  # the default would be 4 x 60 s
    p = subprocess.run(
        [
            *(sys.executable, "-m", "ragsieve.cli", "ask", "x", "--index", str(sample_index_dir)),
            *("--llm-timeout", "5"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "does not take the option 'timeout'" in p.stderr, p.stderr
