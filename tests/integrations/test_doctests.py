"""The examples in each adapter's docstrings run as written (real frameworks, real models)."""

from __future__ import annotations

import doctest
import importlib
import os

import pytest

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("framework", "adapter", "examples"),
    [
        ("haystack", "haystack", 10),
        ("langchain_classic", "langchain", 8),
        ("llama_index.core", "llamaindex", 10),
    ],
)
def test_the_docstring_examples_run(framework: str, adapter: str, examples: int) -> None:
    os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # before haystack is imported
    pytest.importorskip(framework)
    module = importlib.import_module(f"ragsieve.integrations.{adapter}")
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted >= examples and failed == 0
