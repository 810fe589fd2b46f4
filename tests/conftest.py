"""Shared fixtures: the real packaged embedder and a real LanceDB index of the sample corpus."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: The scripted OpenAI-compatible endpoint (fixture ``scripted``) for feedback-loop tests.
pytest_plugins = ["scripted_llm"]

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "examples" / "corpus"
SHARED_DATA = Path(os.environ.get("RAGSIEVE_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared benchmark data not found at {SHARED_DATA} (set RAGSIEVE_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def sample_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real index of the sample corpus, built once per session (read-only for tests)."""
    from ragsieve.index import Index

    path = tmp_path_factory.mktemp("sample") / "index"
    idx = Index.create(path)
    idx.add_paths([CORPUS])
    return path


@pytest.fixture()
def writable_index(sample_index_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the sample index that a test may modify."""
    dst = tmp_path / "index"
    shutil.copytree(sample_index_dir, dst)
    return dst


@pytest.fixture(scope="session")
def sentence_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real index of the sample corpus in SAKI's two-sentence chunks, with the sentence table
    (Pareto vectors, MiniLM attention links), built once per session (read-only for tests)."""
    from ragsieve.index import Index, IndexConfig

    path = tmp_path_factory.mktemp("sentences") / "index"
    idx = Index.create(
        path,
        IndexConfig(chunker="sentences", sentences=True, pareto_context="mean", link_distance=4),
    )
    idx.add_paths([CORPUS])
    return path


@pytest.fixture(scope="module")
def smollm2() -> Iterator[Any]:
    """The default local LLM (SmolLM2 through llama.cpp) for method tests that need a real
    model in the loop; skipped where its GGUF file is missing."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from ragsieve.errors import ConfigError
    from ragsieve.llm import get_llm
    from ragsieve.llm.gguf import smollm2_path

    try:
        smollm2_path()
    except ConfigError as exc:
        pytest.skip(str(exc))
    llm = get_llm("local", n_ctx=2048)
    yield llm
    llm.close()


#: One non-default option per method, spelled as a user would: the spec grammar of
#: ``ragsieve.methods.spec``, driven through the parser, the CLI and HTTP.
METHOD_SPECS = {
    "naive": "naive[k=2,candidates=20]",
    "sage": "sage[n=10,min_k=2,feedback=false]",
    "carrot": "carrot[iterations=5,lambda=0.2,scorer=bi-encoder]",
    "saki": "saki[k=3,links=2,judge=none]",
    "pareto": "pareto[k=3,alpha=0.7]",
    "full": "full[unit=passage,floor=0.5]",
    "tagger": "tagger[k=3,threshold=0.2]",
}


@pytest.fixture(scope="session")
def method_specs() -> dict[str, str]:
    return dict(METHOD_SPECS)
