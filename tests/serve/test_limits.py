"""Over HTTP, with a token, no method-spec option can name a model or a path or pass the
request limits: one case per option of every method's config (a real ``ragsieve serve`` on
127.0.0.1). Options not declared safe are refused; declared ones are refused past their bound.
Also: ``/health`` names no path without the token, ``/docs`` loads nothing from elsewhere, and
every error body is ``{"error": ...}``."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import Server, start_server, stop_server

from ragsieve.llm.server import free_port
from ragsieve.methods.registry import METHODS
from ragsieve.serve.limits import COMMON, SAFE

pytestmark = pytest.mark.integration

#: Seconds an HTTP call may take before it counts as hung (a hang guard, not a speed check).
HTTP_TIMEOUT = 300

TOKEN = "limits-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _cases() -> list[tuple[str, str, Any]]:
    """(method, option, a value the server must refuse) for every config field."""
    out: list[tuple[str, str, Any]] = []
    for name, defn in METHODS.items():
        allowed = {**COMMON, **SAFE.get(name, {})}
        for f in dataclasses.fields(defn.config):
            b = allowed.get(f.name)
            if b is None:
                out.append((name, f.name, "/etc"))  # not declared safe: any value is refused
            elif b.kind == "int":
                out.append((name, f.name, int(b.hi) + 1))
                out.append((name, f.name, 99999999999999999999))
                out.append((name, f.name, int(b.lo) - 1))
            elif b.kind == "float":
                out.append((name, f.name, b.hi + 1))
                out.append((name, f.name, b.lo - 1))
            elif b.kind in ("choice", "reranker"):
                out.append((name, f.name, "/etc"))
                out.append((name, f.name, "sentence-transformers/all-MiniLM-L6-v2"))
            else:  # bool: only true/false pass the spec parser
                out.append((name, f.name, "/etc"))
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def server(sample_index_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("limits") / "server.log"
    llm = f"openai:x@http://127.0.0.1:{free_port()}/v1"  # no LLM is called here
    srv = start_server(sample_index_dir, log, "--token", TOKEN, "--llm", llm, "--no-access-log")
    yield srv
    stop_server(srv)
    assert "Traceback" not in srv.log_text()


def test_every_option_is_covered() -> None:
    """The table above reaches every method and all its options (a new one is refused until
    it is declared in ragsieve.serve.limits)."""
    covered = {(m, o) for m, o, _ in CASES}
    every = {(n, f.name) for n, d in METHODS.items() for f in dataclasses.fields(d.config)}
    assert covered == every and len(CASES) > 100


@pytest.mark.parametrize(("method", "option", "value"), CASES, ids=lambda v: str(v)[:24])
def test_spec_option_refused_over_http(
    server: Server, method: str, option: str, value: Any
) -> None:
    spec = f"{method}[{option.rstrip('_')}={value}]"
    for path, body in (("/search", {"query": "x"}), ("/explain", {"question": "x"})):
        r = httpx.post(server.url + path, json={**body, "method": spec}, headers=AUTH, timeout=60)
        assert r.status_code == 400, (spec, r.text)
        assert set(r.json()) == {"error"}


def test_safe_options_within_bounds_are_accepted(server: Server) -> None:
    for spec in ("naive[k=100,candidates=200]", "naive[budget=100000]", "naive[reranker=bm25]"):
        r = httpx.post(
            server.url + "/search",
            json={"query": "lighthouse", "method": spec},
            headers=AUTH,
            timeout=120,
        )
        assert r.status_code == 200, (spec, r.text)


def test_health_names_no_path_without_the_token(server: Server, sample_index_dir: Path) -> None:
    anon = httpx.get(server.url + "/health", timeout=HTTP_TIMEOUT).json()
    assert anon["ready"] and anon["documents"] == 4
    assert anon["index"] is None and anon["llm"] is None and anon["loaded"] is None
    assert str(sample_index_dir) not in str(anon)
    wrong = httpx.get(
        server.url + "/health", headers={"Authorization": "Bearer no"}, timeout=HTTP_TIMEOUT
    ).json()
    assert wrong["index"] is None
    full = httpx.get(server.url + "/health", headers=AUTH, timeout=HTTP_TIMEOUT).json()
    assert full["index"] == str(sample_index_dir) and full["loaded"]


def test_docs_are_served_offline_with_a_csp(server: Server) -> None:
    r = httpx.get(server.url + "/docs", timeout=HTTP_TIMEOUT)
    assert r.status_code == 200
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    urls = re.findall(r'(?:src|href)="([^"]+)"', r.text)
    assert urls and all(u.startswith("/docs/static/") for u in urls), urls
    assert "cdn" not in r.text.lower()
    for u in urls:
        assert httpx.get(server.url + u, timeout=HTTP_TIMEOUT).status_code == 200, u
    assert (
        httpx.get(server.url + "/redoc", timeout=HTTP_TIMEOUT).status_code == 404
    )  # it would load a CDN
    assert httpx.get(server.url + "/openapi.json", timeout=HTTP_TIMEOUT).status_code == 200


def test_every_error_is_error_json(server: Server) -> None:
    cases = [
        ({"query": ""}, 422),
        ({"query": "x", "k": 0}, 422),
        ({"query": "x", "extra": 1}, 422),
        ({"query": "x", "method": "naive[k=1,k=2]"}, 400),
        ({"query": "x", "method": "nope"}, 400),
    ]
    for body, status in cases:
        r = httpx.post(server.url + "/search", json=body, headers=AUTH, timeout=HTTP_TIMEOUT)
        assert r.status_code == status and set(r.json()) == {"error"}, (body, r.text)
    for raw in (
        b'{"query": "\\ud800"}',
        b'{"query": "a\\udfffb"}',
        b'{"query": "x", "method": "naive[k=\\ud800]"}',
        b"{not json",
        b"\xff\xfe",
    ):
        r = httpx.post(
            server.url + "/search",
            content=raw,
            headers={**AUTH, "Content-Type": "application/json"},
            timeout=HTTP_TIMEOUT,
        )
        assert r.status_code == 422 and set(r.json()) == {"error"}, (raw, r.text)
    r = httpx.post(server.url + "/search", json={"query": "x"}, timeout=HTTP_TIMEOUT)
    assert r.status_code == 401 and set(r.json()) == {"error"}


def test_carrot_choices_over_http_are_the_methods_own() -> None:
    """limits.py spells its choices as literals (it imports nothing heavy); CARROT's must stay
    the values the method itself accepts."""
    from ragsieve.methods.carrot import SEARCHES
    from ragsieve.rerank.base import COMBINATION_COSINES

    assert SAFE["carrot"]["combination_cosine"].choices == COMBINATION_COSINES
    assert SAFE["carrot"]["search"].choices == SEARCHES
