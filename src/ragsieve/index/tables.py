"""The Lance tables' schemas and the conversions between their rows and ragsieve's types,
with the small query helpers every reader and writer of an index shares."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ragsieve.index.config import IndexConfig, ann_settings
from ragsieve.index.manifest import CHUNKS, DOCUMENTS, FORMAT_VERSION, SCHEMA_KEY
from ragsieve.index.sentences import SENTENCES, sentence_schema, unit_fields
from ragsieve.progress import Progress
from ragsieve.types import Chunk, Document

#: Documents are chunked, embedded and written in batches of this many chunks (bounded memory).
WRITE_BATCH_CHUNKS = int(os.environ.get("RAGSIEVE_WRITE_BATCH_CHUNKS", "2048"))


def sha256_text(text: str) -> str:
    """The hash a document's text is stored under: a write re-indexes it when this changes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _nearest(column: str, q: np.ndarray, k: int, metric: str) -> dict[str, Any]:
    """Lance's ``nearest`` argument for an exact flat scan (callers may switch the index on)."""
    q = np.asarray(q, dtype=np.float32)
    return {"column": column, "q": q, "k": k, "metric": metric, "use_index": False}


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _in_clause(col: str, values: Sequence[str]) -> str:
    return f"{col} IN ({', '.join(_sql_str(v) for v in values)})"


def _status(doc_id: str, sha256: str, known: Mapping[str, str]) -> str:
    """``added``, ``updated`` or ``unchanged``: what a write does with one incoming document."""
    if doc_id not in known:
        return "added"
    return "unchanged" if known[doc_id] == sha256 else "updated"


def chunk_schema(dim: int) -> pa.Schema:
    fields = unit_fields()
    fields += [("sent_start", pa.int32()), ("sent_end", pa.int32()), ("n_tokens", pa.int32())]
    return pa.schema([*fields, ("vector", pa.list_(pa.float32(), dim))])


DOC_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("title", pa.string()),
        ("source", pa.string()),
        ("sha256", pa.string()),
        ("n_chars", pa.int64()),
        ("n_chunks", pa.int32()),
        ("text", pa.string()),
    ]
)


def row_to_chunk(row: dict[str, Any]) -> Chunk:
    return Chunk(
        id=row["id"],
        doc_id=row["doc_id"],
        index=int(row["idx"]),
        text=row["text"],
        start=int(row["start"]),
        end=int(row["end"]),
        sent_start=int(row["sent_start"]),
        sent_end=int(row["sent_end"]),
        n_tokens=int(row["n_tokens"]),
        title=row.get("title") or "",
    )


CHUNK_COLUMNS = [
    "id",
    "doc_id",
    "idx",
    "title",
    "text",
    "start",
    "end",
    "sent_start",
    "sent_end",
    "n_tokens",
]


def chunks_by_doc(chunks: Any, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
    """The stored chunks of ``doc_ids`` in a chunks table (a Lance dataset), by document, each
    document's in chunk order: what a sentence table is built from."""
    rows = chunks.to_table(columns=CHUNK_COLUMNS, filter=_in_clause("doc_id", doc_ids))
    out: dict[str, list[Chunk]] = {}
    for row in sorted(rows.to_pylist(), key=lambda r: (r["doc_id"], r["idx"])):
        out.setdefault(row["doc_id"], []).append(row_to_chunk(row))
    return out


def _legacy_jsonl_ids(
    documents: Any, docs: Sequence[Document], known: Mapping[str, str]
) -> dict[str, str]:
    """New JSONL id -> the bare id an index written before ids were namespaced by file holds
    for the same record (``7`` for ``/abs/a.jsonl#7``), so a write renames it instead of
    keeping both. Only a stored document that came from the same file (its ``source`` is
    ``/abs/a.jsonl:LINE``) is taken for the record."""
    want: dict[str, str] = {}
    for d in docs:
        path, sep, rid = d.id.rpartition("#")
        if sep and path and d.id not in known and rid in known:
            want[rid] = d.id
    if not want:
        return {}
    ds = documents.to_lance() if hasattr(documents, "to_lance") else documents
    out: dict[str, str] = {}
    olds = list(want)
    for i in range(0, len(olds), 500):
        batch = olds[i : i + 500]
        rows = ds.to_table(columns=["doc_id", "source"], filter=_in_clause("doc_id", batch))
        for old, source in zip(rows["doc_id"].to_pylist(), rows["source"].to_pylist(), strict=True):
            new = want[old]
            if (source or "").rpartition(":")[0] == new.rpartition("#")[0]:
                out[new] = old
    return out


def schema_note(cfg: IndexConfig, dim: int, created: float) -> dict[str, str]:
    """The chunks schema's metadata: the config, vector size and creation time of the index,
    which ``repair`` rebuilds a lost manifest from."""
    note = {"format_version": FORMAT_VERSION, "config": cfg.to_dict(), "dim": dim}
    note["created"] = created
    return {SCHEMA_KEY: json.dumps(note)}


def _empty_tables(db: Any, cfg: IndexConfig, dim: int, created: float) -> dict[str, Any]:
    """Empty tables for ``cfg`` (a new Lance version of each existing one, so the versions a
    manifest names stay readable); the chunks schema records the config for ``repair``."""
    schema = chunk_schema(dim).with_metadata(schema_note(cfg, dim, created))
    tables = {
        CHUNKS: db.create_table(CHUNKS, schema=schema, mode="overwrite"),
        DOCUMENTS: db.create_table(DOCUMENTS, schema=DOC_SCHEMA, mode="overwrite"),
    }
    if cfg.sentences:
        tables[SENTENCES] = db.create_table(
            SENTENCES, schema=sentence_schema(dim), mode="overwrite"
        )
    return tables


def _vector_index(
    chunks: Any, n_chunks: int, previous: dict[str, Any] | None, progress: Progress | None
) -> dict[str, Any] | None:
    """Build or extend the chunks' ANN index when the table is large enough (see
    :class:`AnnSettings`); returns what the manifest records of it, None for exact search.

    The IVF centroids and the quantiser are trained once and reused as the table grows (new rows
    are added to the index by ``optimize_indices``, much cheaper than a rebuild); the index is
    rebuilt when the table has doubled since, or when the settings changed.
    """
    s = ann_settings()
    if n_chunks < s.min_chunks:
        return None  # below the threshold, or shrunk below it: exact search
    want = {"index_type": s.index_type, "m": s.m, "ef_construction": s.ef_construction, "ef": s.ef}
    same = previous is not None and all(previous.get(k) == v for k, v in want.items())
    if progress:
        progress("vector index", 0, 1)
    if same and n_chunks <= 2 * int(previous["trained_rows"]):  # type: ignore[index]
        chunks.to_lance().optimize.optimize_indices()
        chunks.checkout_latest()
        trained = int(previous["trained_rows"])  # type: ignore[index]
        parts = int(previous["num_partitions"])  # type: ignore[index]
    else:
        from ragsieve.index.lance_tables import HnswSq

        trained, parts = n_chunks, s.partitions(n_chunks)
        config = HnswSq(
            metric="cosine", num_partitions=parts, m=s.m, ef_construction=s.ef_construction
        )
        chunks.create_index("vector", config=config, replace=True)
    if progress:
        progress("vector index", 1, 1)
    return {**want, "num_partitions": parts, "nprobes": s.probes(parts), "trained_rows": trained}


def _chunks_to_arrow(chunks: list[Chunk], vecs: np.ndarray | None, dim: int) -> pa.Table:
    assert vecs is not None
    flat = pa.array(np.asarray(vecs, dtype=np.float32).reshape(-1), type=pa.float32())
    return pa.Table.from_arrays(
        [
            pa.array([c.id for c in chunks]),
            pa.array([c.doc_id for c in chunks]),
            pa.array([c.index for c in chunks], type=pa.int32()),
            pa.array([c.title for c in chunks]),
            pa.array([c.text for c in chunks]),
            pa.array([c.start for c in chunks], type=pa.int64()),
            pa.array([c.end for c in chunks], type=pa.int64()),
            pa.array([c.sent_start for c in chunks], type=pa.int32()),
            pa.array([c.sent_end for c in chunks], type=pa.int32()),
            pa.array([c.n_tokens for c in chunks], type=pa.int32()),
            pa.FixedSizeListArray.from_arrays(flat, dim),
        ],
        schema=chunk_schema(dim),
    )


def _docs_to_arrow(docs: list[tuple[Document, int]]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "doc_id": d.id,
                "title": d.title,
                "source": d.source,
                "sha256": sha256_text(d.text),
                "n_chars": len(d.text),
                "n_chunks": n,
                "text": d.text,
            }
            for d, n in docs
        ],
        schema=DOC_SCHEMA,
    )
