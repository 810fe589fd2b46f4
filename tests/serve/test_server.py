"""``ragsieve serve`` as a real server process driven over HTTP (httpx), plus a few in-process
checks of the error mapping that a real process cannot provoke on demand.

Two server processes per module: ``server`` (the sample index, the real local LLM) and
``locked`` (a writable copy of the index, ``--token``, and an OpenAI-compatible LLM URL on a
closed port, so every /ask hits a connection-refused LLM while /search keeps working).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from scripted_llm import StandIn, serving
from server_helpers import Server, start_server, stop_server

from ragsieve.llm.server import free_port

pytestmark = pytest.mark.integration

#: Seconds an HTTP call may take before it counts as hung (a hang guard, not a speed check).
HTTP_TIMEOUT = 300

TOKEN = "test-token-0123456789"
SEARCH_KEYS = {"chunk_id", "doc_id", "title", "text", "score", "start", "end", "tokens", "where"}
ASK_KEYS = {
    *("question", "method", "answer", "context", "tokens", "cost", "timings", "trace", "span"),
    *("reply", "abstained", "confidence", "line"),
}


@pytest.fixture(scope="module")
def server(sample_index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(sample_index_dir, tmp_path_factory.mktemp("serve") / "server.log")
    yield srv
    stop_server(srv)
    assert "Traceback" not in srv.log_text()


@pytest.fixture(scope="module")
def locked_index(sample_index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("locked") / "index"
    shutil.copytree(sample_index_dir, dst)
    return dst


@pytest.fixture(scope="module")
def locked(locked_index: Path) -> Iterator[Server]:
    closed = free_port()  # nothing listens there: the LLM endpoint refuses connections
    srv = start_server(
        locked_index,
        locked_index.parent / "locked.log",
        "--token",
        TOKEN,
        "--llm",
        f"openai:x@http://127.0.0.1:{closed}/v1",
        "--llm-retries",
        "1",
        "--reload-interval",
        "0",
        "--no-access-log",
    )
    yield srv
    stop_server(srv)
    assert "Traceback" not in srv.log_text()


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


# ----------------------------------------------------------------------------- real processes
def test_health(server: Server, sample_index_dir: Path) -> None:
    r = httpx.get(server.url + "/health", timeout=HTTP_TIMEOUT)
    assert r.status_code == 200
    body = r.json()
    assert body == {
        "status": "ok",
        "ready": True,
        "documents": 4,
        "chunks": body["chunks"],
        "index": str(sample_index_dir),
        "llm": "local",
        "loaded": body["loaded"],
    }
    assert body["chunks"] > 0
    # Loaded before listening: the torch-free query embedder, the LLM, the default method.
    assert body["loaded"][:3] == ["query embedder minilm-onnx", "llm local", "method tagger"]


def test_search_matches_the_python_api(server: Server, sample_index_dir: Path) -> None:
    from ragsieve import search
    from ragsieve.explain import where_of
    from ragsieve.index import Index

    q = "When was the Fresnel lens first installed?"
    r = httpx.post(
        server.url + "/search",
        json={"query": q, "k": 2, "retriever": "hybrid"},
        timeout=HTTP_TIMEOUT,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["query"] == q and body["retriever"] == "hybrid"
    hits = body["results"]
    assert len(hits) == 2 and all(set(h) == SEARCH_KEYS for h in hits)
    assert "Cordouan" in hits[0]["text"] and hits[0]["title"] == "How lighthouses work"
    expected = search(q, sample_index_dir, k=2, retriever="hybrid")
    assert [h["chunk_id"] for h in hits] == [s.chunk.id for s in expected]
    assert [h["score"] for h in hits] == pytest.approx([s.score for s in expected])
    # where each hit sits (the heading above it), as ``ragsieve search --json`` says
    where = where_of(Index.open(sample_index_dir), expected)
    assert [h["where"] for h in hits] == [where[s.chunk.id] for s in expected]


def _ask_naive(server: Server, **extra: Any) -> httpx.Response:
    """POST /ask: who found the Rosetta Stone, naive's top 2 chunks, at most 32 tokens."""
    body = {"question": "Who found the Rosetta Stone?", "method": "naive", "k": 2, **extra}
    return httpx.post(server.url + "/ask", json={**body, "max_tokens": 32}, timeout=120)


def test_ask_with_the_local_llm(server: Server) -> None:
    r = _ask_naive(server)
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == ASK_KEYS and body["method"] == "naive"
    assert body["span"] is None  # naive has no tagger, so no answer span
    assert isinstance(body["answer"], str) and body["answer"].strip()
    # the typed line: the reply, nothing to judge its confidence by
    line = body["line"]
    assert (line["kind"], line["text"], line["span"]) == ("reply", body["answer"], None)
    assert (line["abstained"], line["confidence"], line["agrees"]) == (False, None, False)
    assert len(body["context"]) == 2 and body["trace"]["selected"] == [
        c["chunk_id"] for c in body["context"]
    ]
    assert "Rosetta" in body["context"][0]["title"]
    assert all(c["where"] for c in body["context"])  # each under a heading of its file
    assert body["cost"] == 0  # the local model: no prices given, nothing to pay
    tokens = body["tokens"]
    assert tokens["context"] > 0 and tokens["prompt"] > tokens["context"] // 2
    assert 1 <= tokens["completion"] <= 32
    # A whole-question budget below the first prompt trims the context to fit.
    r = _ask_naive(server, total_budget=body["trace"]["llm"]["call_tokens"][0]["estimate"] - 1)
    assert r.status_code == 200, r.text
    assert len(r.json()["context"]) == 1 and r.json()["trace"]["total_budget_cap"]["dropped"] == 1


def test_explain_and_ask_with_explain(server: Server, sample_index_dir: Path) -> None:
    """/explain is ``ragsieve explain --json`` plus the documents; /ask with ``explain`` adds
    the same report for the retrieval the answer used, without retrieving twice."""
    from ragsieve.explain import explain
    from ragsieve.index import Index

    q = "In which year did Champollion announce the decipherment of hieroglyphs?"
    body = {"question": q, "method": "tagger", "k": 3}
    r = httpx.post(server.url + "/explain", json=body, timeout=120)
    assert r.status_code == 200, r.text
    rep = r.json()
    idx = Index.open(sample_index_dir)
    _, expected = explain(q, idx, "tagger", k=3)
    assert rep["selected"] == expected["selected"] and rep["method"] == "tagger"
    assert [c["chunk_id"] for c in rep["score_curve"]] == [
        c["chunk_id"] for c in expected["score_curve"]
    ]
    assert rep["cut"] == expected["cut"] and rep["passages"]
    docs = rep["documents"]
    assert docs and docs[0]["title"] == "The Rosetta Stone"
    kept: set[str] = set()
    for d in docs:
        text = idx.get_document(d["doc_id"]).text
        segs = d["segments"]
        # Consecutive segments cover the document exactly.
        assert [s["start"] for s in segs[1:]] == [s["end"] for s in segs[:-1]]
        assert segs[0]["start"] == 0 and segs[-1]["end"] == len(text)
        assert "".join(s["text"] for s in segs) == text
        for s in segs:
            assert s["score"] is None or s["chunk_id"] is not None
            assert not s["selected"] or s["score"] is not None
        kept |= {s["chunk_id"] for s in segs if s["selected"]}
    assert kept == set(rep["selected"])
    # /ask with explain: the report's selection is the answer's context.
    r = httpx.post(
        server.url + "/ask", json={**body, "max_tokens": 16, "explain": True}, timeout=120
    )
    assert r.status_code == 200, r.text
    ans = r.json()
    assert set(ans) == ASK_KEYS | {"explain"}
    # The tagger's answer span, beside the LLM's answer, inside a unit of the context; with
    # the packaged reader it is the answer line, the reply beside it.
    span = ans["span"]
    assert ans["trace"]["answer"] == "span" and ans["answer"] == span["text"]
    assert isinstance(ans["reply"], str)
    unit = next(c for c in ans["context"] if c["chunk_id"] == span["chunk_id"])
    assert span["in_context"] and unit["start"] <= span["start"] < span["end"] <= unit["end"]
    assert ans["explain"]["selected"] == [c["chunk_id"] for c in ans["context"]]
    assert ans["explain"]["selected"] == rep["selected"]  # deterministic retrieval
    assert "generate" in ans["explain"]["seconds"] and ans["explain"]["documents"]
    # Errors stay one-line JSON.
    r = httpx.post(
        server.url + "/explain", json={"question": "x", "method": "nope"}, timeout=HTTP_TIMEOUT
    )
    assert r.status_code == 400 and set(r.json()) == {"error"}
    assert (
        httpx.post(server.url + "/explain", json={"question": ""}, timeout=HTTP_TIMEOUT).status_code
        == 422
    )


def test_viewer_page_is_served_self_contained(server: Server) -> None:
    r = httpx.get(server.url + "/", timeout=HTTP_TIMEOUT)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp
    assert "script-src 'sha256-" in csp and "unsafe" not in csp
    page = r.text
    assert 'id="question"' in page and "/explain" in page and "Authorization" in page
    # Nothing is loaded from elsewhere: no external URLs in src/href attributes.
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


def test_validation_and_limits(server: Server) -> None:
    url = server.url
    for bad in ({"query": ""}, {"query": "x", "k": 0}, {"query": "x", "k": 101}):
        assert httpx.post(url + "/search", json=bad, timeout=HTTP_TIMEOUT).status_code == 422, bad
    for path, bad in (
        ("/search", {"query": "x" * 2001}),
        ("/search", {"query": "x", "retriever": "sql"}),
        ("/search", {"query": "x", "top": 3}),
        ("/ask", {"question": "x", "budget": 0}),
        ("/ask", {"question": "x", "total_budget": 0}),
        ("/ask", {"question": "x", "max_tokens": 4096}),
    ):
        assert httpx.post(url + path, json=bad, timeout=HTTP_TIMEOUT).status_code == 422, bad
    # Strict types: JSON true, "3" or 3.0 is not an int, 5 is not a query string.
    for bad in ({"query": "x", "k": True}, {"query": "x", "k": "3"}, {"query": 5}):
        r = httpx.post(url + "/search", json=bad, timeout=HTTP_TIMEOUT)
        assert r.status_code == 422, bad
        assert r.json()["error"].split(":")[0] in ("k", "query"), r.text
    assert (
        httpx.post(url + "/ask", json={"question": "x", "k": 2.0}, timeout=HTTP_TIMEOUT).status_code
        == 422
    )
    assert (
        httpx.post(url + "/search", json={"query": "x", "k": 3}, timeout=HTTP_TIMEOUT).status_code
        == 200
    )
    # Oversized bodies: refused by the declared length, and while a chunked body streams in.
    big = json.dumps({"query": "a" * 70_000}).encode()
    r = httpx.post(
        url + "/search",
        content=big,
        headers={"Content-Type": "application/json"},
        timeout=HTTP_TIMEOUT,
    )
    assert r.status_code == 413 and "too large" in r.json()["error"]
    r = httpx.post(
        url + "/search",
        content=iter([big[:40_000], big[40_000:]]),
        headers={"Content-Type": "application/json"},
        timeout=HTTP_TIMEOUT,
    )
    assert r.status_code == 413 and "too large" in r.json()["error"]
    # Errors the pipeline raises are 400 with a one-line JSON error.
    for path, bad in (
        ("/search", {"query": "   "}),
        ("/search", {"query": "\u200b\u200b"}),  # invisible only: as blank as spaces
        ("/search", {"query": "\ufeff\u2060", "method": "tagger"}),
        ("/ask", {"question": "\u200b \u200c"}),
        ("/explain", {"question": "\u200d"}),
        ("/search", {"query": "x", "reranker": "/etc"}),
        ("/ask", {"question": "x", "method": "nope"}),
        ("/ask", {"question": "x", "total_budget": 3}),
    ):
        r = httpx.post(url + path, json=bad, timeout=HTTP_TIMEOUT)
        assert r.status_code == 400 and set(r.json()) == {"error"}, (bad, r.text)
        assert "\n" not in r.json()["error"]
    assert httpx.get(url + "/nope", timeout=HTTP_TIMEOUT).json() == {"error": "Not Found"}


def test_openapi_docs(server: Server) -> None:
    spec = httpx.get(server.url + "/openapi.json", timeout=HTTP_TIMEOUT).json()
    assert {"/search", "/ask", "/explain", "/health", "/"} <= set(spec["paths"])
    schemas = spec["components"]["schemas"]
    assert "explain" in schemas["AskRequest"]["properties"]
    assert "documents" in schemas["ExplainResponse"]["properties"]
    assert "span" in schemas["AskResponse"]["properties"]
    assert {"text", "doc_id", "start", "end", "in_context"} <= set(
        schemas["AnswerSpan"]["properties"]
    )
    assert "passage" not in schemas["AnswerSpan"]["properties"]  # a located span's fields only
    assert {"text", "kind", "confidence", "abstained", "why", "agrees", "span"} == set(
        schemas["AnswerLine"]["properties"]
    )
    assert "line" in schemas["AskResponse"]["properties"]
    assert (
        httpx.get(server.url + "/docs", timeout=HTTP_TIMEOUT).status_code == 200
    )  # offline: tests/serve/test_limits.py


def test_concurrent_requests_match_sequential(server: Server) -> None:
    """10 concurrent /search (all three retrievers) and 2 /ask give exactly the sequential
    results and contexts: the shared embedder, index and LLM do not mix requests up."""
    questions = [
        "When was the Fresnel lens first installed?",
        "What does a lighthouse characteristic encode?",
        "Who found the Rosetta Stone?",
        "How many eggs can a queen bee lay?",
        "When was Voyager 1 launched?",
        "What is a waggle dance?",
        "Which planets did Voyager 2 visit?",
        "Who deciphered the hieroglyphs?",
        "What is the golden record?",
        "How do workers make wax?",
    ]
    retrievers = ["dense", "bm25", "hybrid"]
    jobs: list[tuple[str, dict[str, Any]]] = [
        ("/search", {"query": q, "k": 3, "retriever": retrievers[i % 3]})
        for i, q in enumerate(questions)
    ]
    jobs += [("/ask", {"question": q, "k": 2, "max_tokens": 12}) for q in questions[2:4]]
    with httpx.Client(base_url=server.url, timeout=120) as client:

        def call(job: tuple[str, dict[str, Any]]) -> Any:
            r = client.post(job[0], json=job[1])
            assert r.status_code == 200, r.text
            body = r.json()
            if job[0] == "/ask":
                # Timings differ run to run. The answer text is not compared: llama.cpp's prompt
                # cache makes greedy output depend on the previous prompt (reproduced in one
                # thread, without the server), and the concurrent order differs.
                assert body["answer"].strip()
                return {"context": body["context"], "prompt": body["tokens"]["prompt"]}
            return body

        sequential = [call(j) for j in jobs]
        with ThreadPoolExecutor(len(jobs)) as pool:
            concurrent = list(pool.map(call, jobs))
    assert concurrent == sequential
    assert all(s["results"] for s in sequential[:10])


def test_token_required_except_health_and_docs(locked: Server) -> None:
    q = {"query": "Fresnel lens", "k": 1}
    r = httpx.post(locked.url + "/search", json=q, timeout=HTTP_TIMEOUT)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert set(r.json()) == {"error"}
    bad = {"Authorization": "Bearer wrong-token"}
    assert (
        httpx.post(locked.url + "/search", json=q, headers=bad, timeout=HTTP_TIMEOUT).status_code
        == 401
    )
    assert (
        httpx.post(locked.url + "/ask", json={"question": "x"}, timeout=HTTP_TIMEOUT).status_code
        == 401
    )
    assert (
        httpx.post(
            locked.url + "/explain", json={"question": "x"}, timeout=HTTP_TIMEOUT
        ).status_code
        == 401
    )
    assert (
        httpx.get(locked.url + "/", timeout=HTTP_TIMEOUT).status_code == 200
    )  # the page itself needs no token
    r = httpx.post(locked.url + "/search", json=q, headers=auth(), timeout=HTTP_TIMEOUT)
    assert r.status_code == 200 and r.json()["results"]
    assert httpx.get(locked.url + "/health", timeout=HTTP_TIMEOUT).status_code == 200
    assert httpx.get(locked.url + "/openapi.json", timeout=HTTP_TIMEOUT).status_code == 200


def test_unreachable_llm_is_a_502_json_error(locked: Server) -> None:
    r = httpx.post(
        locked.url + "/ask",
        json={"question": "Who found the Rosetta Stone?", "k": 2},
        headers=auth(),
        timeout=60,
    )
    assert r.status_code == 502, r.text
    body = r.json()
    assert set(body) == {"error"} and "unreachable" in body["error"]
    assert "Traceback" not in r.text
    r = httpx.post(
        locked.url + "/search", json={"query": "Rosetta"}, headers=auth(), timeout=HTTP_TIMEOUT
    )
    assert r.status_code == 200 and r.json()["results"]


def test_new_index_commits_become_visible(
    locked: Server, locked_index: Path, tmp_path: Path
) -> None:
    from ragsieve.index import Index

    doc = tmp_path / "axolotl.md"
    doc.write_text("# Axolotls\n\nThe axolotl regrows lost limbs, a trick called regeneration.\n")
    Index.open(locked_index).add_paths([doc])
    r = httpx.post(
        locked.url + "/search",
        json={"query": "axolotl regeneration", "k": 1, "retriever": "bm25"},
        headers=auth(),
        timeout=HTTP_TIMEOUT,
    )
    assert r.status_code == 200 and "axolotl" in r.json()["results"][0]["text"]
    assert httpx.get(locked.url + "/health", timeout=HTTP_TIMEOUT).json()["documents"] == 5


def test_serve_refuses_to_start_with_one_line_errors(
    tmp_path: Path, sample_index_dir: Path
) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ragsieve.cli", "serve", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )

    p = run("--index", str(tmp_path / "missing"), "--port", str(free_port()))
    assert p.returncode == 3 and p.stderr.startswith("error: no index at"), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as busy:
        port = busy.server_address[1]
        p = run("--index", str(sample_index_dir), "--port", str(port))
    assert p.returncode == 2 and "error: cannot listen on" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


# ----------------------------------------------------------------------------- in-process
class _Scripted(StandIn):
    """An OpenAI-compatible endpoint that misbehaves as its path says."""

    def do_POST(self) -> None:
        self.read_body()
        if "/slow/" in self.path:
            time.sleep(2)
        status, body = (500, b'{"error": "boom"}') if "/5xx/" in self.path else (200, b"{not json")
        self.send_json(body, status)


@pytest.fixture(scope="module")
def scripted_llm() -> Iterator[str]:
    with serving(_Scripted) as url:
        yield url


@pytest.mark.parametrize(
    ("fault", "status", "fragment"),
    [("slow", 504, "timed out"), ("5xx", 502, "HTTP 500"), ("garbage", 502, "malformed JSON")],
)
def test_llm_faults_map_to_502_504(
    sample_index_dir: Path, scripted_llm: str, fault: str, status: int, fragment: str
) -> None:
    from fastapi.testclient import TestClient

    from ragsieve.serve import create_app

    app = create_app(
        sample_index_dir,
        llm_spec=f"openai:x@{scripted_llm}/{fault}/v1",
        llm_options={"timeout": 0.5, "max_retries": 0},
    )
    r = TestClient(app).post("/ask", json={"question": "Who found the stone?", "k": 1})
    assert r.status_code == status, r.text
    assert set(r.json()) == {"error"} and fragment in r.json()["error"]


def test_unexpected_errors_are_500_without_traceback(
    sample_index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi.testclient import TestClient

    from ragsieve.serve import create_app

    app = create_app(sample_index_dir, llm_spec="openai:x@http://127.0.0.1:9/v1", preload=False)

    def broken() -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(app.state.ragsieve, "index", broken)
    r = TestClient(app).post("/search", json={"query": "x"})
    assert r.status_code == 500 and r.json() == {"error": "internal error"}
    assert "secret" not in r.text


# ----------------------------------------------------------------------------- method specs
QUESTIONS = [
    "In which year did Champollion announce the decipherment of hieroglyphs?",
    "How do honey bees tell the hive where flowers are?",
]


@pytest.fixture(scope="module")
def sentence_server(
    sentence_index_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("spec")
    config = tmp / "method.toml"
    config.write_text('[method]\nname = "pareto"\nk = 2\n')
    srv = start_server(sentence_index_dir, tmp / "server.log", "--config", str(config))
    yield srv.url
    stop_server(srv)
    assert "Traceback" not in srv.log_text()


@pytest.mark.integration
def test_http_search_and_ask_take_the_same_specs(
    sentence_server: str, method_specs: dict[str, str]
) -> None:
    for name, spec in method_specs.items():
        body = {"query": QUESTIONS[1], "method": spec, "budget": 120}
        r = httpx.post(sentence_server + "/search", json=body, timeout=300)
        assert r.status_code == 200, (name, r.text)
        assert r.json()["method"] == spec and r.json()["results"]
    body = {"question": QUESTIONS[0], "method": "full[unit=passage,floor=0.5]", "max_tokens": 16}
    r = httpx.post(sentence_server + "/ask", json=body, timeout=600)
    assert r.status_code == 200, r.text
    assert r.json()["method"] == "full" and r.json()["context"]
    bad = httpx.post(
        sentence_server + "/ask", json={"question": "x", "method": "full[flor=1]"}, timeout=60
    )
    assert bad.status_code == 400
    assert "valid keys are N, min_k" in bad.json()["error"]
    refused = httpx.post(
        sentence_server + "/search",
        json={"query": "x", "method": "carrot[agent=true,agent_dir=/tmp]"},
        timeout=60,
    )
    assert refused.status_code == 400
    assert "agent_dir cannot be set over HTTP" in refused.json()["error"]
    # --config: the method of an /ask that names none
    r = httpx.post(
        sentence_server + "/ask", json={"question": QUESTIONS[1], "max_tokens": 8}, timeout=600
    )
    assert r.status_code == 200, r.text
    assert r.json()["method"] == "pareto" and len(r.json()["context"]) == 2
