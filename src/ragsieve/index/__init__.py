"""The index: Lance tables (chunk vectors, BM25 full text, documents) and atomic manifests."""

from ragsieve.index.store import AddReport, Index, IndexConfig

__all__ = ["AddReport", "Index", "IndexConfig"]
