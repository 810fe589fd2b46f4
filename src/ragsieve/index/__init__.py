"""The LanceDB-backed index: chunk vectors, BM25 full text, documents, atomic manifests."""

from ragsieve.index.store import AddReport, Index, IndexConfig

__all__ = ["AddReport", "Index", "IndexConfig"]
