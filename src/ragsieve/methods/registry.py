"""The methods by name: every method module listed here, explicitly (no import side effects)."""

from __future__ import annotations

from ragsieve.defaults import DEFAULT_METHOD
from ragsieve.methods.base import MethodDef
from ragsieve.methods.carrot import CARROT
from ragsieve.methods.full import FULL
from ragsieve.methods.naive import NAIVE
from ragsieve.methods.pareto import PARETO
from ragsieve.methods.sage import SAGE
from ragsieve.methods.saki import SAKI
from ragsieve.methods.tagger import TAGGER

METHODS: dict[str, MethodDef] = {
    d.name: d for d in (NAIVE, SAGE, CARROT, SAKI, PARETO, FULL, TAGGER)
}


__all__ = ["DEFAULT_METHOD", "METHODS", "known_methods"]


def known_methods() -> list[str]:
    return sorted(METHODS)
