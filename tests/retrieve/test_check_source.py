"""The ``source`` / ``source_chunks`` options every sentence-level method shares: one check
(:func:`ragsieve.retrieve.chunk_sentences.check_source`), one-line config errors."""

from __future__ import annotations

import pytest

from ragsieve.errors import ConfigError
from ragsieve.methods.full import FullConfig
from ragsieve.methods.pareto import ParetoConfig
from ragsieve.methods.saki import SakiConfig
from ragsieve.retrieve.chunk_sentences import SOURCES, check_source


@pytest.mark.parametrize("source", SOURCES)
def test_every_source_is_accepted(source: str) -> None:
    check_source(source)
    check_source(source, 3)
    assert ParetoConfig(source=source).source == SakiConfig(source=source).source == source


@pytest.mark.parametrize("config", [ParetoConfig, SakiConfig, FullConfig])
def test_an_unknown_source_is_one_config_error(config: type) -> None:
    with pytest.raises(ConfigError, match="source must be one of auto, table, chunks, got 'disk'"):
        config(source="disk")


@pytest.mark.parametrize("bad", [None, 0, -2, True, 2.5, "10"])
@pytest.mark.parametrize("config", [ParetoConfig, FullConfig])
def test_a_bad_source_chunks_is_one_config_error(config: type, bad: object) -> None:
    with pytest.raises(ConfigError, match="source_chunks must be a positive integer"):
        config(source_chunks=bad)
