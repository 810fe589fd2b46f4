"""The manifest (``ragsieve.json``): the names of an index's files, reading and checking the
manifest, and replacing it, the commit point of every write (see :mod:`ragsieve.index.store`).

Also the test-only fault hook (``RAGSIEVE_FAULT``) that kills a write at a named point.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from ragsieve.errors import ConfigError, IndexStoreError, InputError
from ragsieve.index.config import AnnSettings, IndexConfig
from ragsieve.index.location import Location
from ragsieve.index.sentences import SENTENCES

MANIFEST = "ragsieve.json"
LOCK = ".ragsieve.lock"
#: The manifest's temporary name while it is being replaced (Location.replace_text).
MANIFEST_TMP = f".{MANIFEST}.tmp"
#: Key of the chunks table's schema metadata that records the index's config and dimension,
#: so that ``ragsieve repair`` can rebuild a lost manifest (Lance keeps it in every version).
SCHEMA_KEY = "ragsieve"
#: How long a writer waits for another writer's lock by default (``--wait``), in seconds.
DEFAULT_LOCK_WAIT = 60.0
#: Test-only fault injection: ``RAGSIEVE_FAULT=POINT`` (or ``POINT@N``, the N-th time the point
#: is reached) makes the process SIGKILL itself there. See :data:`FAULT_POINTS`; used by
#: tests/index/test_fault_injection.py and benchmarks/bench_crash.py, never in normal use.
FAULT_ENV = "RAGSIEVE_FAULT"
#: The named points of a write, in the order a write reaches them (the table writes repeat per
#: batch, and deletes of changed or removed documents count as table writes).
FAULT_POINTS = (
    "after_chunks_write",
    "after_sentences_write",
    "after_documents_write",
    "after_fts_index",
    "before_manifest_replace",
    "after_manifest_replace",
)
#: A point of :meth:`Index.create` only: its empty tables exist, its first manifest does not.
CREATE_FAULT_POINT = "create_before_manifest"
FORMAT = "ragsieve-index"
FORMAT_VERSION = 1
CHUNKS = "chunks"
DOCUMENTS = "documents"
#: The manifest's key for the real paths the index was read from, each with whether symlinks
#: out of it were followed (``index --follow-symlinks``): readers answer no text from outside.
ROOTS = "roots"
#: Set when the roots were first recorded on an index written before they were: it may hold
#: documents of roots it never recorded, so only documents read through a link are fenced.
ROOTS_PARTIAL = "roots_partial"
#: Old Lance versions younger than this survive clean-up, so a reader that opened the previous
#: manifest a moment ago can finish its query.
KEEP_OLD_VERSIONS = timedelta(minutes=10)

_fault_hits: dict[str, int] = {}


def _fault(point: str) -> None:
    """Kill this process at ``point`` if ``RAGSIEVE_FAULT`` names it (test-only crash hook)."""
    want = os.environ.get(FAULT_ENV)
    if not want:
        return
    name, _, nth = want.partition("@")
    if name != point:
        return
    _fault_hits[point] = _fault_hits.get(point, 0) + 1
    if _fault_hits[point] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def lost_manifest_message(where: object) -> str:
    """The one-line refusal for Lance tables without a manifest, with both ways to recover."""
    return (
        f"{where} holds Lance tables but no {MANIFEST} (its manifest was lost): recover it "
        f"with `ragsieve repair --index {where}`, or rebuild it from scratch with "
        f"`ragsieve index PATHS --index {where} --force`"
    )


def _read_manifest(where: Location | str | Path) -> dict[str, Any]:
    p = where if isinstance(where, Location) else Location(where)
    if not p.exists():
        raise IndexStoreError(f"no index at {p} (create one with: ragsieve index PATH --index {p})")
    if not p.is_dir():
        raise IndexStoreError(f"{p} is not an index directory")
    if not p.has_file(MANIFEST):
        if any(c.endswith(".lance") for c in p.children()):
            raise IndexStoreError(lost_manifest_message(p))
        raise IndexStoreError(f"{p} is not a ragsieve index (no {MANIFEST})")
    try:
        m = json.loads(p.read_text(MANIFEST))
    except (OSError, ValueError, RecursionError) as e:
        raise IndexStoreError(f"index {p} is corrupt: unreadable {MANIFEST}") from e
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise IndexStoreError(f"index {p} is corrupt: {MANIFEST} is not a ragsieve manifest")
    if not _is_int(m.get("format_version", 0)):
        raise IndexStoreError(
            f"index {p} is corrupt: bad {MANIFEST} (format_version is "
            f"{json.dumps(m.get('format_version'))[:40]})"
        )
    if m.get("format_version", 0) > FORMAT_VERSION:
        raise IndexStoreError(
            f"index {p} was written by a newer ragsieve (format {m['format_version']})"
        )
    try:
        _check_manifest(m)
        IndexConfig(**m["config"])
    except (KeyError, TypeError, ValueError, ConfigError) as e:
        why = f"missing field {e.args[0]}" if isinstance(e, KeyError) else str(e)
        raise IndexStoreError(
            f"index {p} is corrupt: bad {MANIFEST} ({why}); "
            f"rebuild it with `ragsieve repair --index {p}`"
        ) from e
    return m


def _is_int(v: Any, lo: int = 0) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= lo


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


#: The manifest's keys and what each must hold (``_check_manifest``); ``ann`` is checked apart.
_MANIFEST_KEYS: dict[str, Callable[[Any], bool]] = {
    "format_version": lambda v: _is_int(v, 1),
    "config": lambda v: isinstance(v, dict),
    "dim": lambda v: _is_int(v, 1),
    "tables": lambda v: isinstance(v, dict),
    "n_documents": _is_int,
    "n_chunks": _is_int,
    "n_tokens": _is_int,
    "updated": _is_number,
}
_CONFIG_KEYS: dict[str, Callable[[Any], bool]] = {
    "embedder": lambda v: isinstance(v, str) and bool(v),
    "chunker": lambda v: isinstance(v, str) and bool(v),
    "chunk_tokens": lambda v: _is_int(v, 1),
    "sentences": lambda v: isinstance(v, bool),
    "sentence_passage": lambda v: isinstance(v, str),
    "pareto_context": lambda v: isinstance(v, str),
    "alpha": _is_number,
    "links": _is_int,
    "link_distance": _is_int,
}
_ANN_KEYS = ("index_type", "m", "ef_construction", "ef", "num_partitions", "nprobes")


def _check_manifest(m: dict[str, Any]) -> None:
    """Validate the manifest's shape before anything uses it; the error names the bad key
    (a ``tables`` list, a numeric ``embedder``, a bogus ``ann`` were tracebacks)."""
    for key, ok in _MANIFEST_KEYS.items():
        if key not in m:
            raise KeyError(key)
        if not ok(m[key]):
            raise TypeError(f"{key} is {json.dumps(m[key])[:40]}")
    for key, value in m["config"].items():
        if key in _CONFIG_KEYS and not _CONFIG_KEYS[key](value):  # IndexConfig checks names
            raise TypeError(f"config.{key} is {json.dumps(value)[:40]}")
    tables = m["tables"]
    for name in (CHUNKS, DOCUMENTS):
        if name not in tables:
            raise KeyError(f"tables.{name}")
    for name, version in tables.items():
        if name not in (CHUNKS, DOCUMENTS, SENTENCES) or not _is_int(version, 1):
            raise TypeError(f"tables.{name} is {json.dumps(version)[:40]}")
    roots = m.get(ROOTS, {})
    if not isinstance(roots, dict) or not all(
        isinstance(k, str) and isinstance(v, bool) for k, v in roots.items()
    ):
        raise TypeError(f"{ROOTS} is {json.dumps(roots)[:40]}")
    ann = m.get("ann")
    if ann is not None:
        if not isinstance(ann, dict):
            raise TypeError(f"ann is {json.dumps(ann)[:40]}")
        for key in _ANN_KEYS:
            if key != "index_type" and not _is_int(ann.get(key), 1):
                raise TypeError(f"ann.{key} is {json.dumps(ann.get(key))[:40]}")
        if ann.get("index_type") != AnnSettings.index_type:
            raise TypeError(f"ann.index_type is {json.dumps(ann.get('index_type'))[:40]}")


def _write_manifest(where: Location | str | Path, manifest: dict[str, Any]) -> None:
    """Replace the manifest atomically: the commit point of every write."""
    p = where if isinstance(where, Location) else Location(where)
    p.replace_text(MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))


def _check_only_ours(p: Location) -> list[str]:
    """The entries of ``p`` a store may have written; refuses a directory holding anything else."""
    if not p.exists():
        return []
    leftovers = [c for c in p.children() if c != LOCK]
    if any(not (c.endswith(".lance") or c in (MANIFEST, MANIFEST_TMP)) for c in leftovers):
        raise InputError(f"{p} exists, is not empty and is not a ragsieve index")
    return leftovers
