"""The Python API mirrors the CLI: Index.open/add_paths, search, ask."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from ragsieve import Index, IndexConfig, ask, search

pytestmark = pytest.mark.integration


def test_python_api_end_to_end(tmp_path: Path, corpus_dir: Path) -> None:
    idx = Index.open_or_create(tmp_path / "ix", IndexConfig(chunker="paragraph"))
    report, skipped = idx.add_paths([corpus_dir])
    assert len(report.added) == 4 and not skipped
    hits = search("Where is the Rosetta Stone on display?", idx, k=3, retriever="hybrid")
    assert len(hits) == 3 and all("rosetta" in h.chunk.doc_id for h in hits)
    assert any("British Museum" in h.chunk.text for h in hits)
    reranked = search("Where is the Rosetta Stone on display?", idx, k=3, reranker="bi-encoder")
    assert all(0.0 <= h.score <= 1.0 for h in reranked)
    assert [h.score for h in reranked] == sorted((h.score for h in reranked), reverse=True)
    # With a budget the context is filled in rank order up to it (k does not apply).
    answer = ask(
        "When did Voyager 2 fly past Neptune?", tmp_path / "ix", method="naive", budget=300
    )
    assert 0 < answer.context.n_tokens <= 300
    assert "Neptune" in answer.context.chunks[0].chunk.text
    assert answer.usage.prompt_tokens > 0 and answer.text
    assert answer.trace["selection"]["selector"] == "budget"


def test_ask_without_an_llm_answers_with_the_span(sample_index_dir: Path) -> None:
    """``llm="none"`` (or None) calls no LLM: the tagger's answer span is the answer, located
    in its document; a method without spans answers ``""`` with no span."""
    q = "In which year did Champollion announce the decipherment of hieroglyphs?"
    answer = ask(q, sample_index_dir, llm="none")
    span = answer.span
    assert span is not None and answer.text == span.text and answer.usage.prompt_tokens == 0
    doc = Index.open(sample_index_dir).get_document(span.doc_id)
    assert doc is not None and doc.text[span.start : span.end] == span.text
    assert ask(q, sample_index_dir, llm=None).span == span
    naive = ask(q, sample_index_dir, method="naive", llm="none")
    assert (naive.text, naive.span, naive.line.kind) == ("", None, "none")


def test_prune_keeps_the_answer_sentence_of_passages_a_user_has(corpus_dir: Path) -> None:
    from ragsieve import prune
    from ragsieve.errors import InputError

    rosetta = (corpus_dir / "rosetta-stone.md").read_text("utf-8")
    bees = (corpus_dir / "honey-bees.md").read_text("utf-8")
    q = "In which year did Champollion announce the decipherment of hieroglyphs?"
    kept = prune(q, [("Honey bees", bees), ("Rosetta Stone", rosetta)])
    assert kept and kept[0].passage == 1  # the relevant passage first
    assert any("In 1822 he announced" in k.text for k in kept)
    assert all(0.0 <= k.prob <= 1.0 for k in kept)
    # the answer span, inside the kept sentence it was found in (the list stays a list)
    assert isinstance(kept, list) and kept.span is not None and kept.span.passage == 1
    home = next(k for k in kept if (k.passage, k.sentence) == (1, kept.span.sentence))
    assert home.text[kept.span.start : kept.span.end] == kept.span.text == "1822"
    assert prune(q, [rosetta], budget=1).span is None  # the budget left its sentence out
    fewer = prune(q, [bees, rosetta], threshold=0.9, hops=1)
    assert len(fewer) == 1 or all(k.prob >= 0.9 for k in fewer)  # one is always kept
    with pytest.raises(InputError, match="empty"):
        prune(" ", [rosetta])
    with pytest.raises(InputError, match="passage"):
        prune(q, [42])  # type: ignore[list-item]


def test_prune_carries_the_link_to_the_named_passage() -> None:
    """Link carrying is on in ``prune`` as in the ``tagger`` method: the kept "directed by
    Michael Curtiz" opens the Michael Curtiz passage (which kept nothing) at its best
    sentence, whose span answers; ``link=False`` leaves it shut."""
    from ragsieve import prune
    from ragsieve.errors import ConfigError

    film = (
        "Casablanca (film)",
        "Casablanca is a 1942 American romantic drama directed by Michael Curtiz. "
        "It stars Humphrey Bogart and Ingrid Bergman.",
    )
    director = (
        "Michael Curtiz",
        "Michael Curtiz was a Hungarian-American film director. He was born in Budapest in "
        "1886. He directed over 170 films.",
    )
    q = "In which city was the director of Casablanca born?"
    linked = prune(q, [film, director])
    shut = prune(q, [film, director], link=False)
    assert any(k.passage == 1 and "Budapest" in k.text for k in linked)
    assert not any(k.passage == 1 for k in shut)
    # The linked sentence answers the bridge question (the span's ``inherit`` ranking).
    assert linked.span is not None and linked.span.text == "Budapest"
    assert shut.span is not None and shut.span.text == "Michael Curtiz"
    with pytest.raises(ConfigError, match="link"):
        prune(q, [film], link="no")  # type: ignore[arg-type]


REPO = Path(__file__).resolve().parents[1]


def _readme_python_block() -> str:
    text = (REPO / "README.md").read_text("utf-8")
    start = text.index("```python\n", text.index("From Python:")) + len("```python\n")
    return text[start : text.index("```", start)]


def test_the_readme_python_block_runs_outside_the_repository(tmp_path: Path) -> None:
    """From an empty folder (no docs/, no examples/): it indexes, answers with a 32-token cap
    (``ask(..., max_tokens=32)``), prunes within a budget and reranks in memory."""
    import subprocess
    import sys

    script = tmp_path / "readme.py"
    script.write_text(_readme_python_block(), "utf-8")
    p = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr
    assert "1822" in p.stdout and "Usage(prompt_tokens=" in p.stdout
    completion = int(p.stdout.split("completion_tokens=")[1].split(")")[0])
    assert 0 < completion <= 32
    assert p.stdout.rstrip().splitlines()[-1] == "[1, 0]"  # the rerank line


def test_rerank_passages_in_memory() -> None:
    from ragsieve import rerank
    from ragsieve.errors import InputError

    passages = ["Honey bees dance to show where food is.", "Voyager 1 was launched in 1977."]
    ranked = rerank("When was Voyager 1 launched?", passages)
    assert [r.index for r in ranked] == [1, 0] and ranked[0].text == passages[1]
    assert 1.0 >= ranked[0].score > ranked[1].score >= 0.0
    assert len(rerank("When was Voyager 1 launched?", passages, top_k=1)) == 1
    with pytest.raises(InputError, match="list of strings"):
        rerank("q", "one string")  # type: ignore[arg-type]


def test_prune_budget_and_rate_are_ceilings(corpus_dir: Path) -> None:
    from ragsieve import prune
    from ragsieve.errors import ConfigError
    from ragsieve.text import count_tokens

    rosetta = (corpus_dir / "rosetta-stone.md").read_text("utf-8")
    q = "What is the Rosetta Stone and who deciphered it?"
    everything = prune(q, [rosetta], threshold=0.01)
    # The order its docstring states: the most relevant paragraph first, then the next (the
    # relevance is a paragraph's), sentences in source order inside a paragraph.
    for a, b in pairwise(everything):
        assert a.relevance >= b.relevance
        assert a.relevance != b.relevance or a.sentence < b.sentence
    tokens = sum(count_tokens(k.text) for k in everything)
    within = prune(q, [rosetta], threshold=0.01, budget=tokens // 3)
    assert 0 < sum(count_tokens(k.text) for k in within) <= tokens // 3
    assert [k for k in everything if k in within] == within  # same order, a subset
    best = max(everything, key=lambda k: k.prob)
    assert best in within  # the most probable sentences stay
    total = sum(count_tokens(s) for s in rosetta.split("\n") if s.strip())
    halved = prune(q, [rosetta], threshold=0.01, rate=0.2)
    assert sum(count_tokens(k.text) for k in halved) <= 0.25 * total
    with pytest.raises(ConfigError, match="rate"):
        prune(q, [rosetta], rate=1.5)
    with pytest.raises(ConfigError, match="open_point must be true or false"):
        prune(q, [rosetta], open_point="yes")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- bad arguments
# Issue 45: every public call checks its arguments first (ragsieve.checks), and a mistake is
# one line that names the argument, what was given and what is expected; a string is never
# read as a list. Each row: the call (on the sample index), the error type, and fragments of
# the message. A missing index path and an LLM file that does not exist stand behind the
# checks, so a check that fired late would show their errors instead.
Q = "When did Champollion announce the decipherment?"
T = "In 1822 Champollion announced the decipherment of the hieroglyphs."
NO_LLM = "local:/nonexistent/model.gguf"


def _bad_calls() -> list[tuple[str, Any, type, tuple[str, ...]]]:
    from ragsieve import Index, IndexConfig, ask, prune, rerank, search
    from ragsieve.errors import ConfigError, InputError

    cfg, inp = ConfigError, InputError  # short: most rows fit on one line

    return [
        ("prune-passages-none", lambda i: prune(Q, None), inp, ("passages", "not None")),
        ("prune-q-int", lambda i: prune(123, [T]), inp, ("question", "int 123")),
        ("prune-q-bytes", lambda i: prune(b"q", [T]), inp, ("question", "bytes")),
        (
            "prune-3-tuple",
            lambda i: prune(Q, [("a", "b", "c")]),
            inp,
            ("passages[0]", "tuple of 3"),
        ),
        ("prune-q-surrogate", lambda i: prune("\ud800?", [T]), inp, ("question", "surrogate")),
        (
            "prune-p-surrogate",
            lambda i: prune(Q, [T, "a \ud800 b."]),
            inp,
            ("passages[1]", "U+D800"),
        ),
        (
            "prune-title-surrogate",
            lambda i: prune(Q, [("\udcff", T)]),
            inp,
            ("passages[0]", "surrogate"),
        ),
        (
            "prune-a-str",
            lambda i: prune(Q, "a string"),
            inp,
            ("passages must be a list of strings or (title, text) pairs, not a str",),
        ),
        ("prune-a-dict", lambda i: prune(Q, {"t": T}), inp, ("passages", "not a dict")),
        (
            "prune-budget-true",
            lambda i: prune(Q, [T], budget=True),
            cfg,
            ("budget", "True (a bool)"),
        ),
        ("prune-budget-0", lambda i: prune(Q, [T], budget=0), cfg, ("budget", "positive integer")),
        ("prune-rate-true", lambda i: prune(Q, [T], rate=True), cfg, ("rate", "(0, 1]")),
        ("prune-rate-0", lambda i: prune(Q, [T], rate=0), cfg, ("rate", "(0, 1]")),
        ("prune-rate-nan", lambda i: prune(Q, [T], rate=float("nan")), cfg, ("rate", "nan")),
        (
            "prune-min-keep-neg",
            lambda i: prune(Q, [T], min_keep=-5),
            cfg,
            ("min_keep", ">= 0", "-5"),
        ),
        (
            "prune-min-keep-float",
            lambda i: prune(Q, [T], min_keep=1.5),
            cfg,
            ("min_keep", "float 1.5"),
        ),
        ("prune-hops-true", lambda i: prune(Q, [T], hops=True), cfg, ("hops", "[1, 2]")),
        ("prune-model-int", lambda i: prune(Q, [T], model=5), cfg, ("model", "int 5")),
        ("prune-q-blank", lambda i: prune(" \n\t", [T]), inp, ("question is empty",)),
        ("search-k-0", lambda i: search(Q, i, k=0), cfg, ("k must be", "int 0")),
        ("search-k-neg", lambda i: search(Q, i, k=-3), cfg, ("k must be", "-3")),
        ("search-k-float", lambda i: search(Q, i, k=2.5), cfg, ("k must be", "float 2.5")),
        ("search-k-true", lambda i: search(Q, i, k=True), cfg, ("k must be", "(a bool)")),
        ("search-k-huge", lambda i: search(Q, i, k=2**70), cfg, ("k must be", "1000000")),
        ("search-q-none", lambda i: search(None, i), inp, ("query", "None")),
        ("search-q-blank", lambda i: search("   ", i), inp, ("query is empty",)),
        (
            "search-q-invisible",
            lambda i: search("\u200b\u200b", i),
            inp,
            ("query is empty", "only invisible characters: U+200B"),
        ),
        (
            "ask-q-invisible",
            lambda i: ask("\ufeff\u2060\u00a0", i, llm=NO_LLM),
            inp,
            ("question is empty", "U+FEFF"),
        ),
        (
            "prune-q-invisible",
            lambda i: prune("\u200d\u200c", [T]),
            inp,
            ("question is empty", "U+200D"),
        ),
        ("search-q-surrogate", lambda i: search("\ud800", i), inp, ("query", "surrogate")),
        ("search-index-none", lambda i: search(Q, None), inp, ("index", "None")),
        ("search-index-int", lambda i: search(Q, 5), inp, ("index", "int 5")),
        ("search-reranker-int", lambda i: search(Q, i, reranker=5), cfg, ("reranker", "int 5")),
        (
            "ask-q-int",
            lambda i: ask(123, "/nonexistent/idx", llm=NO_LLM),
            inp,
            ("question", "int 123"),
        ),
        (
            "ask-q-blank",
            lambda i: ask("  ", "/nonexistent/idx", llm=NO_LLM),
            inp,
            ("question is empty",),
        ),
        ("ask-method-int", lambda i: ask(Q, i, method=5, llm=NO_LLM), cfg, ("method", "int 5")),
        ("ask-llm-int", lambda i: ask(Q, i, llm=5), cfg, ("llm", "int 5")),
        ("ask-none-ctx", lambda i: ask(Q, i, llm="none", llm_ctx=512), cfg, ("llm_ctx", "none")),
        (
            "ask-options-str",
            lambda i: ask(Q, i, options="abc", llm=NO_LLM),
            inp,
            ("options", "not a str"),
        ),
        ("ask-k-true", lambda i: ask(Q, i, k=True, llm=NO_LLM), cfg, ("k must be", "True")),
        ("ask-budget-0", lambda i: ask(Q, i, budget=0, llm=NO_LLM), cfg, ("budget", "int 0")),
        (
            "ask-total-budget-true",
            lambda i: ask(Q, i, total_budget=True, llm=NO_LLM),
            cfg,
            ("total_budget", "True"),
        ),
        (
            "ask-max-tokens-float",
            lambda i: ask(Q, i, max_tokens=3.5, llm=NO_LLM),
            cfg,
            ("max_tokens", "3.5"),
        ),
        ("ask-llm-ctx-0", lambda i: ask(Q, i, llm_ctx=0, llm=NO_LLM), cfg, ("llm_ctx", "int 0")),
        ("rerank-passages-none", lambda i: rerank(Q, None), inp, ("passages", "not None")),
        ("rerank-passages-str", lambda i: rerank(Q, "one string"), inp, ("passages", "not a str")),
        ("rerank-item-int", lambda i: rerank(Q, [T, 7]), inp, ("passages[1]", "int 7")),
        ("rerank-q-int", lambda i: rerank(5, [T]), inp, ("query", "int 5")),
        ("rerank-top-k-0", lambda i: rerank(Q, [T], top_k=0), cfg, ("top_k", "int 0")),
        ("rerank-top-k-true", lambda i: rerank(Q, [T], top_k=True), cfg, ("top_k", "True")),
        ("rerank-model-int", lambda i: rerank(Q, [T], model=5), cfg, ("model", "int 5")),
        ("open-none", lambda i: Index.open(None), inp, ("path", "None")),
        ("open-int", lambda i: Index.open(5), inp, ("path", "int 5")),
        ("open-empty", lambda i: Index.open(""), inp, ("path", "non-empty")),
        (
            "open-or-create-config-str",
            lambda i: Index.open_or_create(i.path, "fixed"),
            cfg,
            ("config", "IndexConfig"),
        ),
        (
            "add-paths-str",
            lambda i: i.add_paths("examples/corpus"),
            inp,
            ("paths", "not a str", "[path]"),
        ),
        ("add-paths-item", lambda i: i.add_paths([5]), inp, ("paths[0]", "int 5")),
        ("add-none", lambda i: i.add(None), inp, ("docs", "not None")),
        ("add-a-str", lambda i: i.add(["text"]), inp, ("docs[0]", "Document")),
        ("config-chunker-int", lambda i: IndexConfig(chunker=5), cfg, ("chunker", "int 5")),
        ("config-embedder-none", lambda i: IndexConfig(embedder=None), cfg, ("embedder", "None")),
        ("config-alpha-str", lambda i: IndexConfig(alpha="x"), cfg, ("alpha", "'x'")),
        ("config-links-true", lambda i: IndexConfig(links=True), cfg, ("links", "(a bool)")),
    ]


@pytest.mark.parametrize("name", [c[0] for c in _bad_calls()])
def test_a_bad_argument_is_one_line_naming_it(name: str, writable_index: Path) -> None:
    from ragsieve import Index

    _, call, error, fragments = next(c for c in _bad_calls() if c[0] == name)
    before = sorted(p.name for p in writable_index.rglob("*"))
    with pytest.raises(error) as e:
        call(Index.open(writable_index))
    msg = str(e.value)
    assert "\n" not in msg and msg.strip() == msg
    for fragment in fragments:
        assert fragment in msg, msg
    assert sorted(p.name for p in writable_index.rglob("*")) == before  # nothing written


def test_empty_lists_are_empty_results_and_any_sequence_is_a_list() -> None:
    """What the CLI does with nothing to read: nothing, not an error. A tuple or a generator
    of passages is a list; the shipped tagger and reranker read them."""
    from ragsieve import prune, rerank

    assert prune(Q, []) == [] and rerank(Q, []) == [] and prune(Q, ["", "  "]) == []
    kept = prune(Q, (p for p in ["Bees dance.", T]))
    assert kept and kept[0].passage == 1 and "1822" in kept[0].text
    assert [r.index for r in rerank(Q, ("Bees dance.", T))] == [1, 0]
    assert prune(Q, [T], min_keep=0, budget=1000, rate=1) == prune(Q, [T], rate=1.0)
