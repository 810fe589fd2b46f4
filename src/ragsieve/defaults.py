"""Defaults every entry point shares, in a module that imports nothing, so that the CLI's help
texts can name them without loading the methods (numpy, Arrow) on every start."""

from __future__ import annotations

#: What ``ask``, ``search --method``, ``explain``, ``serve``, ``prune``, the framework adapters,
#: ``ragsieve.pool`` and ``ragsieve.ask`` use when no method is named: the best precise method
#: on the held-out tables of BENCHMARKS.md ("The evidence tagger": answer recall 0.830 against
#: naive's 0.755 at 0.83x its tokens) that works on any index (it needs no sentence table).
#: ``naive`` stays one flag away. Re-exported as :data:`ragsieve.methods.DEFAULT_METHOD`.
DEFAULT_METHOD = "tagger"

#: The answer length cap of ``ask``, ``eval``, ``/ask``, :func:`ragsieve.ask` and
#: :meth:`Method.ask`: a few words fit, and a local reader that strays stops here.
DEFAULT_MAX_TOKENS = 64
