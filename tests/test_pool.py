"""PoolSelector: ragsieve methods over passages the caller retrieved, on a real working index."""

from __future__ import annotations

import doctest
import gc
import re
import threading
from pathlib import Path

import pytest
from cli_helpers import probe_json
from pool_helpers import QUESTION, corpus_paragraphs, is_answer

import ragsieve.pool
from ragsieve.errors import ConfigError, InputError
from ragsieve.methods import known_methods
from ragsieve.pool import Passage, PoolSelector, passage_id

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def passages() -> list[Passage]:
    return [Passage(p.text, p.title) for p in corpus_paragraphs()]


@pytest.fixture(scope="module")
def full() -> PoolSelector:
    sel = PoolSelector("full")
    yield sel
    sel.close()


def check_pieces(res: ragsieve.pool.PoolResult, passages: list[Passage | str]) -> None:
    """Every piece points back to its passage exactly, with a float score."""
    texts = [p.text if isinstance(p, Passage) else p for p in passages]
    assert res.pieces, "nothing selected"
    for p in res.pieces:
        assert isinstance(p.score, float)
        assert texts[p.passage][p.start : p.end] == p.text
        assert p.doc_id.startswith("pool-")
    assert [p.chunk_id for p in res.pieces] == res.retrieval.trace["selected"]


def test_full_selects_the_answer_sentence_and_maps_it_back(
    full: PoolSelector, passages: list[Passage]
) -> None:
    res = full.select(QUESTION, passages)
    check_pieces(res, passages)
    assert res.method == "full"
    assert res.indexed == len(passages) and res.index_seconds > 0
    hits = [p for p in res.pieces if is_answer(p.text)]
    assert hits, res.text
    assert passages[hits[0].passage].title == "The Rosetta Stone"
    # a sentence, not the whole paragraph
    assert len(hits[0].text) < len(passages[hits[0].passage].text)
    assert res.retrieval is not None and res.retrieval.trace["method"] == "full"
    assert "tag" in res.retrieval.timings or "rerank" in res.retrieval.timings


def test_a_repeated_call_indexes_nothing_and_selects_the_same(
    full: PoolSelector, passages: list[Passage]
) -> None:
    first = full.select(QUESTION, passages)
    again = full.select(QUESTION, passages)
    assert again.indexed == 0 and again.index_seconds == 0.0
    assert [p.chunk_id for p in again] == [p.chunk_id for p in first]


def test_new_passages_are_seen_by_the_method_built_before_they_were_added(
    full: PoolSelector, passages: list[Passage]
) -> None:
    full.select(QUESTION, passages[:2])  # the method exists; now a new passage arrives
    extra = Passage("The Voyager Golden Record was assembled by a committee chaired by Carl Sagan.")
    res = full.select("Who chaired the committee that assembled the Golden Record?", [extra])
    assert res.indexed == 1
    check_pieces(res, [extra])
    assert "Carl Sagan" in res.text


def test_duplicates_map_to_the_first_and_only_the_given_passages_are_read(
    full: PoolSelector, passages: list[Passage]
) -> None:
    rosetta = next(p for p in passages if "Champollion" in p.text)
    bees = passages[0]
    # plain strings and Passages mix; the same text twice maps to its first position
    pool = [bees.text, rosetta, rosetta, "   "]
    res = full.select(QUESTION, pool)
    check_pieces(res, pool)
    assert {p.passage for p in res.pieces} <= {0, 1}
    assert any(p.passage == 1 and "1822" in p.text for p in res.pieces)
    # the lighthouse paragraph (Fresnel, 1822) is indexed but not in this pool
    assert all("Fresnel" not in p.text for p in res.pieces)


def test_sage_selects_whole_chunks_in_score_order(passages: list[Passage]) -> None:
    with PoolSelector("sage[g=0.3]", budget=300) as sel:
        res = sel.select(QUESTION, passages)
        check_pieces(res, passages)
        assert res.method == "sage[g=0.3]"
        assert not sel.index.has_sentences  # sage reads chunks only
        scores = [p.score for p in res.pieces]
        assert scores == sorted(scores, reverse=True)
        assert any("1822" in p.text and "Champollion" in p.text for p in res.pieces)
        assert res.retrieval.context.n_tokens <= 300


def test_bad_input_is_one_line(full: PoolSelector) -> None:
    with pytest.raises(InputError, match="question is empty"):
        full.select("  ", ["text"])
    with pytest.raises(
        InputError, match=re.escape("passages[1] must be a string or a Passage")
    ) as e:
        full.select(QUESTION, ["text", 3])  # type: ignore[list-item]
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="list of strings or Passages, not a str"):
        full.select(QUESTION, "one passage")
    assert full.select(QUESTION, []).pieces == []
    assert full.select(QUESTION, ["", " \n"]).retrieval is None


@pytest.mark.parametrize(
    ("question", "passages", "error", "fragments"),
    [
        (QUESTION, None, InputError, ("passages", "not None")),
        (QUESTION, {"a": "text"}, InputError, ("passages", "not a dict")),
        (QUESTION, Passage("one passage"), InputError, ("passages", "not a Passage")),
        (QUESTION, [None], InputError, ("passages[0]", "got None")),
        (QUESTION, ["ok", Passage(None)], InputError, ("passages[1].text", "None")),  # type: ignore[arg-type]
        (QUESTION, [Passage("t", 5)], InputError, ("passages[0].title", "int 5")),  # type: ignore[arg-type]
        (QUESTION, ["a \ud800 b."], InputError, ("passages[0]", "surrogate")),
        (None, ["text"], InputError, ("question", "None")),
        (b"q?", ["text"], InputError, ("question", "bytes")),
        ("\ud800?", ["text"], InputError, ("question", "surrogate")),
        ("\t \n", ["text"], InputError, ("question is empty",)),
    ],
)
def test_bad_select_arguments_are_one_line_naming_them(
    question: object, passages: object, error: type, fragments: tuple[str, ...]
) -> None:
    """Checked before the tagger loads or an index is made (the default, direct method)."""
    sel = PoolSelector()
    with pytest.raises(error) as e:
        sel.select(question, passages)  # type: ignore[arg-type]
    assert "\n" not in str(e.value) and all(f in str(e.value) for f in fragments), str(e.value)


@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        ({"budget": True}, ("budget", "True (a bool)")),
        ({"k": 0}, ("k must be", "int 0")),
        ({"k": 2.5}, ("k must be", "float 2.5")),
        ({"retriever": 5}, ("retriever", "int 5")),
        ({"embedder": None}, ("embedder", "None")),
        ({"method": 5}, ("method", "int 5")),
    ],
)
def test_bad_selector_options_are_one_line_config_errors(
    kwargs: dict[str, object], fragments: tuple[str, ...], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as e:
        PoolSelector(**{"method": "naive", "index_dir": tmp_path / "w", **kwargs})  # type: ignore[arg-type]
    assert "\n" not in str(e.value) and all(f in str(e.value) for f in fragments), str(e.value)
    assert not (tmp_path / "w").exists()
    with pytest.raises(
        InputError, match=re.escape("index_dir must be a str or a pathlib.Path, got int 5")
    ):
        PoolSelector("naive", index_dir=5)  # type: ignore[arg-type]


def test_a_bad_spec_fails_before_any_index_is_made(tmp_path: Path) -> None:
    for spec, match in [
        ("nope", "unknown method 'nope'"),
        ("sage[gg=1]", "unknown option"),
        ("full[unit=", "bad method spec"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(match)) as e:
            PoolSelector(spec, index_dir=tmp_path / "idx")
        assert "\n" not in str(e.value)
    assert not (tmp_path / "idx").exists()


def test_a_persistent_index_is_reused_across_selectors(tmp_path: Path) -> None:
    pool = ["French soldiers found the stone in July 1799 near Rashid.", "Bees dance."]
    with PoolSelector("naive", k=1, index_dir=tmp_path / "work") as a:
        first = a.select("Who found the stone?", pool)
    assert (tmp_path / "work" / "ragsieve.json").is_file()  # kept after close
    with PoolSelector("naive", k=1, index_dir=tmp_path / "work") as b:
        again = b.select("Who found the stone?", pool)
    assert first.indexed == 2 and again.indexed == 0
    assert again.pieces == first.pieces and again.pieces[0].passage == 0
    # a sentence-level method cannot use an index built without sentences: one line
    with pytest.raises(ConfigError, match="use another index_dir"):
        PoolSelector("full", index_dir=tmp_path / "work").select("q?", pool)


def test_the_temporary_index_goes_with_close_and_with_the_selector() -> None:
    sel = PoolSelector("naive", k=1)
    sel.select("Who found the stone?", ["Soldiers found the stone."])
    where = Path(sel.index.path).parent
    assert where.is_dir()
    sel.close()
    assert not where.exists()
    sel = PoolSelector("naive", k=1)
    sel.warm_up()
    where = Path(sel.index.path).parent
    del sel
    gc.collect()
    assert not where.exists()


def test_threads_share_one_selector(full: PoolSelector, passages: list[Passage]) -> None:
    results: dict[int, list[str]] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            res = full.select(QUESTION, passages[i : i + 6])
            results[i] = [p.chunk_id for p in res.pieces]
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and set(results) == {0, 4}


@pytest.mark.parametrize("spec", known_methods())
def test_every_method_runs_on_a_pool_and_sees_passages_added_after_it_was_built(spec: str) -> None:
    first = ["French soldiers found the stone in July 1799 near Rashid.", "Bees dance."]
    later = ["A lighthouse marks a coastline.", "Voyager 1 was launched on 5 September 1977."]
    with PoolSelector(spec) as sel:
        assert sel.select("Who found the stone?", first).pieces
        res = sel.select("When was Voyager 1 launched?", later)
    check_pieces(res, later)
    assert any("1977" in p.text for p in res.pieces)


def test_passage_ids_are_stable_and_title_sensitive() -> None:
    assert passage_id("", "a") == passage_id("", "a")
    assert passage_id("t", "a") != passage_id("", "a")
    assert passage_id("ta", "b") != passage_id("t", "ab")  # the separator matters
    assert len(passage_id("", "a")) == len("pool-") + 20


def test_the_docstring_examples_run() -> None:
    failed, attempted = doctest.testmod(ragsieve.pool, optionflags=doctest.ELLIPSIS)
    assert attempted >= 4 and failed == 0


def test_the_default_tagger_prunes_directly_without_a_working_index(
    passages: list[Passage],
) -> None:
    """``PoolSelector()`` reads the passages with the tagger, paragraph by paragraph, and makes
    no index; pieces slice their passage exactly, also past a blank line inside it."""
    sel = PoolSelector()
    assert sel.method_name == "tagger" and sel.direct
    joined = Passage("\n\n".join(p.text for p in passages[8:11]), passages[8].title)
    pool = [*passages[:8], joined]  # the answer is in the joined passage's third paragraph
    res = sel.select(QUESTION, pool)
    check_pieces(res, pool)
    assert any(is_answer(p.text) for p in res.pieces)
    assert res.indexed == 0 and res.retrieval is not None and res.retrieval.trace["direct"]
    assert set(res.retrieval.timings) == {"tag", "select"}
    # the shipped tagger's answer span comes through, located in its passage
    span = res.span
    assert span is not None and span.text and res.retrieval.span is not None
    assert pool[span.passage].text[span.start : span.end] == span.text
    assert any(
        p.passage == span.passage and p.start <= span.start < span.end <= p.end for p in res.pieces
    )
    with pytest.raises(ConfigError, match="no index"):
        _ = sel.index
    sel.close()


def test_direct_pruning_loads_neither_lance_nor_torch() -> None:
    """A fresh interpreter: the default selector opens no Lance dataset and loads no torch."""
    probe = (
        "import json, sys\n"
        "from ragsieve.pool import PoolSelector\n"
        "res = PoolSelector().select('Who found the stone?', "
        "['French soldiers found the stone in July 1799.', 'Bees dance.'])\n"
        "heavy = ('torch', 'lance', 'lancedb')\n"
        "print(json.dumps([len(res.pieces), [m for m in heavy if m in sys.modules]]))\n"
    )
    n, loaded = probe_json(probe)
    assert n >= 1 and loaded == []
