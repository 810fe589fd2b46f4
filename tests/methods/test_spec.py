"""The one method-spec grammar, driven through every entry point: the parser and validator,
the Python API, the CLI (``search --method``, ``ask``, ``--config``) and HTTP (/search, /ask).
Every method is built from a spec over a real sentence index, and ``--budget`` is a hard
ceiling on the context exactly as the LLM reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import ask_json, run

from ragsieve.errors import ConfigError
from ragsieve.index import Index
from ragsieve.methods import (
    METHODS,
    build_method,
    check_spec,
    known_methods,
    parse_methods,
    parse_spec,
    spec_from_toml,
)
from ragsieve.methods.spec import make_config, method_def
from ragsieve.text import count_tokens

QUESTIONS = [
    "In which year did Champollion announce the decipherment of hieroglyphs?",
    "How do honey bees tell the hive where flowers are?",
    "What does a Fresnel lens do in a lighthouse?",
]


def test_every_registered_method_has_a_spec_here(method_specs: dict[str, str]) -> None:
    assert sorted(method_specs) == known_methods() == sorted(METHODS)


@pytest.mark.parametrize("name", known_methods())
def test_each_spec_becomes_its_typed_config(name: str, method_specs: dict[str, str]) -> None:
    spec = parse_spec(method_specs[name])
    cfg = make_config(method_def(name), spec.options, {"k": 10, "budget": 300})
    assert isinstance(cfg, METHODS[name].config)
    for key, value in spec.options.items():
        field = METHODS[name].aliases.get(key, key)
        got = getattr(cfg, field)
        assert got == ("none" if value is None else value), (field, got)
    assert cfg.budget == 300  # the run's budget fills the field the spec left unset


def test_unknown_keys_and_wrong_types_are_one_line_errors_naming_the_valid_keys() -> None:
    with pytest.raises(ConfigError, match=r"unknown option\(s\) flor for full: valid keys are N, "):
        check_spec("full[flor=0.5]")
    with pytest.raises(ConfigError, match=r"sage: min_k must be int or none, got True; valid keys"):
        check_spec("sage[min_k=true]")
    with pytest.raises(ConfigError, match=r"naive: k must be int, got 2.5"):
        check_spec("naive[k=2.5]")
    with pytest.raises(ConfigError, match=r"unknown option\(s\) k for full"):
        check_spec("full[k=3]")  # full sizes its context by the cut: say so, do not ignore it
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        check_spec("nope")
    with pytest.raises(ConfigError, match="bad method spec"):
        parse_spec("full[unit=passage")
    for msg in ("full[flor=0.5]", "sage[min_k=true]"):
        with pytest.raises(ConfigError) as e:
            check_spec(msg)
        assert "\n" not in str(e.value)


def test_spec_options_win_over_run_options_and_none_means_not_given() -> None:
    full = make_config(method_def("full"), parse_spec("full").options, {"retriever": None})
    assert full.retriever == "hybrid"  # the method's own default
    dense = make_config(method_def("full"), {}, {"retriever": "dense"})
    assert dense.retriever == "dense"  # asked for, so given (it used to turn into hybrid)
    naive = make_config(method_def("naive"), {"k": 3}, {"k": 10, "budget": None})
    assert (naive.k, naive.budget) == (3, None)
    carrot = make_config(method_def("carrot"), {}, {"budget": None})
    assert carrot.budget == 1024  # CARROT's paper budget when the run sets none


def test_parse_methods_splits_on_top_level_commas_only() -> None:
    specs = parse_methods("naive, full[unit=passage,floor=0.5],sage[min_k=2]")
    assert [s.name for s in specs] == ["naive", "full", "sage"]
    assert specs[1].options == {"unit": "passage", "floor": 0.5}
    with pytest.raises(ConfigError, match="listed twice"):
        parse_methods("naive,naive")


def test_a_toml_config_is_a_spec(tmp_path: Path) -> None:
    f = tmp_path / "tuned.toml"
    f.write_text('[method]\nname = "full"\nunit = "passage"\nfloor = 0.5\nbudget = 450\n')
    spec = spec_from_toml(f)
    assert (spec.name, spec.options) == ("full", {"unit": "passage", "floor": 0.5, "budget": 450})
    assert check_spec(spec) is spec
    bad = tmp_path / "bad.toml"
    bad.write_text("[method]\nunit = 'passage'\n")
    with pytest.raises(ConfigError, match=r"needs a \[method\] table with name"):
        spec_from_toml(bad)
    bad.write_text("[method\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        spec_from_toml(bad)


@pytest.mark.integration
@pytest.mark.parametrize("name", known_methods())
def test_every_method_builds_from_its_spec_and_the_budget_is_a_hard_ceiling(
    name: str, sentence_index_dir: Path, method_specs: dict[str, str]
) -> None:
    idx = Index.open(sentence_index_dir)
    budget = 90
    method = build_method(method_specs[name], idx, k=10, budget=budget)
    found = method.retrieve(QUESTIONS)
    assert any(r.context.chunks for r in found), name
    for r in found:
        text = "\n\n".join(s.chunk.text for s in r.context.chunks)
        assert count_tokens(text) <= budget, (name, r.question, count_tokens(text))
        assert r.trace["method"] == name


@pytest.mark.integration
def test_cli_search_and_ask_take_the_same_specs(
    sentence_index_dir: Path, tmp_path: Path, method_specs: dict[str, str]
) -> None:
    for name, spec in method_specs.items():
        p = run(
            "search",
            QUESTIONS[0],
            "--index",
            str(sentence_index_dir),
            "--method",
            spec,
            "--budget",
            "120",
            "--json",
        )
        assert p.returncode == 0, (name, p.stderr)
        out = json.loads(p.stdout)
        assert out["method"] == spec and out["trace"]["method"] == name and out["results"]
    cfg = tmp_path / "m.toml"
    cfg.write_text('[method]\nname = "pareto"\nk = 2\n')
    p = run(
        "search", QUESTIONS[0], "--index", str(sentence_index_dir), "--config", str(cfg), "--json"
    )
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)["results"]) == 2
    # a bad key fails before any model loads: exit 2, one line naming the valid keys
    p = run("ask", QUESTIONS[0], "--index", str(sentence_index_dir), "--method", "naive[kk=2]")
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0
    assert "valid keys are k, budget, retriever, reranker, candidates" in p.stderr


@pytest.mark.integration
def test_cli_ask_with_a_full_spec_and_the_local_llm(sentence_index_dir: Path) -> None:
    out = ask_json(QUESTIONS[0], sentence_index_dir, "--method", "full[unit=passage,floor=0.5]")
    assert out["method"] == "full" and out["context"]
    assert out["trace"]["config"]["unit"] == "passage"
    assert out["trace"]["config"]["floor"] == 0.5
