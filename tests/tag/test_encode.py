"""The tagger's input windows, with the real MiniLM tokenizer."""

from __future__ import annotations

import pytest

from ragsieve.tag.encode import MAX_QUESTION_TOKENS, NO_SENTENCE, PassageEncoder, load_tokenizer
from ragsieve.training.minilm import base_model_path


@pytest.fixture(scope="module")
def enc() -> PassageEncoder:
    return PassageEncoder(load_tokenizer(base_model_path() / "tokenizer.json"), 96)


def test_one_window_maps_every_sentence_token(enc: PassageEncoder) -> None:
    sents = ["Champollion was French.", "In 1822 he announced the decipherment."]
    (w,) = enc.windows("When?", [("Rosetta Stone", sents)])
    assert w.ids[0] == enc.cls and w.ids[-1] == enc.sep
    pieces = {s: [w.ids[i] for i, x in enumerate(w.sentence_of) if x == s] for s in (0, 1)}
    for s, text in enumerate(sents):
        expected = enc.tok.encode(text, add_special_tokens=False).ids
        assert pieces[s] == expected
    # The question and the title belong to no sentence; segment ids switch after [SEP].
    first_sent = w.sentence_of.index(0)
    assert set(w.sentence_of[:first_sent]) == {NO_SENTENCE}
    assert w.type_ids[: w.ids.index(enc.sep) + 1] == [0] * (w.ids.index(enc.sep) + 1)
    assert w.type_ids[first_sent] == 1


def test_long_passage_is_cut_in_windows_of_whole_sentences(enc: PassageEncoder) -> None:
    sents = [
        f"Sentence number {i} talks about the lighthouse lens and its light." for i in range(12)
    ]
    ws = enc.windows("What lens?", [("Lighthouses", sents), ("Other", ["Short one."])])
    first = [w for w in ws if w.passage == 0]
    assert len(first) > 1
    assert all(len(w.ids) <= enc.max_length for w in ws)
    seen = [s for w in first for s in dict.fromkeys(x for x in w.sentence_of if x != NO_SENTENCE)]
    assert seen == list(range(12))  # each sentence in exactly one window, in order
    title = enc.tok.encode("Lighthouses:", add_special_tokens=False).ids
    for w in first:  # every window repeats the title
        start = w.ids.index(enc.sep) + 1
        assert w.ids[start : start + len(title)] == title
    assert ws[-1].passage == 1


def test_overlong_sentence_and_question_are_cut(enc: PassageEncoder) -> None:
    q = " ".join(["why"] * 200)
    ws = enc.windows(q, [("", [" ".join(["word"] * 500)])])
    assert len(ws) == 1 and len(ws[0].ids) <= enc.max_length
    assert ws[0].ids.index(enc.sep) == MAX_QUESTION_TOKENS + 1
    batch = enc.batch(ws + enc.windows("q", [("", ["tiny."])]))
    assert batch["input_ids"].shape == batch["sentence_of"].shape
    assert (batch["sentence_of"][1][batch["attention_mask"][1] == 0] == NO_SENTENCE).all()


def test_the_encoder_remembers_texts_and_forgets_the_oldest(enc: PassageEncoder) -> None:
    from ragsieve.tag import encode

    old = encode.CACHE_TEXTS
    encode.CACHE_TEXTS = 8
    try:
        first = enc.windows("When?", [("T", ["Alpha one.", "Beta two.", "Gamma three."])])
        # More new texts than the cache holds, beside ones read before: every call still
        # gets every text's ids, the same as tokenising it afresh.
        many = [f"Sentence number {i}." for i in range(20)]
        again = enc.windows("When?", [("T", ["Alpha one.", *many, "Gamma three."])])
        assert len(enc._cache) <= 8
        fresh = PassageEncoder(enc.tok, enc.max_length)
        assert [w.ids for w in again] == [
            w.ids for w in fresh.windows("When?", [("T", ["Alpha one.", *many, "Gamma three."])])
        ]
        assert (
            first[0].ids
            == fresh.windows("When?", [("T", ["Alpha one.", "Beta two.", "Gamma three."])])[0].ids
        )
    finally:
        encode.CACHE_TEXTS = old
