"""Every unit the HTTP API returns says where it sits in its document (``where``: ``page 3`` of
a PDF, the heading above it, ``""`` when it has neither), as the CLI's ``--json`` does: a real
server over a real index of PDFs, HTML pages and DOCX files (tests/rich_docs.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cli_helpers import run
from rich_docs import write_folder
from server_helpers import Server, served

pytestmark = pytest.mark.integration

#: Seconds an HTTP call may take before it counts as hung (a hang guard, not a speed check).
HTTP_TIMEOUT = 300
Q = "When was the dredger Albatross commissioned?"


@pytest.fixture(scope="module")
def rich_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 PDFs, 2 HTML pages and 2 DOCX files, indexed by the real CLI."""
    tmp = tmp_path_factory.mktemp("where")
    idx = tmp / "ix"
    p = run("index", str(write_folder(tmp / "docs")), "--index", str(idx))
    assert p.returncode == 0, p.stderr
    return idx


@pytest.fixture(scope="module")
def server(rich_index: Path) -> Iterator[Server]:
    with served(rich_index, rich_index.parent / "server.log", "--no-access-log") as srv:
        yield srv


def post(srv: Server, path: str, body: dict) -> dict:
    r = httpx.post(srv.url + path, json=body, timeout=HTTP_TIMEOUT)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("method", [None, "tagger"])
def test_search_results_say_where_as_the_cli_does(
    server: Server, rich_index: Path, method: str | None
) -> None:
    """/search (a ranking, or a method's context) is ``ragsieve search --json``: the same
    units, each with the same ``where``, in the same shape."""
    body = {"query": Q, "k": 3} | ({"method": method} if method else {})
    hits = post(server, "/search", body)["results"]
    extra = ["--method", method] if method else []
    p = run("search", Q, "--index", str(rich_index), "--k", "3", *extra, "--json")
    assert p.returncode == 0, p.stderr
    cli = json.loads(p.stdout)["results"]
    assert hits and [(h["chunk_id"], h["where"]) for h in hits] == [
        (c["chunk_id"], c["where"]) for c in cli
    ]
    assert [set(h) for h in hits] == [set(c) for c in cli]
    assert all(h["where"] for h in hits)  # every file here has pages or headings
    top = next(h for h in hits if "Albatross" in h["text"])
    assert top["title"] == "Harbour report"
    # A sentence sits on one page; a passage may cross a page break.
    assert top["where"] in (("page 3",) if method else ("page 3", "pages 2-3"))


def test_ask_context_says_where(server: Server) -> None:
    body = post(server, "/ask", {"question": Q, "method": "tagger", "max_tokens": 16})
    assert body["context"] and all(isinstance(c["where"], str) for c in body["context"])
    top = next(c for c in body["context"] if "Albatross" in c["text"])
    assert top["where"] == "page 3" and top["title"] == "Harbour report"
    # With explain, the report's segments agree with the context.
    body = post(
        server, "/ask", {"question": Q, "method": "tagger", "max_tokens": 16, "explain": True}
    )
    segs = {
        s["chunk_id"]: s["where"]
        for d in body["explain"]["documents"]
        for s in d["segments"]
        if s["selected"]
    }
    assert {c["chunk_id"]: c["where"] for c in body["context"]}.items() <= segs.items()
