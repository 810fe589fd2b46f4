"""One default method everywhere: every entry point that runs a method when none is named
(``ask``, ``explain``, ``serve``, ``ragsieve.ask``, ``ragsieve.explain``, ``ragsieve.pool`` and
the framework adapters) runs :data:`ragsieve.defaults.DEFAULT_METHOD`."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from cli_helpers import run

from ragsieve.defaults import DEFAULT_METHOD

pytestmark = pytest.mark.integration

Q = "In which year did Champollion announce the decipherment of hieroglyphs?"


def _default(fn: object, name: str = "method") -> object:
    return inspect.signature(fn).parameters[name].default  # type: ignore[arg-type]


def test_the_python_entry_points_share_the_one_default() -> None:
    from ragsieve import api, explain, methods, pool
    from ragsieve.integrations import IndexMethod
    from ragsieve.serve.app import create_app

    assert methods.DEFAULT_METHOD == pool.DEFAULT_METHOD == DEFAULT_METHOD
    assert DEFAULT_METHOD in methods.METHODS
    for fn in (api.ask, explain.explain, pool.PoolSelector.__init__, IndexMethod.__init__):
        assert _default(fn) == DEFAULT_METHOD, fn
    assert _default(create_app, "default_method") == DEFAULT_METHOD


def test_the_framework_adapters_share_the_one_default() -> None:
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    pytest.importorskip("haystack")
    from ragsieve.integrations import haystack, langchain, llamaindex

    assert langchain.RagsieveCompressor.model_fields["method"].default == DEFAULT_METHOD
    assert langchain.RagsieveRetriever.model_fields["method"].default == DEFAULT_METHOD
    assert llamaindex.RagsievePostprocessor.model_fields["method"].default == DEFAULT_METHOD
    assert _default(llamaindex.RagsieveRetriever.__init__) == DEFAULT_METHOD
    assert _default(haystack.RagsieveRanker.__init__) == DEFAULT_METHOD
    assert _default(haystack.RagsieveRetriever.__init__) == DEFAULT_METHOD


def test_explain_and_the_index_retriever_run_the_default(sample_index_dir: Path) -> None:
    """``explain`` with no --method, from the real command, runs the method ``ask`` runs, on
    the plain index, and the adapters' index retriever selects the same units."""
    from ragsieve.integrations import IndexMethod

    p = run("explain", Q, "--index", str(sample_index_dir), "--json")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["method"] == DEFAULT_METHOD and rep["selected"]
    retriever = IndexMethod(sample_index_dir, k=10)
    assert retriever.spec.label == DEFAULT_METHOD
    assert [m["ragsieve_chunk_id"] for _, _, m in retriever.hits(Q)] == rep["selected"]
