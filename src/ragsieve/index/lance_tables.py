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

from ragsieve.index.location import Location


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

        self._ds = lance.dataset(uri, storage_options=storage_options)

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
        self._ds = self._ds.checkout_version(version)
        self._ds.restore()
        self.checkout_latest()

    def count_rows(self, filter: str | None = None) -> int:
        return int(self._ds.count_rows(filter))

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

    def __init__(self, location: Location) -> None:
        self.location = location

    def open_table(self, name: str) -> LanceTable:
        loc = self.location
        return LanceTable(loc.child_uri(f"{name}.lance"), loc.storage_options or None)

    def create_table(self, name: str, schema: pa.Schema, mode: str = "overwrite") -> LanceTable:
        """An empty table with ``schema``; an existing one gets a new, empty version."""
        import lance

        loc = self.location
        lance.write_dataset(
            schema.empty_table(),
            loc.child_uri(f"{name}.lance"),
            mode=mode,
            storage_options=loc.storage_options or None,
        )
        return self.open_table(name)
