"""``ragsieve.methods.models``: the models a method's resolved config would load, defaults
included, so the server's allow-list and ``serve --config``'s file check ask one function."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from ragsieve.errors import ConfigError
from ragsieve.methods.models import (
    AGENT,
    LLM,
    MODEL_FIELDS,
    PLAIN_TEXT_FIELDS,
    RERANKER,
    TAGGER,
    check_files,
    spec_models,
)
from ragsieve.methods.registry import METHODS


def _names_text(hint: object) -> bool:
    args = typing.get_args(hint) or (hint,)
    return str in args


def test_every_text_or_model_field_is_classified() -> None:
    """A config field that can hold a name is either a model field or declared plain: a new one
    fails here until :func:`models_of` reads it (or it is declared to name no model)."""
    assert set(MODEL_FIELDS) == set(METHODS)
    for name, defn in METHODS.items():
        hints = typing.get_type_hints(defn.config)
        for f in dataclasses.fields(defn.config):
            if _names_text(hints[f.name]):
                assert f.name in MODEL_FIELDS[name] or f.name in PLAIN_TEXT_FIELDS, (name, f.name)
        for f in MODEL_FIELDS[name]:
            assert f in hints, (name, f)


@pytest.mark.parametrize(
    ("spec", "run", "expected"),
    [
        ("naive", {}, []),
        ("naive", {"reranker": "bm25"}, [(RERANKER, "bm25", "reranker", False)]),
        ("sage", {}, [(RERANKER, "ensemble", "reranker", True)]),
        ("sage[reranker=bm25]", {}, [(RERANKER, "bm25", "reranker", False)]),
        ("carrot", {}, [(RERANKER, "ensemble", "reranker", True)]),
        (
            "carrot[agent=true]",
            {},
            [(AGENT, "agent", "agent", False)]
            + [(RERANKER, s, "reranker", False) for s in ("ensemble", "cross-encoder")]
            + [(RERANKER, s, "reranker", False) for s in ("bi-encoder", "bm25")],
        ),
        (
            "saki",
            {},
            [
                (RERANKER, "cross-encoder", "reranker", True),
                (RERANKER, "cross-encoder", "judge", True),
            ],
        ),
        ("saki[judge=none,reranker=bm25]", {}, [(RERANKER, "bm25", "reranker", False)]),
        (
            "saki[judge=llm,reranker=bm25]",
            {},
            [(RERANKER, "bm25", "reranker", False), (LLM, "local", "judge", False)],
        ),
        ("pareto", {"reranker": "ensemble"}, []),
        ("full[scorer=reranker]", {}, [(RERANKER, "ensemble", "reranker", True)]),
        ("full[scorer=bm25]", {}, [(RERANKER, "bm25", "scorer", False)]),
        ("full[scorer=tagger]", {}, [(TAGGER, "tagger", "scorer", False)]),
        ("tagger", {"reranker": "ensemble"}, [(TAGGER, "tagger", "", False)]),
        ("tagger[model=/x]", {}, [(TAGGER, "/x", "model", False)]),
    ],
)
def test_models_of_the_resolved_config(
    spec: str, run: dict[str, str], expected: list[tuple[str, str, str, bool]]
) -> None:
    _, uses = spec_models(spec, run)
    assert [(u.kind, u.name, u.option, u.default) for u in uses] == expected


def test_the_defaults_are_named_in_the_description() -> None:
    spec, uses = spec_models("sage")
    assert uses[0].describe(spec.label) == "method sage uses reranker=ensemble by default"
    spec, uses = spec_models("saki[judge=llm]", llm="openai:m@http://h/v1")
    assert uses[-1].name == "openai:m@http://h/v1"  # the lent LLM, not one of its own
    assert uses[-1].describe(spec.label) == "method saki[judge=llm] uses judge=llm (an LLM)"


def test_check_files(tmp_path: Path) -> None:
    for spec in ("tagger", "full", "sage", "saki", "carrot[agent=true]", "naive[reranker=bm25]"):
        check_files(spec_models(spec)[1], spec)  # the shipped models are all there
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "model.onnx").write_bytes(b"x")
    for spec, missing in (
        (f"tagger[model={tmp_path}/half]", f"{tmp_path}/half/tokenizer.json"),
        (f"full[tagger_model={tmp_path}/no]", f"{tmp_path}/no/model.onnx"),
        (f"carrot[agent=true,agent_dir={tmp_path}]", f"{tmp_path}/agent.npz"),
        (f"naive[reranker=cross-encoder-fp32:{tmp_path}]", f"{tmp_path}/model_fp32.onnx"),
        (f"saki[judge=llm,llm=local:{tmp_path}/m.gguf]", f"{tmp_path}/m.gguf"),
    ):
        with pytest.raises(ConfigError) as err:
            check_files(spec_models(spec)[1], spec)
        msg = str(err.value)
        assert f"its file {missing} is missing" in msg and "\n" not in msg, msg
