"""The methods by name: every method module listed here, explicitly (no import side effects)."""

from __future__ import annotations

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

#: What ``ask``, ``search --method``, ``serve`` and ``ragsieve.ask`` use when no method is named:
#: the best precise method on the held-out tables of BENCHMARKS.md ("The evidence tagger": answer
#: recall 0.830 against naive's 0.755 at 0.83x its tokens) that works on any index (it needs no
#: sentence table). ``naive`` stays one flag away.
DEFAULT_METHOD = "tagger"


def known_methods() -> list[str]:
    return sorted(METHODS)
