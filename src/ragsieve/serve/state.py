"""What every request of the HTTP API shares (:class:`ServerState`): the current index
snapshot, swapped when ``ragsieve index`` commits; the LLM, its calls serialised where the
backend is not known to be thread-safe; and the gate on the models a request may load."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragsieve.errors import RagsieveError
from ragsieve.index import Index
from ragsieve.index.store import MANIFEST
from ragsieve.methods import DEFAULT_METHOD, Method, MethodSpec
from ragsieve.serve.gate import ModelGate, check_default_method
from ragsieve.serve.limits import check_http_options

log = logging.getLogger("ragsieve.serve")

#: Models a client's request may make the server load by default (``serve --rerankers``): the
#: offline, shipped ones: the rerankers by name, the evidence tagger and CARROT's agent. Other
#: names load a model from a server-side path or download one from a hub, which a remote client
#: must not trigger. The models of the server's own default method are loaded at start-up and
#: usable whatever the list says.
DEFAULT_RERANKERS: tuple[str, ...] = (
    "ensemble",
    "bi-encoder",
    "bm25",
    "cross-encoder",
    "tagger",
    "agent",
)
#: How often (seconds) a request may check whether ``ragsieve index`` committed a new version.
DEFAULT_RELOAD_INTERVAL = 1.0


# ----------------------------------------------------------------------------- shared state
class SerialLLM:
    """Wraps an LLM backend that is not known to be thread-safe so that calls take turns.

    The shipped backends need no wrapper (llama.cpp serialises with its own lock, the HTTP
    client is thread-safe); a backend registered by a plugin might keep per-call state.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self.name: str = str(getattr(inner, "name", type(inner).__name__))

    def generate(self, messages: list[dict[str, str]], **kwargs: Any) -> Any:
        with self._lock:
            return self._inner.generate(messages, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)


def _thread_safe_llm(llm: Any) -> Any:
    from ragsieve.llm.local import LlamaCppLLM
    from ragsieve.llm.openai_compat import OpenAICompatLLM

    return llm if isinstance(llm, LlamaCppLLM | OpenAICompatLLM) else SerialLLM(llm)


def _manifest_tables(index_dir: Path) -> dict[str, Any] | None:
    """The committed table versions named by the manifest, or None if it cannot be read now."""
    try:
        tables = json.loads((index_dir / MANIFEST).read_text("utf-8")).get("tables")
    except (OSError, ValueError, AttributeError):
        return None
    return tables if isinstance(tables, dict) else None


class ServerState:
    """What every request shares: the current index snapshot, the LLM and the warm models."""

    def __init__(
        self,
        index_dir: str | Path,
        llm_spec: str = "local",
        llm_options: dict[str, Any] | None = None,
        rerankers: Sequence[str] | None = DEFAULT_RERANKERS,
        reload_interval: float = DEFAULT_RELOAD_INTERVAL,
        preload: bool = True,
        default_method: str | MethodSpec = DEFAULT_METHOD,
    ) -> None:
        from ragsieve.llm import get_llm

        # The default method's models: every file checked now (a missing tagger folder in
        # --config fails start-up, not every request after), and usable by any request.
        uses = check_default_method(default_method, llm_spec)
        self.index_dir = Path(index_dir)
        self._index = Index.open(self.index_dir)
        self._tables = dict(self._index.manifest["tables"])
        self.reload_interval = reload_interval
        self._reload_lock = threading.Lock()
        self._next_check = time.monotonic() + reload_interval
        self.llm_spec = llm_spec
        # ``--llm none``: no LLM; /ask answers with the tagger's answer span alone.
        no_llm = llm_spec.strip().lower() == "none"
        llm = None if no_llm else get_llm(llm_spec, **(llm_options or {}))
        self.llm_name = "none" if llm is None else str(getattr(llm, "name", llm_spec))
        self.default_method = default_method
        #: What has been loaded, in order (``/health``'s ``loaded``).
        self.loaded: list[str] = []
        self.gate = ModelGate(rerankers, uses, self.loaded)
        if preload:
            try:
                # Load the query embedder now (and run it once): not on the first request, and
                # never twice because two first requests raced through get_embedder's cache. It is
                # the int8 ONNX build for a MiniLM index, so no torch is imported here.
                qe = self._index.embedder
                qe.embed(["warm-up"])
                # The default method's own models (a reranker, the tagger) load here too,
                # before the LLM: a method the index cannot serve must fail before llama.cpp
                # starts its server threads (stopping them right after start can block in
                # accept(), which hung `serve --config`).
                self.method(None, self._index, endpoint=None)
                load = getattr(llm, "load", None)
                if callable(load):
                    load()
                self.loaded[:0] = [  # first: the default method's rerankers warmed above
                    f"query embedder {qe.name}",
                    f"llm {self.llm_name}",
                    f"method {self.default_method_label()}",
                ]
            except BaseException:
                close = getattr(llm, "close", None)
                if callable(close):
                    close()
                raise
        self.llm = _thread_safe_llm(llm) if llm is not None else None

    def default_method_label(self) -> str:
        from ragsieve.methods.spec import as_spec

        return as_spec(self.default_method).label

    def index(self) -> Index:
        """The index snapshot a request should use, after a rate-limited check for a commit.

        Only one thread checks at a time (the others keep the current snapshot rather than
        wait); a failed reload keeps serving the last good version and is logged.
        """
        now = time.monotonic()
        if now >= self._next_check and self._reload_lock.acquire(blocking=False):
            try:
                self._next_check = now + self.reload_interval
                self._maybe_reload()
            finally:
                self._reload_lock.release()
        return self._index

    def _maybe_reload(self) -> None:
        tables = _manifest_tables(self.index_dir)
        if tables is None or tables == self._tables:
            return
        try:
            fresh = Index.open(self.index_dir)
            fresh.embedder  # noqa: B018 - build (and cache) a changed embedder before the swap
        except RagsieveError as e:
            log.warning("index changed but cannot be reopened, serving the old version: %s", e)
            self._tables = tables  # do not retry until the manifest changes again
            return
        self._index, self._tables = fresh, dict(fresh.manifest["tables"])
        s = fresh.stats()
        log.info("index reloaded: %s documents, %s chunks", s["documents"], s["chunks"])

    def check_reranker(self, name: str | None, index: Index) -> None:
        """Refuse a reranker outside the allow-list; build an allowed one once, under a lock."""
        self.gate.check_reranker(name, index)

    def method(
        self,
        text: str | MethodSpec | None,
        index: Index,
        endpoint: str | None = "ask",
        **run: Any,
    ) -> Method:
        """The method of spec ``text`` (None: the server's default), built by the one spec
        parser, for ``endpoint`` (``search``, ``ask``, ``explain``; None: start-up). A client's
        spec may set only the options declared safe for the network, each within its bound
        (:mod:`ragsieve.serve.limits`); every model the resolved config would load, defaults
        included, must be on the allow-list or already loaded by the server's default method;
        an LLM judge runs only on ``/ask``, with the server's LLM. The server's own default
        (``serve --config``) is trusted as given."""
        from ragsieve.methods.models import build_lending, spec_models
        from ragsieve.methods.spec import as_spec, canonical_options, make_config, method_def

        spec = as_spec(self.default_method if text is None else text)
        # Rerankers the client names, in its spec or the request's own ``reranker``: checked
        # against the allow-list after the gate, and refused even where the method ignores
        # them here (full on an index without a sentence table).
        named: list[str] = []
        if text is not None:
            defn = method_def(spec.name)
            make_config(defn, spec.options, run)  # unknown keys and bad types: the usual line
            check_http_options(
                spec.name, canonical_options(defn, spec.options), check_reranker=named.append
            )
        spec, uses = spec_models(spec, run, llm=self.llm_spec)
        self.gate.check(spec.label, uses, endpoint, index)
        if isinstance(run.get("reranker"), str):
            named.append(run["reranker"])
        for reranker in named:
            self.gate.check_reranker(reranker)
        lend = getattr(self, "llm", None) if endpoint == "ask" else None
        return build_lending(spec, index, lend, **run)

    def close(self) -> None:
        close = getattr(self.llm, "close", None)
        if callable(close):
            close()
