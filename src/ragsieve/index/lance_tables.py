"""An index's Lance tables, opened and written with pylance alone.

The tables are ordinary Lance datasets (``<index>/<name>.lance``), the layout LanceDB uses, so
``lancedb.connect(index).open_table("chunks")`` still reads them. Writes go through pylance
rather than the ``lancedb`` package because the core install carries one copy of Lance, not
two: ``lancedb`` bundles its own (180 MiB on disk) beside pylance's (217 MiB), and importing it
costs about 3 s against 0.7 s (docs/install.md). :class:`LanceDir` and :class:`LanceTable` keep
the few calls the writers make (``create_table``, ``open_table``; ``add``, ``delete``,
``restore``, ``create_index``, ``checkout_latest``, ``version``, ``to_lance``), and the two index
configurations are built with LanceDB's defaults so an index is built as before.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa


@dataclass(frozen=True)
class HnswSq:
    """An IVF_HNSW_SQ vector index (LanceDB's ``HnswSq`` defaults for what is not given; its
    ``distance_type`` is pylance's ``metric``)."""

    metric: str = "l2"
    num_partitions: int | None = None
    m: int = 20
    ef_construction: int = 300
    max_iterations: int = 50
    sample_rate: int = 256


@dataclass(frozen=True)
class FTS:
    """A full-text (inverted) index with LanceDB's ``FTS`` defaults: simple tokenizer, English
    stemming and stop words, lower case, ASCII folding, tokens up to 40 characters, no
    positions."""

    with_position: bool = False
    base_tokenizer: str = "simple"
    language: str = "English"
    max_token_length: int = 40
    lower_case: bool = True
    stem: bool = True
    remove_stop_words: bool = True
    ascii_folding: bool = True


class LanceTable:
    """One Lance dataset at its latest version, with the write calls the index makes."""

    def __init__(self, uri: str, storage_options: dict[str, str] | None) -> None:
        import lance

        self.uri = uri
        self._options = storage_options or None
        self._ds = lance.dataset(uri, storage_options=self._options)

    @property
    def version(self) -> int:
        return int(self._ds.version)

    def to_lance(self) -> Any:
        """The pylance dataset (what readers query)."""
        return self._ds

    def checkout_latest(self) -> None:
        """Follow writes made through another handle (``to_lance()``, lance-ray)."""
        self._ds = self._ds.checkout_version(self._ds.latest_version)

    def restore(self, version: int) -> None:
        """Make ``version`` the latest again (a new version with its rows)."""
        old = self._ds.checkout_version(version)
        old.restore()
        self._ds = old.checkout_version(old.latest_version)

    def count_rows(self, filter: str | None = None) -> int:
        return int(self._ds.count_rows(filter))

    def to_arrow(self) -> pa.Table:
        return self._ds.to_table()

    def add(self, data: pa.Table) -> None:
        """Append rows (a new version)."""
        self._ds.insert(data.cast(self._ds.schema) if data.schema != self._ds.schema else data)

    def delete(self, where: str) -> None:
        self._ds.delete(where)

    def create_index(self, column: str, config: HnswSq | FTS, replace: bool = True) -> None:
        """Build ``config``'s index on ``column`` (a new version)."""
        # The fields are pylance's own keyword arguments.
        if isinstance(config, FTS):
            self._ds.create_scalar_index(column, "INVERTED", replace=replace, **asdict(config))
        else:
            self._ds.create_index(column, "IVF_HNSW_SQ", replace=replace, **asdict(config))
        self.checkout_latest()


class LanceDir:
    """The folder (local path or object-store URI) holding an index's tables."""

    def __init__(self, uri: str, storage_options: dict[str, str] | None = None) -> None:
        self.uri = uri.rstrip("/")
        self.storage_options = storage_options or None

    def _table_uri(self, name: str) -> str:
        return f"{self.uri}/{name}.lance"

    def open_table(self, name: str) -> LanceTable:
        return LanceTable(self._table_uri(name), self.storage_options)

    def create_table(self, name: str, schema: pa.Schema, mode: str = "overwrite") -> LanceTable:
        """An empty table with ``schema``; an existing one gets a new, empty version."""
        import lance

        lance.write_dataset(
            schema.empty_table(),
            self._table_uri(name),
            mode=mode,
            storage_options=self.storage_options,
        )
        return self.open_table(name)
