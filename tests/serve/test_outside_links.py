"""A file linked into a served folder from outside it is never published: not indexed, not
listed by ``info --documents``, in no ``/search``, ``/ask`` or ``/explain`` response; and an
index that holds such a document anyway (its manifest says its links were not followed) answers
no text of it. A real index, a real server on 127.0.0.1, the packaged reader."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cli_helpers import run
from server_helpers import Server, served

pytestmark = pytest.mark.integration

#: Seconds an HTTP call may take before it counts as hung (a hang guard, not a speed check).
HTTP_TIMEOUT = 300
#: Words only the outside file holds: any response that carries them published it.
SECRET = "quetzalcoatl-7731"
SECRET_TEXT = f"root:x:0:0:root:/root:/bin/bash\n{SECRET} daemon password is {SECRET}.\n"


def _folder(tmp: Path) -> tuple[Path, Path]:
    docs, outside = tmp / "docs", tmp / "etc"
    docs.mkdir()
    outside.mkdir()
    (docs / "lighthouse.md").write_text(
        "# Lighthouse\n\nThe lighthouse on Genovia Point flashes green every five seconds.\n"
    )
    (docs / "bees.md").write_text("# Bees\n\nHoney bees dance to tell the hive where food is.\n")
    secret = outside / "passwd"
    secret.write_text(SECRET_TEXT)
    (docs / "passwd.txt").symlink_to(secret)
    return docs, secret


@pytest.fixture(scope="module")
def linked_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("links")
    docs, secret = _folder(tmp)
    idx = tmp / "ix"
    p = run("index", str(docs), "--index", str(idx))
    assert p.returncode == 0, p.stderr
    link = docs / "passwd.txt"
    assert f"warning: skipped {link}: a symlink to {secret.resolve()}" in p.stderr, p.stderr
    return idx, secret


@pytest.fixture(scope="module")
def server(linked_index: tuple[Path, Path]) -> Iterator[Server]:
    idx, _ = linked_index
    with served(idx, idx.parent / "server.log", "--no-access-log") as srv:
        yield srv


def _post(srv: Server, path: str, body: dict) -> str:
    r = httpx.post(srv.url + path, json=body, timeout=HTTP_TIMEOUT)
    assert r.status_code == 200, r.text
    assert r.json()  # an answer, not an empty body
    return r.text


def test_a_linked_file_is_not_served(server: Server, linked_index: tuple[Path, Path]) -> None:
    idx, secret = linked_index
    p = run("info", "--index", str(idx), "--documents")
    assert p.returncode == 0, p.stderr
    assert "passwd" not in p.stdout and "lighthouse" in p.stdout
    questions = ["What is the daemon password?", "root:x:0:0 bash", "?"]
    seen: list[str] = []
    for q in questions:
        for retriever in ("dense", "bm25", "hybrid"):
            seen.append(_post(server, "/search", {"query": q, "k": 10, "retriever": retriever}))
        seen.append(_post(server, "/search", {"query": q, "k": 10, "method": "tagger"}))
        seen.append(_post(server, "/explain", {"question": q, "method": "tagger", "k": 10}))
        seen.append(_post(server, "/ask", {"question": q, "max_tokens": 16, "explain": True}))
    assert any("lighthouse" in s.lower() for s in seen)  # the folder's own text is served
    for s in seen:
        assert SECRET not in s and "root:x:0:0:root" not in s and str(secret) not in s


def test_an_index_that_holds_a_linked_file_answers_none_of_it(tmp_path: Path) -> None:
    """Read with --follow-symlinks, then its manifest says the links were not followed (as an
    index whose sync has not run yet would): every read path hides the document."""
    from ragsieve import api
    from ragsieve.index import Index

    docs, secret = _folder(tmp_path)
    idx = tmp_path / "ix"
    p = run("index", str(docs), "--index", str(idx), "--follow-symlinks")
    assert p.returncode == 0, p.stderr
    manifest = json.loads((idx / "ragsieve.json").read_text())
    assert manifest["roots"] == {str(docs.resolve()): True}
    assert SECRET in Index.open(idx).get_document(str(secret.resolve())).text
    manifest["roots"] = {str(docs.resolve()): False}
    (idx / "ragsieve.json").write_text(json.dumps(manifest))

    index = Index.open(idx)
    hidden = str(secret.resolve())
    assert index.hidden_ids() == [hidden]
    assert index.get_document(hidden) is None and index.chunks_of(hidden) == []
    for retriever in ("dense", "bm25", "hybrid"):
        hits = api.search("daemon password root", index, k=10, retriever=retriever)
        assert all(h.chunk.doc_id != hidden for h in hits)
        assert hits or retriever == "bm25"  # no word of the question is in the folder's files
    answer = api.ask("What is the daemon password?", index, llm="none")
    assert answer.context.chunks and SECRET not in answer.context.text
    with served(idx, tmp_path / "server.log", "--no-access-log") as srv:
        for retriever in ("dense", "bm25"):
            body = {"query": "daemon password lighthouse", "k": 10, "retriever": retriever}
            text = _post(srv, "/search", body)
            assert SECRET not in text and "flashes green" in text
