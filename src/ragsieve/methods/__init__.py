"""The methods: each a composition of the stage protocols (Retriever, Reranker, Selector,
Linker, LLM) built from a typed config, one module per method, registered explicitly in
:mod:`ragsieve.methods.registry` and built from a spec by :mod:`ragsieve.methods.spec`.

>>> from ragsieve.methods import build_method
>>> method = build_method("full[unit=passage,floor=0.5]", index, budget=450)
"""

from ragsieve.methods.base import AnswerCall, Method, MethodDef, Retrieval, generate_answer
from ragsieve.methods.registry import DEFAULT_METHOD, METHODS, known_methods
from ragsieve.methods.spec import (
    RUN_KEYS,
    MethodSpec,
    build_method,
    check_spec,
    get_method,
    method_needs_sentences,
    parse_methods,
    parse_spec,
    spec_from_toml,
)

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "RUN_KEYS",
    "AnswerCall",
    "Method",
    "MethodDef",
    "MethodSpec",
    "Retrieval",
    "build_method",
    "check_spec",
    "generate_answer",
    "get_method",
    "known_methods",
    "method_needs_sentences",
    "parse_methods",
    "parse_spec",
    "spec_from_toml",
]
