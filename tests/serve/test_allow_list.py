"""The server's allow-list (``serve --rerankers``) covers every model a request can make it
load, the ones a method loads by its defaults included, and ``/explain`` and ``/search`` never
run an LLM (issue 45). A real ``ragsieve serve --rerankers bm25`` on 127.0.0.1 over the sentence
index, answering with a scripted OpenAI-compatible LLM that counts its calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from scripted_llm import StandIn, completion, serving
from server_helpers import Server, start_server, stop_server

from ragsieve.llm.prompts import JUDGE_SYSTEM

pytestmark = pytest.mark.integration

#: Guards a hang only: on a loaded machine a request can take many seconds.
TIMEOUT = 300
Q = "Who found the Rosetta Stone?"


class _Yes(StandIn):
    """An OpenAI-compatible endpoint that answers every prompt "yes" and keeps each one."""

    prompts: ClassVar[list[Any]] = []

    def do_POST(self) -> None:
        type(self).prompts.append(json.loads(self.read_body())["messages"])
        self.send_json(completion("yes", {"prompt_tokens": 9, "completion_tokens": 1}))


@pytest.fixture(scope="module")
def llm_url() -> Iterator[str]:
    with serving(_Yes) as url:
        yield url + "/v1"


@pytest.fixture(scope="module")
def bm25_only(
    sentence_index_dir: Path, llm_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("allow") / "server.log"
    srv = start_server(
        sentence_index_dir, log, "--rerankers", "bm25", "--llm", f"openai:m@{llm_url}"
    )
    yield srv
    stop_server(srv)
    assert "Traceback" not in srv.log_text()


def _post(srv: Server, path: str, method: str, **extra: Any) -> httpx.Response:
    key = "query" if path == "/search" else "question"
    body = {key: Q, "method": method, **extra}
    if path == "/ask":
        body["max_tokens"] = 8
    return httpx.post(srv.url + path, json=body, timeout=TIMEOUT)


@pytest.mark.parametrize(
    ("method", "fragment"),
    [
        ("sage", "method sage uses reranker=ensemble by default"),
        ("saki", "method saki uses reranker=cross-encoder by default"),
        ("saki[reranker=bm25]", "method saki[reranker=bm25] uses judge=cross-encoder by default"),
        ("full[scorer=reranker]", "method full[scorer=reranker] uses reranker=ensemble by"),
        ("carrot", "method carrot uses reranker=ensemble by default"),
        ("carrot[agent=true,scorer=bm25]", "uses agent=true (the shipped agent)"),
        ("naive[reranker=cross-encoder]", "uses reranker=cross-encoder,"),
        ("full[scorer=bi-encoder]", "uses scorer=bi-encoder,"),
    ],
)
def test_a_model_the_server_does_not_allow_is_refused_everywhere(
    bm25_only: Server, method: str, fragment: str
) -> None:
    """By option or by default: 400 naming the option, what the server allows, on every
    endpoint that takes a method, and nothing loaded."""
    for path in ("/search", "/explain", "/ask"):
        r = _post(bm25_only, path, method)
        assert r.status_code == 400, (path, method, r.text)
        error = r.json()["error"]
        assert fragment in error, error
        assert error.endswith("which this server does not allow (--rerankers bm25); allowed: bm25")
    auth_free = httpx.get(bm25_only.url + "/health", timeout=TIMEOUT).json()
    assert not [m for m in auth_free["loaded"] if m.startswith("reranker") and "bm25" not in m]


def test_a_request_reranker_outside_the_list_is_refused(bm25_only: Server) -> None:
    r = _post(bm25_only, "/explain", "naive", reranker="ensemble")
    assert r.status_code == 400 and "uses reranker=ensemble," in r.json()["error"]
    r = httpx.post(
        bm25_only.url + "/search", json={"query": Q, "reranker": "ensemble"}, timeout=TIMEOUT
    )
    assert r.status_code == 400 and "reranker=ensemble names a model" in r.json()["error"]


def test_allowed_and_preloaded_models_are_served(bm25_only: Server) -> None:
    """bm25 is on the list; the shipped tagger is the server's default method's (loaded at
    start-up), so ``tagger`` and ``full`` (whose default scorer it is) load nothing new."""
    for path, method in (
        ("/explain", "sage[reranker=bm25,feedback=false]"),
        ("/search", "carrot[scorer=bm25,iterations=5]"),
        ("/explain", "saki[reranker=bm25,judge=none]"),
        ("/explain", "tagger"),
        ("/explain", "full[unit=passage]"),
    ):
        r = _post(bm25_only, path, method)
        assert r.status_code == 200, (path, method, r.text)


@pytest.mark.parametrize("path", ["/explain", "/search"])
def test_no_llm_runs_on_explain_or_search(bm25_only: Server, path: str) -> None:
    """``saki[judge=llm]`` judges with an LLM: refused where no LLM is ever called (it used to
    build a local LLM per request there), pointing at /ask."""
    before = len(_Yes.prompts)
    r = _post(bm25_only, path, "saki[judge=llm,reranker=bm25]")
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error.startswith(f"{path} never calls the LLM, and method saki[judge=llm,reranker=bm25]")
    assert "POST /ask" in error
    assert len(_Yes.prompts) == before


def test_an_llm_judge_on_ask_is_the_servers_llm(bm25_only: Server) -> None:
    """On /ask the judge is lent the server's LLM: every judge prompt reaches the endpoint the
    server answers with (none builds an LLM of its own), then the answer's."""
    before = len(_Yes.prompts)
    r = _post(bm25_only, "/ask", "saki[judge=llm,reranker=bm25,k=2]", explain=True)
    assert r.status_code == 200, r.text
    calls = _Yes.prompts[before:]
    judged = [m for m in calls if m[0]["content"] == JUDGE_SYSTEM]
    assert judged and len(calls) == len(judged) + 1, calls  # the judge's, then the answer
    assert r.json()["explain"]["links"]["judge"] == "llm"
