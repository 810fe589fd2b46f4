"""Every method on the default index (built without ``--sentences``), issue 46 items 1-2.

``pareto``, ``saki`` and ``full`` build their sentences from the chunks they are handed
(:mod:`ragsieve.retrieve.chunk_sentences`); ``sage`` keeps at most ``--k`` chunks, so its context
is never larger than naive's; each method reports its stages (LLM calls included) to a progress
callback. Real LanceDB indexes of examples/corpus, the real embedder, reranker and linker; the
LLM is the scripted OpenAI-compatible endpoint of tests/scripted_llm.py, reached through the real
client by the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import Script

from ragsieve.errors import ConfigError
from ragsieve.index import Index, IndexConfig
from ragsieve.methods import get_method
from ragsieve.retrieve.chunk_sentences import ChunkSentences

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = [
    "When was Voyager 1 launched?",
    "What did the Rosetta Stone help scholars decipher?",
    "How do honey bees tell each other where food is?",
]


@pytest.fixture(scope="module")
def small_chunks(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """The sample corpus in 40-token chunks, no sentence table: SAGE's cut used to run to 18+."""
    idx = Index.create(
        tmp_path_factory.mktemp("plain40") / "index", IndexConfig(chunker="fixed", chunk_tokens=40)
    )
    idx.add_paths([REPO / "examples" / "corpus"])
    return idx


def _ask(index_dir: Path, method: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *(sys.executable, "-m", "ragsieve.cli", "ask", QUESTIONS[0]),
            *("--index", str(index_dir), "--method", method),
            *("--llm", f"openai:scripted@{url}", "--json"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OPENAI_API_KEY": "k"},
    )


@pytest.mark.parametrize("method", ["pareto", "saki", "full", "sage"])
def test_cli_ask_answers_on_the_default_index(
    sample_index_dir: Path, scripted: tuple[Script, str], method: str
) -> None:
    script, url = scripted
    script.feedback = ["Evaluation Score: 10\nContext Adjustment: -1"]
    assert not Index.open(sample_index_dir).has_sentences
    p = _ask(sample_index_dir, method, url)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["method"] == method and out["answer"] == "answer 0"
    assert out["context"], out
    assert any("Voyager" in c["text"] for c in out["context"])
    if method in ("pareto", "full"):
        # sentence-sized units, each a sentence of a chunk of the index
        assert all(":s" in c["chunk_id"] for c in out["context"])


def test_sentences_from_chunks_agree_with_the_chunks(sample_index_dir: Path) -> None:
    """Built rows: each sentence of the handed chunks once, numbered as the chunks number them,
    its text the document's slice, unit vectors, and links only among the handed sentences."""
    idx = Index.open(sample_index_dir)
    doc = idx.documents()[0]["doc_id"]
    chunks = idx.chunks_of(doc)[:2]
    rows = ChunkSentences(idx).build(chunks, links=True).to_pylist()
    wanted = [i for c in chunks for i in range(c.sent_start, c.sent_end)]
    assert [r["idx"] for r in rows] == sorted(set(wanted))
    text = idx.get_document(doc).text
    for r in rows:
        assert text[r["start"] : r["end"]] == r["text"] and r["n_tokens"] > 0
        assert abs(sum(x * x for x in r["vector"]) - 1.0) < 1e-3
        assert set(r["link_idx"]) <= set(wanted) - {r["idx"]}
    assert any(r["link_idx"] for r in rows)
    assert ChunkSentences(idx).build([]).num_rows == 0


def test_source_table_needs_the_table(sample_index_dir: Path) -> None:
    idx = Index.open(sample_index_dir)
    for name in ("pareto", "saki", "full"):
        with pytest.raises(ConfigError, match="--sentences"):
            get_method(name, idx, source="table")
        with pytest.raises(ConfigError, match="source must be one of"):
            get_method(name, idx, source="disk")


def test_source_auto_reads_the_table_when_there_is_one(sentence_index_dir: Path) -> None:
    """On an index built with --sentences the default is the table, so selections are the
    table's (identical to ``source=table``)."""
    idx = Index.open(sentence_index_dir)
    for name in ("pareto", "saki", "full"):
        auto, table = get_method(name, idx), get_method(name, idx, source="table")
        got = [[s.chunk.id for s in r.context.chunks] for r in auto.retrieve(QUESTIONS)]
        want = [[s.chunk.id for s in r.context.chunks] for r in table.retrieve(QUESTIONS)]
        assert got == want and all(got)


def test_sage_context_is_at_most_naives_at_the_same_k(small_chunks: Index) -> None:
    for k in (3, 10):
        naive = get_method("naive", small_chunks, k=k).retrieve(QUESTIONS)
        sage = get_method("sage", small_chunks, k=k).retrieve(QUESTIONS)
        for n, s in zip(naive, sage, strict=True):
            assert 1 <= len(s.context.chunks) <= k == len(n.context.chunks)
        n_tok = sum(r.context.n_tokens for r in naive)
        s_tok = sum(r.context.n_tokens for r in sage)
        assert 0 < s_tok <= n_tok, (k, s_tok, n_tok)
    # without the ceiling (the paper's cut alone) the context was larger than naive's
    loose = get_method("sage", small_chunks, k=30).retrieve(QUESTIONS)
    assert max(len(r.context.chunks) for r in loose) > 10


def test_progress_reports_every_stage_and_llm_call(
    small_chunks: Index, scripted: tuple[Script, str]
) -> None:
    from scripted_llm import scripted_llm

    script, url = scripted
    script.feedback = ["Evaluation Score: 4\nContext Adjustment: -1"]
    heard: list[tuple[str, int, int]] = []
    m = get_method("sage", small_chunks, k=5, max_rounds=2)
    m.progress = lambda stage, done, total: heard.append((stage, done, total))
    ans = m.ask(QUESTIONS[0], scripted_llm(url))
    stages = [s for s, d, _ in heard if d == 0]
    assert [s for s, d, _ in heard if d == 1] == stages  # every stage ends
    assert stages[0] == "sage: retrieve 30 candidates"
    assert stages[1] == "sage: rerank 30 chunks"
    calls = [s for s in stages if "LLM answer" in s or "feedback call" in s]
    assert [c.split(" (")[0] for c in calls] == [
        "sage: LLM answer",
        "sage: feedback call 1/2",
        "sage: LLM answer 2",
        "sage: feedback call 2/2",
    ]
    assert len(calls) == ans.trace["llm"]["calls"] == len(script.calls)
    for name in ("pareto", "saki", "full"):
        heard.clear()
        m = get_method(name, small_chunks)
        m.progress = lambda stage, done, total: heard.append((stage, done, total))
        m.retrieve([QUESTIONS[1]])
        assert heard and all(s.startswith(f"{name}: ") for s, _, _ in heard)
        assert len(heard) >= 4, heard


def test_feedback_auto_answers_once_with_a_local_llm(small_chunks: Index, smollm2: Any) -> None:
    """``sage``'s default feedback (none: auto) judges a remote LLM's answers (the scripted
    tests above) but answers once with a local one."""
    m = get_method("sage", small_chunks, k=3)
    assert m.config.feedback is None
    heard: list[str] = []
    m.progress = lambda stage, done, total: heard.append(stage) if done == 0 else None
    ans = m.ask(QUESTIONS[0], smollm2, max_tokens=8)
    assert "feedback" not in ans.trace and ans.usage.prompt_tokens > 0
    assert [s for s in heard if "feedback" in s] == []
    assert sum("LLM answer" in s for s in heard) == 1
