"""Defaults every entry point shares, in a module that imports nothing, so that the CLI's help
texts can name them without loading the methods (numpy, Arrow) on every start."""

from __future__ import annotations

#: What ``ask``, ``search --method``, ``explain``, ``serve``, ``prune``, the framework adapters,
#: ``ragsieve.pool`` and ``ragsieve.ask`` use when no method is named: the best precise method
#: on the held-out tables of BENCHMARKS.md (section 1: naive's answer recall or more at a third
#: of its tokens) that works on any index (it needs no sentence table).
#: ``naive`` stays one flag away. Re-exported as :data:`ragsieve.methods.DEFAULT_METHOD`.
DEFAULT_METHOD = "tagger"

#: The answer length cap of ``ask``, ``eval``, ``/ask``, :func:`ragsieve.ask` and
#: :meth:`Method.ask`: a few words fit, and a local reader that strays stops here.
DEFAULT_MAX_TOKENS = 64
