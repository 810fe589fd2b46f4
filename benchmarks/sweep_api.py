"""Issue 45's bad-input cases: api (run by bad_input_sweep.py --issue45).

Every public Python entry point (``search``, ``ask``, ``prune``, ``rerank``, ``Index``,
``IndexConfig``, ``PoolSelector``) and the LangChain, LlamaIndex and Haystack adapters, called
with arguments of the wrong type or value. A case passes when the call raises a ragsieve error
whose one line names the argument (exit 2), never a traceback; a silent accept (a string
pruned character by character, ``budget=True``) returns normally, exits 0 and fails. The
checks fire before any model loads, so each case costs an import. A few valid edge cases
(empty lists, a tuple of passages) must still work (exit 0, checked output). The failing
calls are data: one row a case in ``sweep_api.jsonl`` (table, case, call, error fragment).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from bad_input_sweep import Case

HEAD = (
    "from ragsieve import Index, IndexConfig, ask, prune, rerank, search\n"
    "Q = 'When did Champollion announce the decipherment?'\n"
    "T = 'In 1822 Champollion announced the decipherment of the hieroglyphs.'\n"
)
#: An LLM file that does not exist: an ``ask`` check that fired after the model load would
#: show its error instead of the argument's.
NO_LLM = "llm='local:/nonexistent/model.gguf'"


#: What each table of ``sweep_api.jsonl`` puts before its calls: the imports they need.
POOL = "from ragsieve.pool import Passage, PoolSelector\n"
LC = (
    "from langchain_core.documents import Document\n"
    "from ragsieve.integrations.langchain import RagsieveCompressor, RagsieveEmbeddings, "
    "RagsieveRetriever\n"
)
LI = (
    "from llama_index.core.schema import NodeWithScore, TextNode\n"
    "from ragsieve.integrations.llamaindex import RagsieveEmbedding, "
    "RagsievePostprocessor, RagsieveRetriever\n"
    "N = [NodeWithScore(node=TextNode(text=T))]\n"
)
HS = (
    "from haystack import Document\n"
    "from ragsieve.integrations.haystack import RagsieveRanker, RagsieveRetriever\n"
)
PREFIX = {"api": HEAD, "pool": POOL + HEAD, "lc": HEAD + LC, "li": HEAD + LI, "hs": HEAD + HS}


def _table(*names: str) -> list[Case]:
    """The rows of ``sweep_api.jsonl`` (table, case, call, fragment of the error line) from
    the named tables, in file order: each call must fail with exit 2 and that fragment."""
    table = Path(__file__).with_suffix(".jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in table.splitlines()]
    return [
        Case(
            "api45" if t in ("api", "pool") else "adapters45",
            name,
            [],
            2,
            python=PREFIX[t] + call,
            fragment=frag,
        )
        for t, name, call, frag in rows
        if t in names
    ]


def _printed(want: str) -> Callable[[Path, Path, str], str]:
    """A check that the case printed exactly ``want`` (a valid edge case's result)."""

    def check(tmp: Path, idx: Path, stdout: str) -> str:
        got = stdout.strip()
        return "" if got == want else f"printed {got[:60]!r}, expected {want!r}"

    return check


def _valid(area: str, name: str, code: str, want: str) -> Case:
    """A valid edge case: exits 0 and prints ``want``."""
    return Case(area, name, [], 0, python=code, check=_printed(want))


def cases() -> list[Case]:
    # Valid edge cases: empty lists are empty results, a tuple or generator is a list; a
    # Haystack Document without text (a blob) is an empty passage: nothing to select.
    ok = [
        ("prune-empty-list", "print(len(prune(Q, [])))", "0"),
        ("rerank-empty-list", "print(len(rerank(Q, [])))", "0"),
        (
            "prune-generator",
            "print(any('1822' in k.text for k in prune(Q, (t for t in [T]))))",
            "True",
        ),
        ("rerank-tuple", "print([r.index for r in rerank(Q, ('Bees dance.', T))])", "[1, 0]"),
    ]
    blob = "print(RagsieveRanker().run(Q, [Document(content=None)]))"
    return [
        *_table("api"),
        *(_valid("api45", name, HEAD + call, want) for name, call, want in ok),
        *_table("pool"),
        *_table("lc", "li", "hs"),
        _valid("adapters45", "hs-ranker-content-none", PREFIX["hs"] + blob, "{'documents': []}"),
    ]
