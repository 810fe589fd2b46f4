"""The tagger's settings are one object: one set of defaults and one check, read by the
``tagger`` method, ``full``, :func:`ragsieve.prune` and the HTTP limits; and one keep rule, read
by the pruner and by the feedback loop's cut."""

from __future__ import annotations

from dataclasses import fields

import pytest
from tagger_helpers import PASSAGES, QUESTION, bare

import ragsieve
from ragsieve.api import PRUNE_SETTINGS
from ragsieve.errors import ConfigError
from ragsieve.methods.full import FullConfig
from ragsieve.methods.tagger import TaggerConfig, TaggerCut, chunk_sentences, tagged_selection
from ragsieve.serve.limits import SAFE, check_http_options
from ragsieve.tag.model import OnnxTagger
from ragsieve.tag.prune import keeps, prune
from ragsieve.tag.settings import HOPS, MIN_KEEP_MIN, THRESHOLD_MAX, TaggerSettings
from ragsieve.types import Chunk

NAMES = [f.name for f in fields(TaggerSettings)]

#: A value out of bounds for each setting, as every caller may be given it.
BAD = {
    "threshold": 1.5,
    "passage_threshold": 1.0,
    "stack": "yes",
    "open_point": 1,
    "hops": 3,
    "min_keep": -1,
    "lead": "no",
    "link": None,
    "span_power": 5.0,
    "span_snap": "yes",
    "span_link": "both",
    "span_overlap": -0.5,
}


def _message(make: object) -> str:
    with pytest.raises(ConfigError) as e:
        make()  # type: ignore[operator]
    return str(e.value)


def test_the_method_config_is_the_settings_with_their_defaults() -> None:
    config = TaggerConfig()
    assert isinstance(config, TaggerSettings)
    assert {n: getattr(config, n) for n in NAMES} == {
        n: getattr(TaggerSettings(), n) for n in NAMES
    }


def test_full_states_no_links_and_no_leads_by_name() -> None:
    full = FullConfig(scorer="tagger", threshold=0.3, hops=1, min_k=2)
    s = full.tagger_settings
    assert isinstance(s, TaggerSettings)
    assert s.link is False and s.lead is False  # docs/tagger.md: full carries neither
    assert (s.threshold, s.hops, s.min_keep) == (0.3, 1, 2)
    defaults = FullConfig()
    for name in ("threshold", "passage_threshold", "stack", "open_point"):
        assert getattr(defaults, name) == getattr(TaggerSettings(), name)


def test_prune_settings_are_the_methods_without_leads() -> None:
    assert TaggerSettings(lead=False) == PRUNE_SETTINGS


@pytest.mark.parametrize("name", NAMES)
def test_every_caller_refuses_a_bad_value_with_one_message(name: str) -> None:
    value = BAD[name]
    message = _message(lambda: TaggerSettings(**{name: value}))
    assert name in message
    assert _message(lambda: TaggerConfig(**{name: value})) == message
    assert _message(lambda: ragsieve.prune(QUESTION, ["A sentence."], **{name: value})) == message
    if name in ("threshold", "passage_threshold", "stack", "open_point", "hops"):
        assert _message(lambda: FullConfig(scorer="tagger", **{name: value})) == message


def test_http_limits_read_the_settings_bounds() -> None:
    tagger = SAFE["tagger"]
    assert (tagger["hops"].lo, tagger["hops"].hi) == (HOPS[0], HOPS[-1])
    assert tagger["min_keep"].lo == MIN_KEEP_MIN
    assert tagger["threshold"].hi == THRESHOLD_MAX == SAFE["full"]["threshold"].hi
    check_http_options("tagger", {"hops": HOPS[-1], "min_keep": MIN_KEEP_MIN})
    for method in ("tagger", "full"):
        with pytest.raises(ConfigError, match="option hops must be between 1 and 2"):
            check_http_options(method, {"hops": HOPS[-1] + 1})
        with pytest.raises(ConfigError, match="option threshold must be between"):
            check_http_options(method, {"threshold": THRESHOLD_MAX + 0.5})


def test_prune_takes_settings_whole_and_options_by_name() -> None:
    text = "Champollion announced the decipherment in 1822. Bees dance."
    q = "When was the decipherment announced?"
    given = ragsieve.prune(q, [text], settings=TaggerSettings(threshold=0.5, lead=False))
    named = ragsieve.prune(q, [text], threshold=0.5)
    assert [k.text for k in given] == [k.text for k in named]
    with pytest.raises(ConfigError, match="unknown option"):
        ragsieve.prune(q, [text], thresh=0.5)
    with pytest.raises(ConfigError, match="settings must be a TaggerSettings"):
        ragsieve.prune(q, [text], settings={"threshold": 0.5})


def test_the_pruner_and_the_cut_keep_by_one_rule() -> None:
    """The sentences prune keeps by its rule (no ``min_keep``, no carrying) are those
    :func:`keeps` keeps, and the feedback loop's cut at the same point keeps the same ones."""
    tagger = OnnxTagger()
    units = []
    for i, (title, sents) in enumerate(PASSAGES):
        text = " ".join(sents)
        chunk = Chunk(f"p{i}", f"d{i}", 0, text, 0, len(text), 0, len(sents), 0, title)
        units.append(chunk_sentences(chunk))
    passages = [(u[0].title, [c.text for c in u]) for u in units]
    pruned = prune(tagger, QUESTION, passages, bare(min_keep=0))
    th, pth = pruned.threshold, pruned.passage_threshold
    rule = {
        (p, s)
        for p, t in enumerate(pruned.tagged)
        for s, prob in enumerate(t.probs)
        if keeps(prob, t.relevance, th, pth)
    }
    assert rule and {(k.passage, k.sentence) for k in pruned.kept} == rule
    _, cands = tagged_selection(pruned, units, None)
    cut = TaggerCut(th, 0, None, None, "sentence", pth).select(QUESTION, cands)
    assert {c.chunk.id for c in cut.context.chunks} == {units[p][s].id for p, s in rule}
