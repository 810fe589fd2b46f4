"""Stand-in OpenAI-compatible endpoints on 127.0.0.1, and the scripted one of the feedback
loop's tests.

They stand in for the model (the one fake the house rules allow: a third-party service) and
are reached through the real ``OpenAICompatLLM`` client. :class:`StandIn` and :func:`serving`
are what every stand-in shares (the serve tests' too): read a JSON request, answer JSON, serve
in a thread. The scripted one answers "answer N"; feedback replies come from a script; token
counts are fixed so the tests can check every sum.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ragsieve.llm.openai_compat import OpenAICompatLLM


class StandIn(BaseHTTPRequestHandler):
    """A quiet request handler with the two steps every stand-in endpoint takes."""

    def read_body(self) -> bytes:
        """The request body (as long as its ``Content-Length`` says)."""
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def send_json(self, body: bytes, status: int = 200) -> None:
        """Answer ``body`` (JSON, or what a faulty server sends as JSON) with ``status``."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the client may have timed out and gone
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def completion(text: str, usage: dict[str, int]) -> bytes:
    """An OpenAI chat completion whose one choice says ``text``."""
    choice = {"index": 0, "message": {"role": "assistant", "content": text}}
    body = {"model": "scripted", "choices": [{**choice, "finish_reason": "stop"}], "usage": usage}
    return json.dumps(body).encode()


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free port of 127.0.0.1 in a thread: its base URL
    (``http://127.0.0.1:PORT``); shut down on exit."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@dataclass
class Script:
    """Feedback replies served in order (the last repeats); answer calls reply ``answers`` in
    order (the last repeats), or "answer N" where none are given; every call is logged."""

    feedback: list[str]
    calls: list[dict[str, Any]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)

    def reply(self, messages: list[dict[str, str]]) -> tuple[str, dict[str, int]]:
        content = messages[-1]["content"]
        if content.startswith("**Original Prompt:**"):
            n = sum(c["kind"] == "feedback" for c in self.calls)
            self.calls.append({"kind": "feedback", "content": content})
            usage = {"prompt_tokens": 200 + n, "completion_tokens": 11}
            return self.feedback[min(n, len(self.feedback) - 1)], usage
        n = sum(c["kind"] == "answer" for c in self.calls)
        chunks = len(re.findall(r"(?m)^\[\d+\] ", content))
        self.calls.append({"kind": "answer", "chunks": chunks})
        text = self.answers[min(n, len(self.answers) - 1)] if self.answers else f"answer {n}"
        return text, {"prompt_tokens": 100 + n, "completion_tokens": 3}

    def kinds(self) -> list[str]:
        return [c["kind"] for c in self.calls]


@pytest.fixture()
def scripted() -> Iterator[tuple[Script, str]]:
    """A real OpenAI-compatible endpoint on 127.0.0.1 answering from a :class:`Script`."""
    script = Script(feedback=["Evaluation Score: 9\nContext Adjustment: -1"])
    lock = threading.Lock()

    class Handler(StandIn):
        def do_POST(self) -> None:
            with lock:
                text, usage = script.reply(json.loads(self.read_body())["messages"])
            self.send_json(completion(text, usage))

    with serving(Handler) as url:
        yield script, url + "/v1"


def scripted_llm(url: str) -> OpenAICompatLLM:
    return OpenAICompatLLM("scripted", url, api_key="k", max_retries=0, timeout=60.0)
