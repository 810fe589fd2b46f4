"""One way to open an onnxruntime CPU session, shared by every ONNX model of the package (the
int8 MiniLM embedder and linker, the cross-encoder, the tagger): same threads, quiet logs, and
a one-line error when the model does not load; one way to hold a trained model's folder and
open its session on first use (:class:`OnnxModelFolder`); and one way to run many
single-input feeds two at a time (:func:`run_each`)."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

from ragsieve.errors import ConfigError


def cpu_session(model: Path | bytes, threads: int | None, what: str) -> Any:
    """An onnxruntime CPU session on ``threads`` intra-op threads (default: every core) that do
    not spin while idle, quiet,
    with a one-line :class:`ConfigError` naming ``what`` when the model does not load.
    ``model`` is a file or a serialised graph (one edited in memory)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads or max(1, os.cpu_count() or 1)
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    # Idle intra-op threads sleep instead of spinning: on a machine shared with other work
    # (2 cores, load 9-15) spinning threads starve the busy ones, and CARROT's many small runs
    # took more than twice as long (docs/speed.md, "Settings and their reasons").
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    source = model if isinstance(model, bytes) else str(model)
    try:
        return ort.InferenceSession(source, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as e:
        where = "" if isinstance(model, bytes) else f" {model}"
        raise ConfigError(f"cannot load {what}{where}: {str(e).splitlines()[0]}") from e


#: A trained model folder's graph per variant: int8 (shipped) or fp32 (a training output).
MODEL_FILES = {"int8": "model.onnx", "fp32": "model_fp32.onnx"}
#: The tokenizer beside the graph.
TOKENIZER_FILE = "tokenizer.json"


def model_files(folder: Path, variant: str = "int8") -> tuple[Path, Path]:
    """The graph of ``variant`` and the tokenizer in a trained model's ``folder``."""
    return folder / MODEL_FILES[variant], folder / TOKENIZER_FILE


class OnnxModelFolder:
    """A trained ONNX model's folder (``model.onnx`` or ``model_fp32.onnx`` by ``variant``,
    beside ``tokenizer.json``), whose session opens on first use, once, under a lock.

    A subclass names the model in errors (:attr:`what`) and the command that makes such a
    folder (:attr:`trainer`), and opens its session in :meth:`_open` (with :func:`cpu_session`
    on :attr:`threads`), reading whatever else it needs there; :meth:`_load` publishes the
    session only when that is done, so a thread that sees it sees the rest. ``default_dir``
    is the packaged model's folder."""

    what: ClassVar[str]
    trainer: ClassVar[str]

    def __init__(
        self, model_dir: str | Path | None, variant: str, threads: int | None, default_dir: Path
    ) -> None:
        if variant not in MODEL_FILES:
            raise ConfigError(f"unknown {self.what} variant {variant!r}: use int8 or fp32")
        self.model_dir = Path(model_dir) if model_dir is not None else default_dir
        self.variant = variant
        self.threads = threads
        self._lock = threading.Lock()
        self._session: Any = None

    @property
    def model_path(self) -> Path:
        return model_files(self.model_dir, self.variant)[0]

    def _open(self, model: Path, tokenizer: Path) -> Any:
        """The session on ``model`` (both files exist), with what else the model needs."""
        raise NotImplementedError

    def _load(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            model, tok = model_files(self.model_dir, self.variant)
            for path in (model, tok):
                if not path.is_file():
                    raise ConfigError(
                        f"{self.what} file {path} is missing: reinstall ragsieve or train one "
                        f"with `ragsieve {self.trainer} --out DIR`"
                    )
            self._session = self._open(model, tok)


#: Feeds :func:`run_each` keeps in flight at once: two (three or four were no faster on 2
#: cores), one on a single core.
RUN_WORKERS = 2 if (os.cpu_count() or 1) > 1 else 1
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _forget_pool() -> None:
    # A forked child inherits the pool object but not its threads: it would queue work that
    # no thread runs. It starts its own on first use.
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(RUN_WORKERS, thread_name_prefix="ragsieve-onnx")
        return _POOL


def run_each(
    session: Any, feeds: Sequence[dict[str, Any]], outputs: list[str] | None = None
) -> list[list[Any]]:
    """``session.run(outputs, feed)`` for every feed, :data:`RUN_WORKERS` at a time, results in
    feed order; each feed still runs alone, so its outputs are those of a sequential run.

    The int8 models read one input a run (their activation scales span the batch), and one
    small input cannot keep the intra-op threads busy: between its matrix products a run is
    in short serial steps. Two runs in flight overlap those steps, with identical outputs and
    less time for the tagger's two readings of a pool (docs/speed.md, "Settings and their
    reasons"). onnxruntime sessions accept concurrent
    ``run`` calls and release the GIL while they compute."""
    if len(feeds) <= 1 or RUN_WORKERS <= 1:
        return [session.run(outputs, f) for f in feeds]
    return list(_pool().map(lambda f: session.run(outputs, f), feeds))
