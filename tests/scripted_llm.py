"""A scripted OpenAI-compatible endpoint on 127.0.0.1 for the feedback loop's tests.

It stands in for the model (the one fake the house rules allow: a third-party service) and is
reached through the real ``OpenAICompatLLM`` client. Answers are "answer N"; feedback replies
come from a script; token counts are fixed so the tests can check every sum.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ragsieve.llm.openai_compat import OpenAICompatLLM


@dataclass
class Script:
    """Feedback replies served in order (the last repeats); every call is logged."""

    feedback: list[str]
    calls: list[dict[str, Any]] = field(default_factory=list)

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
        return f"answer {n}", {"prompt_tokens": 100 + n, "completion_tokens": 3}

    def kinds(self) -> list[str]:
        return [c["kind"] for c in self.calls]


@pytest.fixture()
def scripted() -> Iterator[tuple[Script, str]]:
    """A real OpenAI-compatible endpoint on 127.0.0.1 answering from a :class:`Script`."""
    script = Script(feedback=["Evaluation Score: 9\nContext Adjustment: -1"])
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            with lock:
                text, usage = script.reply(body["messages"])
            out = json.dumps(
                {
                    "model": "scripted",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield script, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def scripted_llm(url: str) -> OpenAICompatLLM:
    return OpenAICompatLLM("scripted", url, api_key="k", max_retries=0, timeout=60.0)
