"""Context and ranked-list metrics against hand-computed cases: evidence matching, IE, sums."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragsieve.evaluate import (
    EvalQuestion,
    aggregate,
    answer_recall,
    context_metrics,
    context_tokens,
    evidence_precision,
    evidence_recall,
    evidence_token_precision,
    ie,
    ie_at_k,
    information_efficiency,
    mrr,
    precision_at_k,
    ranked_metrics,
    recall_at_k,
)
from ragsieve.metrics import _Grams, match_tokens
from ragsieve.text import count_tokens

G1 = "The Eiffel Tower was completed in 1889 for the World's Fair in Paris."
G2 = "Gustave Eiffel's company designed and built the tower over two years."
NOISE1 = "Bananas are rich in potassium and grow in tropical climates around the world."
NOISE2 = "The stock market closed higher on Friday after a volatile trading week."


# --------------------------------------------------------------------------- normalisation


def test_match_tokens_is_squad_normalisation_generalised() -> None:
    assert match_tokens("The  Cat's hat, a RED one!") == ["cat", "s", "hat", "red", "one"]
    # curly quotes, dashes and ligatures behave like their ASCII forms
    assert match_tokens("“ﬁne” 12–4") == match_tokens('"fine" 12-4') == ["fine", "12", "4"]
    assert match_tokens("...") == []


def test_coverage_counts_tokens_inside_shared_4_grams_or_chunk_edges() -> None:
    ten = [f"a{i}" for i in range(1, 11)]
    assert _Grams([ten]).coverage(ten) == 1.0
    assert _Grams([ten[:8]]).coverage(ten) == pytest.approx(0.8)
    assert _Grams([ten[:7]]).coverage(ten) == pytest.approx(0.7)
    # two halves in two separate chunks: every token still lies in a shared 4-gram
    assert _Grams([ten[:5], ten[5:]]).coverage(ten) == 1.0
    # windows never bridge two chunks ...
    six = ten[:6]
    assert _Grams([six[:3], six[3:]]).coverage(six) == 0.0
    # ... but in an index of chunks, a piece of a unit cut off by a chunk boundary is matched
    # exactly: the unit's start at a chunk's end, its end at a chunk's start, a whole tiny chunk
    chunks = _Grams([["x", *six[:3]], [*six[3:], "y"]], edges=True)
    assert chunks.coverage(six) == 1.0
    assert _Grams([six[:2], six[2:4], six[4:]], edges=True).coverage(six) == 1.0
    assert _Grams([["x", *six[:3], "y"]], edges=True).coverage(six) == 0.0  # not at an edge
    assert _Grams([["y", *six[1:3]]], edges=True).coverage(six) == 0.0  # not the unit's start
    # a unit shorter than 4 tokens must occur whole and contiguously
    assert _Grams([["x", "b1", "b2", "y"]]).coverage(["b1", "b2"]) == 1.0
    assert _Grams([["b1", "x", "b2"]]).coverage(["b1", "b2"]) == 0.0


# --------------------------------------------------------------------------- context metrics


def test_evidence_recall_hand_cases() -> None:
    assert evidence_recall([G1, G2], [G1, G2]) == 1.0
    assert evidence_recall([NOISE1, G1], [G1, G2]) == 0.5
    assert evidence_recall([NOISE1, NOISE2], [G1, G2]) == 0.0
    assert evidence_recall([], [G1]) == 0.0
    assert evidence_recall([G1], []) is None
    # gold inside a longer chunk, with different punctuation and case
    assert evidence_recall([NOISE1 + " " + G1.upper().replace(",", "")], [G1]) == 1.0
    # a chunk boundary cut the gold sentence; both pieces were retrieved
    words = G1.split()
    assert evidence_recall([" ".join(words[:6]), " ".join(words[6:])], [G1]) == 1.0
    # only the first half retrieved: not covered
    assert evidence_recall([" ".join(words[:6])], [G1]) == 0.0


def test_evidence_precision_sentence_gold() -> None:
    # 4 sentences, 1 of them gold
    ctx = [f"{NOISE1} {G1}", f"{NOISE2} Paris is the capital of France."]
    assert evidence_precision(ctx, [G1]) == pytest.approx(1 / 4)
    assert evidence_precision([G1, G2], [G1, G2]) == 1.0
    assert evidence_precision([NOISE1, NOISE2], [G1]) == 0.0
    assert evidence_precision([], [G1]) == 0.0  # nothing delivered
    assert evidence_precision([G1], []) is None


def test_evidence_precision_paragraph_gold_counts_sentences_inside_it() -> None:
    paragraph = f"{G1} {G2} It is 330 metres tall."
    # two sentences taken out of the gold paragraph, one unrelated sentence
    assert evidence_precision([G2, "It is 330 metres tall.", NOISE1], [paragraph]) == (
        pytest.approx(2 / 3)
    )


def test_evidence_precision_sentence_that_contains_gold_counts() -> None:
    # a splitter that did not split G1 from its neighbour still delivers the supporting fact
    merged = G1[:-1] + "; " + NOISE1
    assert evidence_precision([merged], [G1]) == 1.0


def test_evidence_token_precision_hand_case() -> None:
    ten = " ".join(f"w{i}" for i in range(10))
    noise = " ".join(f"n{i}" for i in range(30))
    assert evidence_token_precision([ten, noise], [ten]) == pytest.approx(10 / 40)
    assert evidence_token_precision([], [ten]) == 0.0
    assert evidence_token_precision([ten], []) is None


def test_ie_is_recall_times_precision() -> None:
    ctx = [G1, NOISE1, NOISE2]
    r = evidence_recall(ctx, [G1, G2])
    p = evidence_precision(ctx, [G1, G2])
    assert (r, p) == (0.5, pytest.approx(1 / 3))
    assert ie(ctx, [G1, G2]) == pytest.approx(1 / 6)
    assert information_efficiency(None, 0.5) is None


def test_answer_recall_uses_token_sequences() -> None:
    assert answer_recall(["It was built in 1889."], ["1889"]) == 1.0
    assert answer_recall(["It has 10 floors."], ["1"]) == 0.0  # "1" is not "10"
    assert answer_recall(["Denver Broncos won."], ["the denver broncos", "Carolina"]) == 1.0
    assert answer_recall(["the score was 12–4"], ["4"]) == 1.0
    # chunks are read in order, as the LLM sees them
    assert answer_recall(["... by Gustave", "Eiffel's company"], ["Gustave Eiffel"]) == 1.0
    # yes/no/unanswerable are not spans: they would match any context using the word
    assert answer_recall(["yes, we can"], ["Yes"]) is None
    assert answer_recall(["anything"], []) is None


def test_context_tokens_counts_the_joined_context() -> None:
    assert context_tokens([G1, G2]) == count_tokens(G1 + "\n\n" + G2)
    assert context_tokens([]) == 0


def test_context_metrics_agrees_with_the_single_functions() -> None:
    q = EvalQuestion(
        id="q", question="When?", answers=("1889",), evidence=(G1, G2), evidence_level="sentence"
    )
    ctx = [f"{NOISE1} {G1}", NOISE2]
    got = context_metrics(ctx, q)
    assert got["context_tokens"] == context_tokens(ctx)
    assert got["answer_recall"] == 1.0
    assert got["evidence_recall"] == evidence_recall(ctx, q.evidence) == 0.5
    assert got["evidence_precision"] == evidence_precision(ctx, q.evidence)
    assert got["evidence_token_precision"] == evidence_token_precision(ctx, q.evidence)
    assert got["ie"] == pytest.approx(0.5 * got["evidence_precision"])
    no_ev = context_metrics(ctx, EvalQuestion(id="q2", question="?", answers=("x",)))
    assert no_ev["evidence_recall"] is None and no_ev["ie"] is None


def test_gold_as_context_scores_one_and_unrelated_scores_zero() -> None:
    gold = [G1, G2]
    assert evidence_recall(gold, gold) == evidence_precision(gold, gold) == 1.0
    assert evidence_recall([NOISE1, NOISE2], gold) == 0.0
    assert evidence_precision([NOISE1, NOISE2], gold) == 0.0


_word = st.text(alphabet="abcdefghij", min_size=1, max_size=6).filter(
    lambda w: w not in {"a", "an", "the"}
)
_sentence = st.lists(_word, min_size=1, max_size=15).map(lambda ws: " ".join(ws) + ".")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_sentence, min_size=1, max_size=4))
def test_any_evidence_as_its_own_context_is_fully_recalled(evidence: list[str]) -> None:
    assert evidence_recall(evidence, evidence) == 1.0
    assert evidence_token_precision(evidence, evidence) == 1.0


# --------------------------------------------------------------------------- ranked-list metrics


RANKED = [NOISE1, G1, NOISE2, G2, "Unrelated words about cooking pasta at home tonight."]


def test_recall_precision_ie_at_k_hand_cases() -> None:
    gold = [G1, G2]
    assert recall_at_k(RANKED, gold, 1) == 0.0
    assert precision_at_k(RANKED, gold, 1) == 0.0
    assert recall_at_k(RANKED, gold, 3) == 0.5
    assert precision_at_k(RANKED, gold, 3) == pytest.approx(1 / 3)
    assert ie_at_k(RANKED, gold, 3) == pytest.approx(1 / 6)
    assert recall_at_k(RANKED, gold, 5) == 1.0
    assert precision_at_k(RANKED, gold, 5) == pytest.approx(2 / 5)
    assert mrr(RANKED, gold) == 0.5
    assert mrr([NOISE1], gold) == 0.0
    assert recall_at_k(RANKED, [], 3) is None


def test_precision_at_k_divides_by_units_returned() -> None:
    # a selective method that returns 2 units is judged on those 2
    assert precision_at_k([G1, NOISE1], [G1], 5) == 0.5
    assert precision_at_k([], [G1], 5) == 0.0
    with pytest.raises(ValueError):
        precision_at_k([G1], [G1], 0)


def test_ranked_metrics_matches_single_functions() -> None:
    gold = [G1, G2]
    got = ranked_metrics(RANKED, gold)
    for k in (1, 3, 5):
        assert got[f"recall@{k}"] == recall_at_k(RANKED, gold, k)
        assert got[f"precision@{k}"] == precision_at_k(RANKED, gold, k)
        assert got[f"ie@{k}"] == ie_at_k(RANKED, gold, k)
    assert got["mrr"] == mrr(RANKED, gold)
    assert all(v is None for v in ranked_metrics(RANKED, []).values())


# --------------------------------------------------------------------------- aggregate


def test_aggregate_means_skip_none_and_count() -> None:
    rows = [
        {"id": "a", "f1": 1.0, "evidence_recall": None, "timings": {"llm": 1.0}},
        {"id": "b", "f1": 0.5, "evidence_recall": 0.5, "em": True},
    ]
    got = aggregate(rows)
    assert got["n"] == 2
    assert got["f1"] == 0.75
    assert got["evidence_recall"] == 0.5 and got["n_evidence_recall"] == 1
    assert got["em"] == 1.0 and got["n_em"] == 1
    assert "id" not in got and "timings" not in got


def test_aggregate_reports_ie_as_saki_does() -> None:
    # SAKI-RAG Table 6, Dragonball, SAKI-RAG column: Rec.@1 22.14, Pre.@1 74.84 -> IE@1 16.57
    rows = [{"recall@1": 0.2214, "precision@1": 0.7484, "ie@1": 0.2214 * 0.7484}]
    assert round(aggregate(rows)["ie@1"] * 100, 2) == 16.57
    # over several questions IE is mean(R) x mean(P); the per-question mean is kept as _pq
    rows = [
        {"evidence_recall": 1.0, "evidence_precision": 0.2, "ie": 0.2},
        {"evidence_recall": 0.0, "evidence_precision": 1.0, "ie": 0.0},
    ]
    got = aggregate(rows)
    assert got["ie"] == pytest.approx(0.5 * 0.6)
    assert got["ie_pq"] == pytest.approx(0.1)


def test_aggregate_sums_at_1_3_5_as_saki_formula_9() -> None:
    # SAKI-RAG Table 7 (SQuAD, SAKI-RAG): Rec 86.33 + 95.53 + 95.54 = 277.40 (Table 2)
    row = {"recall@1": 0.8633, "recall@3": 0.9553, "recall@5": 0.9554}
    row |= {"precision@1": 0.9249, "precision@3": 0.9518, "precision@5": 0.9439}
    got = aggregate([row])
    assert round(got["recall@sum"] * 100, 2) == 277.40
    assert round(got["precision@sum"] * 100, 2) == 282.06
    # IE@k recomputed from the rounded table values: 79.85 + 90.93 + 90.18 = 260.96 (paper: 260.95)
    assert round(got["ie@sum"] * 100, 1) == 261.0


def test_aggregate_of_nothing() -> None:
    assert aggregate([]) == {"n": 0.0}


def test_a_chunk_containing_evidence_is_relevant() -> None:
    paragraph = f"{G1} {G2}"
    # a chunk that straddles the end of the gold paragraph: half gold, half not
    straddling = f"{G2} {NOISE1} {NOISE2}"
    assert precision_at_k([straddling], [paragraph], 1) == 1.0
    assert mrr([NOISE1, straddling], [paragraph]) == 0.5
    # but its sentences are judged one by one for the context precision
    assert evidence_precision([straddling], [paragraph]) == pytest.approx(1 / 3)


def test_near_duplicates_that_differ_in_a_number_do_not_match() -> None:
    gold = (
        "The 2011–12 VCU Rams men's basketball team represented Virginia Commonwealth University."
    )
    other = (
        "The 2012–13 VCU Rams men's basketball team represented Virginia Commonwealth University."
    )
    assert evidence_recall([other], [gold]) == 0.0
    assert evidence_precision([other], [gold]) == 0.0
    assert evidence_recall([gold], [gold]) == 1.0
    # a unit retrieved but for its last word still counts; one that lost its number does not
    words = G2.split()
    assert evidence_recall([" ".join(words[:-1])], [G2]) == 1.0
    # 11 of 12 tokens covered, but the uncovered one is the year
    assert evidence_recall([G1.replace("1889", "1890")], [G1]) == 0.0
    # ... or a name
    oregon = "He played college football at the University of Oregon in Eugene."
    texas = "He played college football at the University of Texas in Eugene."
    assert evidence_recall([texas], [oregon]) == 0.0
    assert evidence_precision([texas], [oregon]) == 0.0
    # a lower-case word may differ
    assert evidence_recall([oregon.replace("played", "starred")], [oregon]) == 1.0


def test_a_unit_cut_into_small_chunks_is_recalled_only_whole() -> None:
    words = G1.split()
    chunks = [" ".join(words[i : i + 3]) for i in range(0, len(words), 3)]
    assert len(chunks) == 5  # "The Eiffel Tower" | "was completed in" | ... | "Paris."
    assert evidence_recall(chunks, [G1]) == 1.0
    assert evidence_recall(list(reversed(chunks)), [G1]) == 1.0  # rank order does not matter
    assert evidence_recall(chunks[:-1], [G1]) == 0.0  # "Paris" is missing
    # every fragment lies inside the gold sentence
    assert evidence_precision(chunks, [G1]) == 1.0


def test_a_question_in_parts_holds_its_answer_only_with_every_part() -> None:
    """A two-part question's joined answer never occurs verbatim: the context holds the answer
    when it holds one acceptable string of each part (a part that is no span is left out)."""
    q = EvalQuestion(
        id="q",
        question="What is the default priority of treemagic rules, and what is the maximum?",
        answers=("default 50, maximum 100",),
        meta={"parts": [["50"], ["100"]]},
    )
    both = ["The default priority value is 50, and the maximum is 100."]
    assert answer_recall(both, q.answers) == 0.0  # the joined answer alone would miss it
    assert context_metrics(both, q)["answer_recall"] == 1.0
    assert context_metrics(["The default priority value is 50."], q)["answer_recall"] == 0.0
    yes_part = EvalQuestion(
        "y", "?", answers=("No; Callgrind",), meta={"parts": [["No"], ["Callgrind"]]}
    )
    assert context_metrics(["Only Callgrind has such support."], yes_part)["answer_recall"] == 1.0
    only_no = EvalQuestion("n", "?", answers=("No",), meta={"parts": [["No"]]})
    assert context_metrics(["No."], only_no)["answer_recall"] is None


def test_an_unanswerable_question_has_no_answer_or_evidence_metric() -> None:
    """An unanswerable question (no answers, no evidence) is scored by none of these metrics:
    each is None, and the mean of a set leaves it out (abstention is what scores it)."""
    q = EvalQuestion(id="u", question="What is zstd's default compression level?")
    got = context_metrics(["zstd offers negative compression levels."], q)
    assert got["answer_recall"] is None and got["evidence_recall"] is None
    assert got["ie"] is None and got["context_tokens"] > 0
    answered = EvalQuestion(id="a", question="?", answers=("1889",))
    rows = [context_metrics([G1], answered), got]
    assert aggregate(rows)["answer_recall"] == 1.0
