"""One way to open an onnxruntime CPU session, shared by every ONNX model of the package (the
int8 MiniLM embedder and linker, the cross-encoder, the tagger): same threads, quiet logs, and
a one-line error when the model does not load."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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
    # took 7.4-12.6 s a question with spinning against 3.0-4.5 s without (issue 34).
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    source = model if isinstance(model, bytes) else str(model)
    try:
        return ort.InferenceSession(source, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as e:
        where = "" if isinstance(model, bytes) else f" {model}"
        raise ConfigError(f"cannot load {what}{where}: {str(e).splitlines()[0]}") from e
