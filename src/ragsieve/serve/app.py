"""The HTTP API: ``POST /search``, ``POST /ask``, ``POST /explain``, ``GET /health``, and the
evidence viewer at ``GET /`` (FastAPI).

Design, and why:

* **Models load once, before the server listens.** :func:`create_app` opens the index, warms
  the query embedder (int8 ONNX: no torch), loads the LLM and builds the default method
  eagerly, so a bad index or LLM spec fails ``ragsieve serve`` with its one-line error instead
  of a half-started server, the first request does not pay seconds of model loading, and
  ``/health`` answering means ready.
* **Same JSON as the CLI.** ``/search`` mirrors ``ragsieve search --json`` and ``/ask`` is
  :meth:`ragsieve.types.Answer.to_json` (``ragsieve ask --json``), so clients can switch
  between the two without a second parser.
* **Concurrency.** Endpoints are plain ``def`` functions, which FastAPI runs in its thread pool,
  so a slow LLM call never blocks the event loop. Shared state is either immutable per request
  or guarded: torch models and the llama.cpp LLM serialise their own calls with locks,
  onnxruntime sessions and ``httpx.Client`` are thread-safe, an LLM backend not known to be
  thread-safe is wrapped in a lock here (:class:`SerialLLM`), and each request builds its own
  method/retriever objects over one index *snapshot* (see :meth:`ServerState.index`).
* **Index updates become visible.** ``ragsieve index`` may commit while we serve. At most once
  per ``reload_interval`` seconds a request re-reads the manifest; if it changed, a *new*
  :class:`~ragsieve.index.Index` is opened and the reference swapped. We do not call
  ``Index.reload()`` on the shared object because it re-pins tables one by one, which a
  concurrent reader could observe half-way; a swap gives every request one consistent version
  (old Lance versions are kept for 10 minutes, so in-flight readers can finish).
* **The viewer is one static page.** ``GET /`` serves ``static/viewer.html`` (inline CSS and
  JS, no build step, nothing fetched from elsewhere, pinned by a Content-Security-Policy that
  allows only its own inline code and requests to this server). It needs no token; its API
  calls send the one typed into it. ``/explain`` and ``/ask`` with ``explain: true`` give it
  :func:`ragsieve.explain.evidence_report`: the trace report plus each document cut into
  segments, the candidates scored and the selected ones marked.
* **Errors are JSON, never tracebacks.** :class:`~ragsieve.errors.RagsieveError` subclasses map
  to 400/502/503/504 with ``{"error": "<one line>"}``; anything else is logged with its
  traceback on the server and answered ``500 {"error": "internal error"}``.

The request and response bodies are in :mod:`ragsieve.serve.schemas`, what requests share in
:mod:`ragsieve.serve.state`; this module builds the app: guard, error handlers and routes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragsieve.errors import ConfigError, IndexStoreError, InputError, LLMError, RagsieveError
from ragsieve.index import Index
from ragsieve.methods import DEFAULT_METHOD, MethodSpec, Retrieval
from ragsieve.serve.schemas import (
    ERROR_RESPONSES,
    LLM_ERROR_RESPONSES,
    AskRequest,
    AskResponse,
    ExplainRequest,
    ExplainResponse,
    HealthResponse,
    SearchRequest,
    SearchResponse,
)
from ragsieve.serve.state import DEFAULT_RELOAD_INTERVAL, DEFAULT_RERANKERS, ServerState
from ragsieve.types import Scored, scored_json

log = logging.getLogger("ragsieve.serve")

#: Request bodies above this are refused with 413 before they are parsed.
MAX_BODY_BYTES = 64 * 1024
#: Most documents an evidence report (``/explain``, ``/ask`` with ``explain``) shows.
VIEWER_MAX_DOCUMENTS = 20
#: Uncovered text in an evidence report keeps this many characters either side of a cut.
VIEWER_GAP_CHARS = 600

#: Module level (not inside create_app): with postponed annotations FastAPI resolves the
#: ``Depends(_bearer)`` annotation of ``require_token`` in this module's globals.
_bearer = HTTPBearer(auto_error=False, description="The server's --token.")


# ----------------------------------------------------------------------------- errors
def _one_line(text: object, limit: int = 300) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def error_status(exc: RagsieveError) -> int:
    """HTTP status for a user-facing error: client mistakes 400, index 503, LLM 502/504."""
    if isinstance(exc, InputError | ConfigError):
        return 400
    if isinstance(exc, IndexStoreError):
        return 503
    if isinstance(exc, LLMError):
        low = str(exc).lower()
        return 504 if ("timed out" in low or "timeout" in low) else 502
    return 500


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class _GuardMiddleware:
    """Pure ASGI middleware: refuse oversized bodies (413) and turn any unexpected exception
    into ``500 {"error": "internal error"}`` with the traceback in the log, not the body.

    A declared ``Content-Length`` over the limit is refused before the body is read; a
    chunked body is counted while it streams in.
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_body_bytes
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _error(400, "invalid Content-Length")(scope, receive, send)
                    return
                if declared > limit:
                    msg = f"request body too large: {declared} bytes (limit {limit})"
                    await _error(413, msg)(scope, receive, send)
                    return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # An HTTPException passes through FastAPI's body parsing unchanged.
                    raise HTTPException(413, f"request body too large (limit {limit} bytes)")
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except Exception:
            log.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
            if not started:
                await _error(500, "internal error")(scope, receive, send)


# ----------------------------------------------------------------------------- the app
def create_app(
    index_dir: str | Path,
    *,
    llm_spec: str = "local",
    token: str | None = None,
    llm_options: dict[str, Any] | None = None,
    rerankers: Sequence[str] | None = DEFAULT_RERANKERS,
    reload_interval: float = DEFAULT_RELOAD_INTERVAL,
    max_body_bytes: int = MAX_BODY_BYTES,
    preload: bool = True,
    default_method: str | MethodSpec = DEFAULT_METHOD,
) -> FastAPI:
    """The ragsieve HTTP API over the index at ``index_dir``.

    Opens the index and loads the models now (raising the usual one-line
    :class:`~ragsieve.errors.RagsieveError` if it cannot). ``token`` protects ``/search``, ``/ask``
    and ``/explain`` with ``Authorization: Bearer TOKEN``; ``llm_options`` go to
    :func:`ragsieve.llm.get_llm` (e.g. ``timeout``, ``max_retries`` for ``openai:`` specs);
    ``rerankers`` is the allow-list of reranker names (None: any); ``reload_interval`` is the
    minimum number of seconds between checks for a new index commit (0: every request);
    ``default_method`` answers ``/ask`` requests that name no method (``serve --config``).
    """
    import ragsieve

    if token is not None and not token.strip():
        raise ConfigError("the bearer token is empty: pass a non-empty --token or unset it")
    # ServerState's parameters, in its order, named as here
    state = ServerState(
        index_dir, llm_spec, llm_options, rerankers, reload_interval, preload, default_method
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        state.close()

    app = FastAPI(
        docs_url=None,  # served offline by _add_docs (FastAPI's own page loads a CDN)
        redoc_url=None,
        title="ragsieve",
        version=ragsieve.__version__,
        description=(
            "Precise retrieval for RAG over one ragsieve index. `/search`, `/ask` and `/explain` "
            "return the same JSON as `ragsieve search --json`, `ragsieve ask --json` and "
            "`ragsieve explain --json` (plus the documents the evidence viewer at `/` draws)."
        ),
        lifespan=lifespan,
    )
    app.state.ragsieve = state
    app.add_middleware(_GuardMiddleware, max_body_bytes=max_body_bytes)
    _add_error_handlers(app)
    _add_health(app, state, token)
    _add_viewer(app)
    _add_docs(app)
    _add_rag_routes(app, state, _token_guard(token))
    return app


def viewer_html() -> str:
    """The evidence viewer page shipped in the package (``serve/static/viewer.html``)."""
    from importlib.resources import files

    return files("ragsieve.serve").joinpath("static", "viewer.html").read_text("utf-8")


def _inline_hashes(html: str, tag: str) -> str:
    """The CSP sources (``'sha256-...'``) that allow exactly the page's inline ``tag`` blocks."""
    return " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() + "'"
        for b in re.findall(rf"<{tag}>(.*?)</{tag}>", html, flags=re.DOTALL)
    )


def _page_headers(script_src: str, style_src: str) -> dict[str, str]:
    """The headers of a page this server serves: a Content-Security-Policy that allows these
    script and style sources and requests to this server only (nothing can be loaded from
    elsewhere), no MIME sniffing, no referrer."""
    return {
        "Content-Security-Policy": (
            f"default-src 'none'; script-src {script_src}; style-src {style_src}; "
            "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }


def _add_viewer(app: FastAPI) -> None:
    html = viewer_html()  # read once: a missing file fails create_app, not the first visitor
    headers = {
        **_page_headers(_inline_hashes(html, "script"), _inline_hashes(html, "style")),
        "Cache-Control": "no-cache",
    }

    @app.get("/", response_class=HTMLResponse, tags=["viewer"])
    def viewer() -> HTMLResponse:
        """The evidence viewer: ask or explain in a browser and see the selected context
        inside its documents (open without a token; its API calls send the one typed in)."""
        return HTMLResponse(html, headers=headers)


def _token_guard(token: str | None) -> list[Any]:
    """The dependency that protects ``/search``, ``/ask`` and ``/explain`` (none without a
    token)."""
    expected = token.strip().encode() if token else None
    if expected is None:
        return []

    def require_token(
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> None:
        """Constant-time comparison, so response timing does not reveal a token prefix."""
        if creds is None or not hmac.compare_digest(creds.credentials.encode(), expected):
            raise HTTPException(
                401, "missing or invalid bearer token", headers={"WWW-Authenticate": "Bearer"}
            )

    return [Depends(require_token)]


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RagsieveError)
    async def on_ragsieve_error(request: Request, exc: RagsieveError) -> JSONResponse:
        status = error_status(exc)
        msg = _one_line(exc) or type(exc).__name__
        log.warning("%s %s -> %d: %s", request.method, request.url.path, status, msg)
        return _error(status, msg)

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail), dict(exc.headers or {}) or None)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        """422 ``{"error": "k: ...; query: ..."}``: where and why, never the input itself (a
        lone surrogate echoed back could not even be encoded)."""
        parts = []
        for e in exc.errors()[:5]:
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
            parts.append(f"{where}: {e.get('msg', 'invalid')}")
        return _error(422, _one_line("; ".join(parts) or "invalid request"))


def _add_docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI from the ``swagger-ui-bundle`` package (no CDN), under a CSP that
    allows only this server; without the package only ``/openapi.json`` is served."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return
    from fastapi.openapi.docs import get_swagger_ui_html
    from starlette.staticfiles import StaticFiles

    app.mount("/docs/static", StaticFiles(directory=swagger_ui_path), name="docs-static")
    page = get_swagger_ui_html(
        openapi_url=app.openapi_url or "/openapi.json",
        title=f"{app.title} API",
        swagger_js_url="/docs/static/swagger-ui-bundle.js",
        swagger_css_url="/docs/static/swagger-ui.css",
        swagger_favicon_url="/docs/static/favicon-32x32.png",
    ).body.decode()
    headers = _page_headers(f"'self' {_inline_hashes(page, 'script')}", "'self' 'unsafe-inline'")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(page, headers=headers)


def _add_health(app: FastAPI, state: ServerState, token: str | None) -> None:
    expected = token.strip().encode() if token else None

    @app.get("/health", response_model=HealthResponse, tags=["meta"])
    def health(
        creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> dict[str, Any]:
        """Readiness plus what is served; open without a token (for load balancers).

        The server listens only after :class:`ServerState` has loaded the query embedder, the
        LLM and the default method's models, so ``ready`` is true whenever this answers; with
        ``preload=False`` (tests) they load on the first request instead.
        """
        s = state.index().stats()
        shown = expected is None or (
            creds is not None and hmac.compare_digest(creds.credentials.encode(), expected)
        )
        return {
            "status": "ok",
            "ready": True,  # models load before the server listens (see the docstring)
            "documents": int(s["documents"]),
            "chunks": int(s["chunks"]),
            "index": str(state.index_dir) if shown else None,
            "llm": state.llm_name if shown else None,
            "loaded": list(state.loaded) if shown else None,
        }


def _add_rag_routes(app: FastAPI, state: ServerState, protected: list[Any]) -> None:
    def rag_post(path: str, body: type, more: dict[int | str, Any] | None = None) -> Any:
        """``@app.post`` of a RAG route: behind the token, with its 200 body and the error
        bodies in the OpenAPI schema."""
        responses = {200: {"model": body}, **ERROR_RESPONSES, **(more or {})}
        return app.post(path, dependencies=protected, responses=responses, tags=["rag"])

    @rag_post("/search", SearchResponse)
    def search(req: SearchRequest) -> JSONResponse:
        """The top-k chunks for a query (the JSON of ``ragsieve search --json``)."""
        from ragsieve.api import search as do_search

        idx = state.index()
        out: dict[str, Any] = {"query": req.query, "retriever": req.retriever}
        if req.method is not None:
            run = {"k": req.k, "budget": req.budget, "retriever": req.retriever}
            method = state.method(req.method, idx, "search", reranker=req.reranker, **run)
            r = method.retrieve([req.query])[0]
            hits = list(r.context.chunks)
            out.update(results=_located(idx, hits, scored_json(hits)), method=req.method)
            return JSONResponse(out)
        if req.budget is not None:
            raise InputError("budget needs a method (plain search returns the top k)")
        retriever = req.retriever or "dense"
        state.check_reranker(req.reranker, idx)
        hits = do_search(req.query, idx, k=req.k, retriever=retriever, reranker=req.reranker)
        out.update(retriever=retriever, results=_located(idx, hits, scored_json(hits)))
        return JSONResponse(out)

    @rag_post("/ask", AskResponse, LLM_ERROR_RESPONSES)
    def ask(req: AskRequest) -> JSONResponse:
        """Retrieve and answer with the server's LLM (the JSON of ``ragsieve ask --json``);
        with ``explain``, also the evidence report of the retrieval the answer used."""
        idx = state.index()
        run = {"k": req.k, "budget": req.budget, "retriever": req.retriever}
        method = state.method(req.method, idx, "ask", reranker=req.reranker, **run)
        # Method.ask is exactly retrieve + answer; split here so the report reuses the retrieval.
        r = method.retrieve([req.question])[0]
        answer = method.answer(
            r, state.llm, max_tokens=req.max_tokens, total_budget=req.total_budget
        )
        out = answer.to_json()
        _located(idx, answer.context.chunks, out["context"])
        if req.explain:
            # The context the answer read (after feedback or a --total-budget trim) is the
            # selection; the candidates are the retrieval's; seconds include generation.
            used = [s.chunk.id for s in answer.context.chunks]
            final = Retrieval(
                r.question,
                answer.context,
                r.candidates,
                {**answer.trace, "selected": used},
                answer.timings,
            )
            out["explain"] = _evidence(idx, final)
        return JSONResponse(out)

    @rag_post("/explain", ExplainResponse)
    def explain(req: ExplainRequest) -> JSONResponse:
        """Why a method chooses its context, without the LLM: the score curve with the cut,
        tokens and seconds per stage, and each document with its candidates scored and the
        selected ones marked (``ragsieve explain --json`` plus ``documents``)."""
        idx = state.index()
        run = {"k": req.k, "budget": req.budget, "retriever": req.retriever}
        method = state.method(req.method, idx, "explain", reranker=req.reranker, **run)
        r = method.retrieve([req.question])[0]
        return JSONResponse(_evidence(idx, r))


def _located(
    index: Index, hits: Sequence[Scored], items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``items`` (the JSON of ``hits``, in the same order), each given ``where``: its page or
    heading (:func:`ragsieve.explain.where_of`), ``""`` when its document has neither, as
    ``ragsieve search --json`` and ``ask --json`` give it."""
    from ragsieve.explain import where_of

    where = where_of(index, hits)
    for item in items:
        item["where"] = where.get(item["chunk_id"], "")
    return items


def _evidence(index: Index, r: Retrieval) -> dict[str, Any]:
    """The viewer's report of ``r``, bounded: at most ``VIEWER_MAX_DOCUMENTS`` documents, long
    stretches without a candidate shortened (a response stays small for long documents)."""
    from ragsieve.explain import evidence_report

    return evidence_report(index, r, max_documents=VIEWER_MAX_DOCUMENTS, gap_chars=VIEWER_GAP_CHARS)
