"""Which models a request may make the server load (``serve --rerankers``), and the start-up
check of the default method's model files.

The gate reads the models from a method's *resolved* config, defaults included
(:func:`ragsieve.methods.models.models_of`): ``sage`` loads the ensemble even when the request
names no reranker, ``saki`` the cross-encoder twice (reranker and judge), ``full`` the tagger or
its reranker, ``carrot[agent=true]`` the agent and any of the four scorers it may pick. A model
is allowed when its name is on the list or the server's default method loaded it at start-up.
An LLM judge (``saki[judge=llm]``) never runs where no LLM is called (``/explain``,
``/search``); on ``/ask`` it is lent the server's own LLM.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragsieve.errors import ConfigError
from ragsieve.methods.models import LLM, RERANKER, ModelUse

if TYPE_CHECKING:
    from ragsieve.index import Index
    from ragsieve.methods import MethodSpec


def check_default_method(method: str | MethodSpec, llm_spec: str) -> list[ModelUse]:
    """The models of the server's default method, after checking that every file they are
    read from exists and that it judges, if it does, with the server's one LLM (which answers
    and, for ``saki[judge=llm]``, judges: a ``--config`` naming another is refused)."""
    from ragsieve.methods.models import check_files, spec_models

    spec, uses = spec_models(method, llm=llm_spec)
    check_files(uses, spec.label)
    judge = spec.options.get("llm")
    if spec.name == "saki" and judge is not None and str(judge) != llm_spec:
        raise ConfigError(
            f"method {spec.label} judges with llm={judge}, but this server answers and judges "
            f"with --llm {llm_spec}: drop llm from the [method] table or pass --llm {judge}"
        )
    return uses


class ModelGate:
    """The allow-list (None: any model), the default method's models (always usable), and the
    rerankers built so far, each once, under a lock (named in ``loaded``)."""

    def __init__(
        self, allowed: Sequence[str] | None, preloaded: Sequence[ModelUse], loaded: list[str]
    ) -> None:
        self.allowed = None if allowed is None else frozenset(allowed)
        self.preloaded = {(u.kind, u.name) for u in preloaded}
        self.loaded = loaded
        self._warm: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def allows(self, kind: str, name: str) -> bool:
        if self.allowed is None or (kind, name) in self.preloaded:
            return True
        return name in self.allowed

    def refusal(self) -> str:
        """``which this server does not allow (--rerankers bm25); allowed: bm25``."""
        names = sorted(self.allowed or ())
        flag = ",".join(names) or "''"
        return f"which this server does not allow (--rerankers {flag}); allowed: " + (
            ", ".join(names) or "none"
        )

    def check_reranker(self, name: str | None, index: Index | None = None) -> None:
        """Refuse a reranker named outside a method (a request's ``reranker``) unless allowed;
        with ``index``, build it once."""
        if name is None:
            return
        if not self.allows(RERANKER, name):
            raise ConfigError(f"reranker={name} names a model {self.refusal()}")
        if index is not None:
            self.warm(name, index)

    def warm(self, name: str, index: Index) -> None:
        key = (name, index.config.embedder)
        if key in self._warm:
            return
        from ragsieve.rerank import get_reranker

        with self._lock:
            if key not in self._warm:
                get_reranker(name, index.config.embedder)  # positional: same lru_cache key
                self._warm.add(key)
                self.loaded.append(f"reranker {name}")

    def check(
        self, label: str, uses: Sequence[ModelUse], endpoint: str | None, index: Index
    ) -> None:
        """Refuse a method (spec ``label``) that would load a model the server does not allow,
        named by an option or by its default, or that needs an LLM on an ``endpoint`` that
        never calls one (None: start-up); then build its allowed rerankers."""
        for u in uses:  # first: an LLM where none may run says more than an allow-list
            if u.kind == LLM and endpoint not in (None, "ask"):
                raise ConfigError(
                    f"/{endpoint} never calls the LLM, and {u.describe(label)}: use "
                    "judge=cross-encoder or judge=none, or POST /ask (explain: true adds this "
                    "report)"
                )
        for u in uses:  # an LLM judge on /ask is lent the server's own LLM
            if u.kind != LLM and not self.allows(u.kind, u.name):
                raise ConfigError(f"{u.describe(label)}, {self.refusal()}")
        for u in uses:
            if u.kind == RERANKER:
                self.warm(u.name, index)
