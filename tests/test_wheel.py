"""The wheel stands alone: ``python -m build`` makes the sdist and, from it, a wheel that carries
the models (every file of the source tree's package, byte for byte). Installed with no extras
into a fresh venv, it indexes, answers with the packaged reader, searches, prunes and serves
from a folder outside the checkout with an empty HOME; torch and the other training and
evaluation libraries are not there, and the commands that need them name their extra.

Slow (several minutes: the build, and pip installing the core's dependencies), so it is marked
integration; benchmarks/bench_install.py measures the sizes and times (BENCHMARKS.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from rich_docs import FACT, write_folder

from ragsieve.llm.server import free_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
#: What no query path may need: the [train] and [eval] extras' heavy libraries, and lancedb (a
#: second copy of Lance; the index is read and written with pylance).
NOT_IN_CORE = ("torch", "transformers", "scipy", "sklearn", "sympy", "matplotlib", "lancedb")
QUESTION = "Who decoded the honey bee waggle dance?"


def _run(cmd: list[str], timeout: int, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)  # type: ignore[call-overload]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _package_files(wheel: Path) -> dict[str, str]:
    """Each file of the ``ragsieve`` package in ``wheel``, with its sha256."""
    with zipfile.ZipFile(wheel) as z:
        return {n: _sha256(z.read(n)) for n in z.namelist() if n.startswith("ragsieve/")}


def _tree_files() -> dict[str, str]:
    """What the wheel must carry from the source tree: the modules, the models and the
    viewer's files (the reader's GGUF there since the build fetched it), with their sha256."""
    src = ROOT / "src"
    out = {}
    for p in (src / "ragsieve").rglob("*"):
        rel = p.relative_to(src).as_posix()
        keep = p.suffix == ".py" or "/models/" in rel or "/serve/static/" in rel
        if p.is_file() and keep and "__pycache__" not in rel and p.suffix != ".part":
            out[rel] = _sha256(p.read_bytes())
    return out


class Core:
    """The fresh venv with only the wheel, and a user's folder and empty HOME outside the repo."""

    def __init__(self, tmp: Path, wheel: Path, log: list[str]) -> None:
        self.venv = tmp / "venv"
        self.bin = self.venv / "bin"
        self.work = tmp / "work"
        self.home = tmp / "home"
        self.wheel, self.log = wheel, log
        keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
        self.env = {k: os.environ[k] for k in keep if k in os.environ}
        self.env["PATH"] = f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}"
        self.env["HOME"] = str(self.home)

    def run(self, *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
        return _run([str(self.bin / "ragsieve"), *args], timeout, cwd=self.work, env=self.env)

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        return _run([str(self.bin / "python"), "-c", code], 300, cwd=self.work, env=self.env)


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Core]:
    pytest.importorskip("build", reason="the dev extra's `build` is not installed")
    tmp = tmp_path_factory.mktemp("wheel")
    log: list[str] = []
    # The build runs with this interpreter as it is; the venv and its pip without the
    # checkout's PYTHONPATH.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    t0 = time.monotonic()
    dist = tmp / "dist"
    built = _run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)], 900
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("ragsieve-*.whl")
    (sdist,) = dist.glob("ragsieve-*.tar.gz")
    log.append(
        f"build: {time.monotonic() - t0:.0f}s; wheel {wheel.stat().st_size / 1e6:.0f} MB, "
        f"sdist {sdist.stat().st_size / 1e6:.0f} MB"
    )

    t0 = time.monotonic()
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], 300, env=env)
    assert made.returncode == 0, made.stderr
    # --no-compile: the commands compile what they import (benchmarks/bench_install.py measures
    # the plain `pip install`, .pyc files and all).
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", str(wheel)]
    installed = _run(pip, 1800, env=env)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    du = _run(["du", "-sm", str(venv)], 120)
    log.append(f"install: {time.monotonic() - t0:.0f}s; venv {du.stdout.split()[0]} MiB")

    c = Core(tmp, wheel, log)
    c.home.mkdir()
    c.work.mkdir()
    shutil.copytree(ROOT / "examples" / "corpus", c.work / "corpus")
    write_folder(c.work / "files")
    yield c
    print("\n" + "\n".join(log))


def test_the_wheel_built_from_the_sdist_carries_the_tree_and_the_models(core: Core) -> None:
    files = _package_files(core.wheel)
    tree = _tree_files()
    assert {n: h for n, h in files.items() if n in tree} == tree  # every file, the same bytes
    assert set(files) - set(tree) <= {"ragsieve/py.typed"}
    gguf = "ragsieve/models/reader/SmolLM2-135M-Instruct.Q4_1.gguf"
    assert files[gguf] == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    for model in ("minilm/tokenizer.json", "tagger/model.onnx", "reranker/model.onnx"):
        assert f"ragsieve/models/{model}" in files, model


def test_the_core_has_no_training_or_evaluation_library(core: Core) -> None:
    found = core.python(
        "import importlib.util, json, ragsieve\n"
        f"print(json.dumps([ragsieve.__file__, [m for m in {NOT_IN_CORE!r} "
        "if importlib.util.find_spec(m)]]))"
    )
    assert found.returncode == 0, found.stderr
    where, present = json.loads(found.stdout)
    assert where.startswith(str(core.venv)), where  # the wheel's copy, not the checkout's
    assert present == []
    torch = core.python("import torch")
    assert torch.returncode == 1 and "No module named 'torch'" in torch.stderr
    dists = core.python(
        "import importlib.metadata as m; print(sorted(d.metadata['Name'].lower() "
        "for d in m.distributions()))"
    )
    names = set(json.loads(dists.stdout.replace("'", '"')))
    assert not names & {"torch", "transformers", "scipy", "scikit-learn", "sympy", "matplotlib"}
    core.log.append(f"packages in the venv: {len(names)}")


def test_index_ask_search_prune_outside_the_checkout_with_an_empty_home(core: Core) -> None:
    t0 = time.monotonic()
    done = core.run("index", "corpus", "--index", "idx")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "indexed 4 new" in done.stdout
    core.log.append(f"index: {time.monotonic() - t0:.1f}s")

    t0 = time.monotonic()
    ask = core.run("ask", QUESTION, "--index", "idx", "--max-tokens", "48", "--json")
    assert ask.returncode == 0, ask.stderr[-2000:]
    core.log.append(f"ask: {time.monotonic() - t0:.1f}s")
    answer = json.loads(ask.stdout)
    assert answer["reply"].strip(), answer  # the packaged SmolLM2 wrote a reply
    assert "Frisch" in answer["answer"]

    t0 = time.monotonic()
    hits = core.run("search", "waggle dance", "--index", "idx", "--json")
    assert hits.returncode == 0, hits.stderr[-2000:]
    core.log.append(f"search: {time.monotonic() - t0:.1f}s")
    assert json.loads(hits.stdout)["results"][0]["title"] == "Honey bees"

    kept = core.run("prune", QUESTION, "corpus/honey-bees.md", "corpus/voyager.md", "--json")
    assert kept.returncode == 0, kept.stderr[-2000:]
    sentences = json.loads(kept.stdout)
    assert sentences and all(s["passage"] == "corpus/honey-bees.md" for s in sentences)
    assert any("Frisch" in s["text"] for s in sentences)


def test_the_core_reads_pdf_html_and_docx(core: Core) -> None:
    done = core.run("index", "files", "--index", "files-idx")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "indexed 7 new" in done.stdout, done.stdout + done.stderr
    hits = core.run(
        "search", "When was the dredger Albatross commissioned?", "--index", "files-idx", "--json"
    )
    assert hits.returncode == 0, hits.stderr[-2000:]
    top = json.loads(hits.stdout)["results"][0]
    assert FACT in top["text"] and "3" in top["where"], top  # pages 2-3 of the PDF


def test_serve_answers_health_from_the_core(core: Core) -> None:
    if not (core.work / "idx").exists():
        assert core.run("index", "corpus", "--index", "idx").returncode == 0
    port = free_port()
    log = core.work / "serve.log"
    t0 = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(core.bin / "ragsieve"), "serve", "--index", "idx", "--port", str(port)],
            cwd=core.work,
            env=core.env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        health: dict[str, object] = {}
        while time.monotonic() - t0 < 180 and proc.poll() is None:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                if r.status_code == 200:
                    health = r.json()
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        assert health.get("status") == "ok", log.read_text(errors="replace")[-2000:]
        assert health["documents"] == 4
        core.log.append(f"serve until /health: {time.monotonic() - t0:.1f}s")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["train-reranker", "--out", "model"], "train"),
        (["train-tagger", "--out", "model"], "train"),
        (["train-fusion", "--out", "model"], "train"),
        (["eval"], "eval"),
    ],
)
def test_a_command_whose_extra_is_missing_names_it(core: Core, args: list[str], extra: str) -> None:
    p = core.run(*args)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert f"pip install 'ragsieve[{extra}]'" in lines[0]
