"""``POST /ask`` on a server with no LLM (``serve --llm none``): the tagger's answer span is the
answer, located in its document; a method without spans answers ``""`` with ``span`` null."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import Server, start_server, stop_server

from ragsieve.index import Index

pytestmark = pytest.mark.integration

QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


@pytest.fixture(scope="module")
def no_llm(sample_index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("serve-none") / "server.log"
    srv = start_server(sample_index_dir, log, "--llm", "none")
    yield srv
    stop_server(srv)
    assert "Traceback" not in srv.log_text()


def test_ask_with_no_llm_answers_with_the_span(no_llm: Server, sample_index_dir: Path) -> None:
    r = httpx.post(no_llm.url + "/ask", json={"question": QUESTION, "k": 3}, timeout=120)
    assert r.status_code == 200, r.text
    body = r.json()
    span = body["span"]
    assert body["answer"] == span["text"] and span["in_context"]
    assert body["tokens"]["prompt"] == 0 and body["cost"] == 0 and body["trace"]["llm"] is None
    doc = Index.open(sample_index_dir).get_document(span["doc_id"])
    assert doc is not None and doc.text[span["start"] : span["end"]] == span["text"]
    r = httpx.post(no_llm.url + "/ask", json={"question": QUESTION, "method": "naive"}, timeout=120)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["answer"], body["span"], body["line"]["kind"]) == ("", None, "none")


def test_ask_abstains_where_the_documents_do_not_answer(no_llm: Server) -> None:
    for q in ("?", "What is the boiling point of tungsten?"):
        r = httpx.post(no_llm.url + "/ask", json={"question": q}, timeout=120)
        assert r.status_code == 200, r.text
        body = r.json()
        assert (body["answer"], body["abstained"]) == (None, True), body["answer"]
        assert body["line"]["kind"] == "abstain" and body["line"]["why"]
    r = httpx.post(no_llm.url + "/ask", json={"question": QUESTION}, timeout=120)
    body = r.json()
    assert body["abstained"] is False and "1822" in body["answer"] and body["confidence"] > 0
    # The typed line says the same, with where its span sits.
    line = body["line"]
    assert (line["text"], line["abstained"], line["confidence"]) == (
        body["answer"],
        False,
        body["confidence"],
    )
    assert line["kind"] == "span" and line["span"] == body["span"]
