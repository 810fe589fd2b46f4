"""The models a method would load, read from its resolved config (defaults applied), and the
files they are read from.

A method spec names models through options (``reranker=``, ``scorer=``, ``judge=``,
``tagger[model=DIR]``, ``carrot[agent_dir=DIR]``, ``saki[llm=SPEC]``) and, more often, through
their *defaults* (``sage`` reranks with the ensemble, ``saki`` judges with the cross-encoder,
``full`` reads with the shipped tagger). :func:`models_of` lists them from the config the method
would be built with, so a caller that must bound what a request may load (``ragsieve serve``'s
allow-list) or check files before it starts (``serve --config``) asks one function, and a new
config field cannot slip past: :data:`MODEL_FIELDS` and :data:`PLAIN_TEXT_FIELDS` together
classify every text field of every method's config (a test fails on an unclassified one).

Not listed, because no method config chooses them: the index's embedder (fixed by the index and
loaded when it is opened), the sentence links (stored in the index) and the LLM that answers
(passed to :meth:`Method.answer` by the caller; SAGE's feedback uses that one).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsieve.errors import ConfigError
from ragsieve.methods.spec import (
    RUN_KEYS,
    MethodSpec,
    as_spec,
    build_method,
    canonical_options,
    make_config,
    method_def,
)

if TYPE_CHECKING:
    from ragsieve.index import Index
    from ragsieve.methods.base import Method

RERANKER = "reranker"
TAGGER = "tagger"
AGENT = "agent"
LLM = "llm"

#: Per method: the config fields whose value or default decides which models it loads.
MODEL_FIELDS: dict[str, tuple[str, ...]] = {
    "naive": ("reranker",),
    "sage": ("reranker",),
    "carrot": ("reranker", "agent", "agent_dir"),
    "saki": ("reranker", "judge", "llm"),
    "pareto": (),
    "full": ("scorer", "reranker", "tagger_model"),
    "tagger": ("model",),
}
#: Text fields that choose a stage's behaviour, never a model.
PLAIN_TEXT_FIELDS = frozenset(
    {
        "retriever",
        "selection",
        "feedback_step",
        "search",
        "combination_cosine",
        "context",
        "unit",
        "order",
        "source",
        "span_link",
        "widen",
    }
)


@dataclass(frozen=True)
class ModelUse:
    """One model a method would load: its ``kind`` (:data:`RERANKER`, :data:`TAGGER`,
    :data:`AGENT`, :data:`LLM`) and ``name`` (a reranker name, ``tagger`` / ``agent`` for the
    shipped ones or their folder, an LLM spec); the config ``option`` that decides it (``""``:
    the method itself), as ``value``, and whether that option was left to its ``default``;
    ``files``: what it is read from (:func:`check_files`); ``note``: set where the method *may*
    load it (CARROT's agent picks a scorer per question)."""

    kind: str
    name: str
    option: str
    value: str
    default: bool
    files: tuple[Path, ...] = ()
    note: str = ""

    def describe(self, method: str) -> str:
        """``method sage uses reranker=ensemble by default``, for one-line errors."""
        what = f"{self.option}={self.value}" if self.option else self.name
        text = f"method {method} {'may use' if self.note else 'uses'} {what}"
        if self.kind == LLM:
            text += " (an LLM)"
        elif self.option and self.value != self.name:
            shipped = self.name == self.kind  # the shipped tagger or agent
            text += f" (the shipped {self.kind})" if shipped else f" ({self.kind} {self.name})"
        if self.default and self.option:
            text += " by default"
        return text + (f" ({self.note})" if self.note else "")


def _path(text: str) -> Path:
    """``text`` as a path, ``~`` expanded where it can be (``~nosuchuser`` stays as written:
    then no such file, which the check reports)."""
    try:
        return Path(text).expanduser()
    except RuntimeError:  # Path.expanduser: no such user
        return Path(text)


def _reranker_files(name: str) -> tuple[Path, ...]:
    from ragsieve.embed.onnx import model_files
    from ragsieve.rerank.cross_encoder import shipped_model_dir

    if name in ("ensemble", "fusion", "cross-encoder", "crossencoder"):
        return model_files(shipped_model_dir())
    for prefix, variant in (("cross-encoder:", "int8"), ("cross-encoder-fp32:", "fp32")):
        if name.startswith(prefix):
            return model_files(_path(name[len(prefix) :]), variant)
    if name.startswith(("/", "./", "../", "~")):  # a sentence-transformers folder by path
        return (_path(name),)
    return ()  # bi-encoder, bm25 (nothing to read), ORG/NAME (the hub: nothing local)


def _reranker(
    name: str, option: str, default: bool, value: str | None = None, note: str = ""
) -> ModelUse:
    files = _reranker_files(name)
    return ModelUse(RERANKER, name, option, name if value is None else value, default, files, note)


def _tagger(folder: str | None, option: str, value: str, default: bool) -> ModelUse:
    from ragsieve.embed.onnx import model_files
    from ragsieve.tag.model import shipped_model_dir

    files = model_files(shipped_model_dir() if folder is None else _path(folder))
    return ModelUse(TAGGER, "tagger" if folder is None else folder, option, value, default, files)


def _llm_files(spec: str) -> tuple[Path, ...]:
    return (_path(spec[len("local:") :].strip()),) if spec.startswith("local:") else ()


def _carrot(c: Any, given: Mapping[str, Any]) -> list[ModelUse]:
    from ragsieve.agent.model import META_FILE, SCORERS, WEIGHTS_FILE, shipped_agent_dir
    from ragsieve.rerank.base import DEFAULT_RERANKER

    out: list[ModelUse] = []
    if c.agent:
        if c.agent_dir is None:
            d, use = shipped_agent_dir(), ("agent", "agent", "true")
        else:
            d, use = _path(c.agent_dir), (c.agent_dir, "agent_dir", c.agent_dir)
        out.append(ModelUse(AGENT, *use, False, (d / WEIGHTS_FILE, d / META_FILE)))
    if c.reranker is not None:
        out.append(_reranker(c.reranker, "reranker", "reranker" not in given))
    elif c.agent:
        note = f"agent=true picks one of {', '.join(SCORERS)} per question"
        out += [_reranker(s, "reranker", False, note=note) for s in SCORERS]
    else:
        out.append(_reranker(DEFAULT_RERANKER, "reranker", True))
    return out


def models_of(
    method: str, config: Any, given: Mapping[str, Any] | None = None, llm: str | None = None
) -> list[ModelUse]:
    """The models ``method`` built from ``config`` (its resolved, typed config) would load.
    ``given``: the options the spec or the run set, by field name (the others count as
    defaults); ``llm``: the LLM spec a judge is lent instead of building its own (None: the
    config's ``llm``)."""
    g = dict(given or {})
    c = config
    if method in ("naive", "sage"):
        return [_reranker(c.reranker, "reranker", "reranker" not in g)] if c.reranker else []
    if method == "carrot":
        return _carrot(c, g)
    if method == "saki":
        out = [_reranker(c.reranker, "reranker", "reranker" not in g)]
        if c.judge == "cross-encoder":
            out.append(_reranker("cross-encoder", "judge", "judge" not in g))
        elif c.judge == "llm":
            spec = llm if llm is not None else c.llm
            out.append(ModelUse(LLM, spec, "judge", "llm", "judge" not in g, _llm_files(spec)))
        return out
    if method == "full":
        if c.scorer == "tagger":
            if c.tagger_model is not None:
                return [_tagger(c.tagger_model, "tagger_model", c.tagger_model, False)]
            return [_tagger(None, "scorer", "tagger", "scorer" not in g)]
        if "reranker" in g or g.get("scorer") in (None, "reranker"):
            return [_reranker(c.reranker, "reranker", "reranker" not in g)]
        return [_reranker(c.reranker, "scorer", False)]  # scorer=NAME: that reranker
    if method == "tagger":
        if c.model is not None:
            return [_tagger(c.model, "model", c.model, False)]
        return [_tagger(None, "", "tagger", False)]
    return []  # pareto: the index's own vectors only


def spec_models(
    spec: str | MethodSpec, run: Mapping[str, Any] | None = None, llm: str | None = None
) -> tuple[MethodSpec, list[ModelUse]]:
    """The spec (parsed) and :func:`models_of` its resolved config, with ``run`` options
    (``k``, ``budget``, ``retriever``, ``reranker``) filling the fields the spec leaves."""
    spec = as_spec(spec)
    run = dict(run or {})
    defn = method_def(spec.name)
    config = make_config(defn, spec.options, run)
    names = {f.name for f in fields(defn.config)}
    given = {k: v for k, v in run.items() if v is not None and k in names}
    given.update(canonical_options(defn, spec.options))
    return spec, models_of(spec.name, config, given, llm)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long, a NUL byte: no such file either way
        return False


_FIX = {
    RERANKER: "fix the path, or make one with `ragsieve train-reranker --out DIR`",
    TAGGER: "fix the path, or make one with `ragsieve train-tagger --out DIR`",
    AGENT: "fix the path, or make one with `ragsieve train-agent --out DIR`",
    LLM: "fix the path to the GGUF file",
}


def check_files(uses: Iterable[ModelUse], method: str) -> None:
    """A one-line :class:`ConfigError` for the first model file of ``uses`` that is missing,
    so a server refuses to start instead of failing every request after."""
    for u in uses:
        for f in u.files:
            if not _exists(f):
                shown = os.fsdecode(f)[:200].encode("unicode_escape").decode("ascii")
                raise ConfigError(
                    f"{u.describe(method)}, but its file {shown} is missing: {_FIX[u.kind]}"
                )


def build_lending(
    spec: str | MethodSpec, index: Index, llm: Any | None = None, **run: Any
) -> Method:
    """:func:`~ragsieve.methods.spec.build_method`, except that a method which would build an
    LLM of its own (SAKI's ``judge=llm``) is lent ``llm`` instead: a server builds none per
    request."""
    spec = as_spec(spec)
    defn = method_def(spec.name)
    if llm is None or "llm" not in inspect.signature(defn.build).parameters:
        return build_method(spec, index, **run)
    extra = sorted(set(run) - set(RUN_KEYS))
    if extra:
        raise ConfigError(f"unknown run option(s) {', '.join(extra)}: use {', '.join(RUN_KEYS)}")
    build: Any = defn.build
    method: Method = build(index, make_config(defn, spec.options, run), llm=llm)
    return method
