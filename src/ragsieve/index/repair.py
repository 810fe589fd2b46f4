"""Rebuild a lost or damaged manifest from the Lance tables' own version history.

The manifest (``ragsieve.json``) names the committed Lance version of each table; without it the
tables are just data. Every commit ends the same way (:meth:`Index._commit`): the chunk and
document rows are written, then the full-text index is rebuilt on the chunks table, then the
manifest is replaced. So each chunks version that carries a freshly built text index marks a
commit, and the documents (and sentences) versions written before it are that commit's
snapshot. :func:`repair` takes the newest such snapshot whose tables agree (every document's
``n_chunks`` equals its chunk rows, no chunk without its document, unique chunk ids, sentence
rows only for documents with chunks), falling back to older ones; if no commit snapshot agrees
it tries every pair of versions, newest first. The chosen versions are restored and committed
through the store's own commit, which writes a new manifest.

The index's configuration comes from the chunks table's schema metadata, where
:meth:`Index.create` records it; indexes created before that record assume the defaults (or
the ``config`` passed in) and the report says so.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsieve.errors import IndexStoreError
from ragsieve.index.config import IndexConfig
from ragsieve.index.location import Location
from ragsieve.index.manifest import (
    CHUNKS,
    DEFAULT_LOCK_WAIT,
    DOCUMENTS,
    FORMAT,
    FORMAT_VERSION,
    LOCK,
    MANIFEST,
    SCHEMA_KEY,
    _read_manifest,
)
from ragsieve.index.sentences import SENTENCES
from ragsieve.index.store import Index

#: Versions per table that repair looks at, newest first (older ones are cleaned up anyway).
MAX_VERSIONS = 200


@dataclass
class RepairReport:
    """What :func:`repair` found and did."""

    path: str
    #: ``none`` (the manifest was valid) or ``rebuilt``.
    action: str
    #: The Lance version of each table the new manifest is built from.
    versions: dict[str, int] = field(default_factory=dict)
    #: The newest version of each table on disk (newer ones were uncommitted and are dropped).
    newest: dict[str, int] = field(default_factory=dict)
    n_documents: int = 0
    n_chunks: int = 0
    #: Where the configuration came from: ``tables`` (recorded at creation), ``manifest`` (the
    #: damaged manifest's own, when it still parses) or ``assumed``.
    config_from: str = "tables"
    config: dict[str, Any] = field(default_factory=dict)

    def lines(self) -> list[str]:
        if self.action == "none":
            return [
                f"index {self.path} has a valid {MANIFEST} "
                f"({self.n_documents} documents, {self.n_chunks} chunks): nothing to repair"
            ]
        out = [
            f"rebuilt {MANIFEST} of {self.path}: {self.n_documents} documents, "
            f"{self.n_chunks} chunks",
        ]
        for name, v in self.versions.items():
            dropped = self.newest[name] - v
            tail = f" ({dropped} newer uncommitted version(s) dropped)" if dropped else ""
            out.append(f"  {name}: version {v} of {self.newest[name]}{tail}")
        if self.config_from == "manifest":
            out.append(f"  config: kept from the damaged {MANIFEST}")
        if self.config_from == "assumed":
            out.append(
                "  config: not recorded in these (older) tables; assumed "
                + ", ".join(f"{k}={v}" for k, v in self.config.items())
            )
        return out


class _Table:
    """One Lance table's versions, newest first, with per-version summaries cached."""

    def __init__(self, loc: Location, name: str) -> None:
        import lance

        self.name = name
        self.ds = lance.dataset(
            loc.child_uri(f"{name}.lance"), storage_options=loc.storage_options or None
        )
        vs = sorted(self.ds.versions(), key=lambda v: v["version"], reverse=True)[:MAX_VERSIONS]
        self.versions = [int(v["version"]) for v in vs]
        self.times = {int(v["version"]): _ts(v["timestamp"]) for v in vs}
        self._cache: dict[int, Any] = {}

    def at(self, version: int) -> Any:
        return self.ds.checkout_version(version)

    def summary(self, version: int, columns: list[str]) -> Any:
        if version not in self._cache:
            self._cache[version] = self.at(version).to_table(columns=columns)
        return self._cache[version]

    def newest_at_or_before(self, t: float) -> int | None:
        return next((v for v in self.versions if self.times[v] <= t), None)


def _ts(x: Any) -> float:
    return float(x.timestamp()) if hasattr(x, "timestamp") else float(x)


def _doc_counts(docs: _Table, v: int) -> dict[str, int]:
    t = docs.summary(v, ["doc_id", "n_chunks"])
    return dict(zip(t["doc_id"].to_pylist(), t["n_chunks"].to_pylist(), strict=True))


def _chunk_counts(chunks: _Table, v: int) -> Counter[str] | None:
    """doc_id -> chunk rows at version ``v``, or None when chunk ids repeat (a double write)."""
    t = chunks.summary(v, ["id", "doc_id"])
    ids = t["id"].to_pylist()
    if len(ids) != len(set(ids)):
        return None
    return Counter(t["doc_id"].to_pylist())


def _agree(docs: dict[str, int], chunks: Counter[str] | None) -> bool:
    if chunks is None or set(chunks) - set(docs):
        return False
    return all(chunks.get(d, 0) == n for d, n in docs.items())


def _sentences_agree(sents: _Table, v: int, docs: dict[str, int]) -> bool:
    t = sents.summary(v, ["doc_id"])
    return set(t["doc_id"].to_pylist()) == {d for d, n in docs.items() if n > 0}


def _is_commit(chunks: _Table, v: int) -> bool:
    """Whether chunks version ``v`` is the full-text index build that ends a commit."""
    if v == 1:
        return True  # the empty table Index.create committed
    try:
        indices = chunks.at(v).list_indices()
    except Exception:  # a damaged version is no candidate
        return False
    return any("text" in i.get("fields", []) and i.get("version") == v - 1 for i in indices)


def _choose(tabs: dict[str, _Table]) -> dict[str, int] | None:
    """The newest agreeing versions: commit snapshots first, then any agreeing pair."""
    chunks, docs = tabs[CHUNKS], tabs[DOCUMENTS]
    sents = tabs.get(SENTENCES)

    def with_sentences(found: dict[str, int], before: float | None) -> dict[str, int] | None:
        if sents is None:
            return found
        counts = _doc_counts(docs, found[DOCUMENTS])
        for sv in sents.versions:
            if before is not None and sents.times[sv] > before:
                continue
            if _sentences_agree(sents, sv, counts):
                return {**found, SENTENCES: sv}
        return None

    for cv in chunks.versions:  # commit snapshots, newest first
        if not _is_commit(chunks, cv):
            continue
        t = chunks.times[cv]
        dv = docs.newest_at_or_before(t)
        if dv is not None and _agree(_doc_counts(docs, dv), _chunk_counts(chunks, cv)):
            got = with_sentences({CHUNKS: cv, DOCUMENTS: dv}, t)
            if got is not None:
                return got
    for dv in docs.versions:  # no commit snapshot agrees: any agreeing versions
        counts = _doc_counts(docs, dv)
        for cv in chunks.versions:
            if _agree(counts, _chunk_counts(chunks, cv)):
                got = with_sentences({CHUNKS: cv, DOCUMENTS: dv}, None)
                if got is not None:
                    return got
    return None


def _recorded_config(chunks: _Table) -> dict[str, Any] | None:
    meta = chunks.ds.schema.metadata or {}
    raw = meta.get(SCHEMA_KEY.encode())
    if raw is None:
        return None
    try:
        note = json.loads(raw)
        IndexConfig(**note["config"])
        return dict(note)
    except (ValueError, KeyError, TypeError):
        return None


def _old_manifest_config(loc: Location) -> dict[str, Any] | None:
    """The config of a damaged manifest that still parses (say a missing count): it names the
    embedder the vectors were made with, which the tables of older indexes do not record."""
    if not loc.has_file(MANIFEST):
        return None
    try:
        old = json.loads(loc.read_text(MANIFEST))
        IndexConfig(**old["config"])
        return {"config": dict(old["config"]), "dim": int(old["dim"]), "created": time.time()}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def repair(
    path: str | Path,
    storage_options: Mapping[str, str] | None = None,
    *,
    config: IndexConfig | None = None,
    wait: float = DEFAULT_LOCK_WAIT,
    on_wait: Callable[[str], None] | None = None,
) -> RepairReport:
    """Rebuild the manifest of the index at ``path`` from its newest agreeing table versions.

    A valid manifest is left alone (``action == "none"``). ``config`` is used only for tables
    that do not record their configuration (indexes created before it was recorded).
    Raises :class:`IndexStoreError` when there are no tables or no versions that agree.
    """
    loc = Location(path, storage_options)
    if not loc.exists() or not loc.is_dir():
        raise IndexStoreError(f"no index at {loc}: nothing to repair")
    if not loc.has_file(MANIFEST) and not {CHUNKS, DOCUMENTS} <= _present_tables(loc):
        raise _nothing_to_repair_from(loc)
    with loc.write_lock(LOCK, wait, on_wait):
        if loc.has_file(MANIFEST):
            valid = _valid_manifest_report(loc, path, storage_options)
            if valid is not None:
                return valid
        present = _present_tables(loc)
        if not {CHUNKS, DOCUMENTS} <= present:
            raise _nothing_to_repair_from(loc)
        try:
            tabs = {n: _Table(loc, n) for n in (CHUNKS, DOCUMENTS, SENTENCES) if n in present}
        except Exception as e:  # Lance raises many types for damaged tables
            raise IndexStoreError(
                f"{loc}: cannot read its tables ({str(e).splitlines()[0]}); rebuild it with "
                f"`ragsieve index PATHS --index {loc} --force`"
            ) from e
        versions = _choose(tabs)
        if versions is None:
            raise IndexStoreError(
                f"{loc}: no versions of its tables agree on their documents; rebuild it with "
                f"`ragsieve index PATHS --index {loc} --force`"
            )
        note, config_from = _config_note(loc, tabs, config)
        idx = _commit_versions(loc, versions, note)
        return RepairReport(
            str(loc),
            "rebuilt",
            versions=versions,
            newest={n: t.versions[0] for n, t in tabs.items()},
            n_documents=idx.manifest["n_documents"],
            n_chunks=idx.manifest["n_chunks"],
            config_from=config_from,
            config=dict(note["config"]),
        )


def _present_tables(loc: Location) -> set[str]:
    """The names of the Lance tables in the index folder."""
    return {c.removesuffix(".lance") for c in loc.children() if c.endswith(".lance")}


def _nothing_to_repair_from(loc: Location) -> IndexStoreError:
    """The error for a folder without the chunks and documents tables."""
    return IndexStoreError(
        f"{loc} has no chunks and documents tables to repair from; rebuild it with "
        f"`ragsieve index PATHS --index {loc} --force`"
    )


def _valid_manifest_report(
    loc: Location, path: str | Path, storage_options: Mapping[str, str] | None
) -> RepairReport | None:
    """The ``none`` report when the manifest is valid and the index opens; None when it is
    damaged (it is rebuilt then, the old file overwritten by the commit)."""
    try:
        _read_manifest(loc)
        idx = Index.open(path, storage_options)
        st = idx.stats()
        return RepairReport(str(loc), "none", n_documents=st["documents"], n_chunks=st["chunks"])
    except IndexStoreError:
        return None


def _config_note(
    loc: Location, tabs: dict[str, _Table], config: IndexConfig | None
) -> tuple[dict[str, Any], str]:
    """The index's configuration, dimension and creation time, and where they came from:
    the chunks table's record (``tables``), the old manifest (``manifest``), or ``config``
    or the defaults (``assumed``)."""
    note = _recorded_config(tabs[CHUNKS])
    config_from = "tables"
    if note is None:
        note = _old_manifest_config(loc)
        config_from = "manifest"
    if note is None:
        config_from = "assumed"
        cfg = config or IndexConfig(sentences=SENTENCES in tabs)
        dim = tabs[CHUNKS].ds.schema.field("vector").type.list_size
        note = {"config": cfg.to_dict(), "dim": int(dim), "created": time.time()}
    return note, config_from


def _commit_versions(loc: Location, versions: dict[str, int], note: dict[str, Any]) -> Index:
    """The chosen table ``versions`` restored and committed through the store's own commit
    (full-text index, counts, then the new manifest); the index, opened on them."""
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "config": note["config"],
        "dim": note["dim"],
        "tables": versions,
        "n_documents": 0,
        "n_chunks": 0,
        "n_tokens": 0,
        "fts": False,
        "created": note.get("created", time.time()),
        "updated": time.time(),
    }
    idx = Index(loc, manifest)  # pins the chosen versions; nothing written yet
    tables = {}
    for name, v in versions.items():
        t = idx._db.open_table(name)
        if t.version != v:
            t.restore(v)
        tables[name] = t
    idx._commit(tables, None)  # full-text index, counts, then the new manifest
    return idx
