"""The one parser and validator of method specs: ``NAME`` or ``NAME[key=value,...]``.

Every entry point (``ask``, ``search``, ``explain``, ``eval``, ``serve`` and the Python API)
builds its method here, so a spec that works in one works in all. A key must be a field of the
method's typed config (or one of its spellings, ``sage[n=20]`` for ``N``) and its value must
have that field's type; anything else is a one-line :class:`ConfigError` naming the valid keys.

Run-level options (``--k``, ``--budget``, ``--retriever``, ``--reranker``) fill the config
fields of the same name when the spec does not set them and the method has them; a method
without such a field ignores it (``full`` sizes its context by its cut, not by ``k``). ``None``
means "not given": the config's default (the paper's) applies.

A spec can also live in a TOML file (``--config FILE``), so a tuned setup is a file a user can
commit::

    [method]
    name = "full"
    unit = "passage"
    floor = 0.5
"""

from __future__ import annotations

import math
import re
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsieve.errors import ConfigError
from ragsieve.methods.base import Method, MethodDef
from ragsieve.methods.registry import METHODS, known_methods

if TYPE_CHECKING:
    from ragsieve.index import Index

#: Options every entry point may pass for any method (CLI flags, HTTP fields).
RUN_KEYS = ("k", "budget", "retriever", "reranker")

_SPEC = re.compile(r"^([A-Za-z0-9_\-]+)(?:\[(.*)\])?$")


@dataclass(frozen=True)
class MethodSpec:
    """A method name plus options; ``label`` is how it appears in reports."""

    label: str
    name: str
    options: dict[str, Any] = field(default_factory=dict)


def _coerce(value: str) -> Any:
    low = value.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets: ``a,b[x=1,y=2]`` -> ``a``, ``b[x=1,y=2]``."""
    parts: list[str] = []
    depth, cur = 0, ""
    for ch in text:
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def parse_spec(raw: str) -> MethodSpec:
    """One ``NAME[key=value,...]``; values are read as none, true/false, numbers or text."""
    raw = raw.strip()
    m = _SPEC.match(raw)
    if not m:
        raise ConfigError(f"bad method spec {raw!r}: use NAME or NAME[key=value,...]")
    opts: dict[str, Any] = {}
    for kv in (m.group(2) or "").split(","):
        if not kv.strip():
            continue
        if "=" not in kv:
            raise ConfigError(f"bad option {kv!r} in {raw!r}: use key=value")
        key, value = kv.split("=", 1)
        key = key.strip().replace("-", "_")
        if key in opts:
            raise ConfigError(f"option {key} is given twice in {raw!r}")
        opts[key] = _coerce(value.strip())
    return MethodSpec(raw, m.group(1), opts)


def parse_methods(text: str) -> list[MethodSpec]:
    """``naive,naive[retriever=bm25,k=5]`` -> specs: an ablation is one ``--methods`` argument."""
    specs = [parse_spec(p) for p in _split_top(text)]
    if not specs:
        raise ConfigError("no methods given")
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise ConfigError("a method is listed twice")
    return specs


def spec_from_toml(path: Path) -> MethodSpec:
    """The ``[method]`` table of a TOML file as a spec (``name`` plus config fields)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"--config {path}: {e.strerror or e}") from e
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"--config {path}: not valid TOML ({e})") from e
    table = data.get("method")
    if not isinstance(table, dict) or not isinstance(table.get("name"), str):
        raise ConfigError(f'--config {path}: needs a [method] table with name = "..."')
    opts = {k.replace("-", "_"): v for k, v in table.items() if k != "name"}
    inner = ",".join(f"{k}={v}" for k, v in opts.items())
    label = f"{table['name']}[{inner}]" if inner else table["name"]
    return MethodSpec(label, table["name"], opts)


def method_def(name: str) -> MethodDef:
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}: use one of {', '.join(known_methods())}")
    return METHODS[name]


def method_needs_sentences(name: str) -> bool:
    """Whether a method reads the index's sentence table (the harness then builds one)."""
    return name in METHODS and METHODS[name].needs_sentences


def _type_name(hint: Any) -> str:
    args = typing.get_args(hint) if _is_union(hint) else (hint,)
    names = [getattr(a, "__name__", str(a)) for a in args]
    return " or ".join("none" if n == "NoneType" else n for n in names)


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _convert(value: Any, hint: Any) -> tuple[bool, Any]:
    """``(ok, value)``: ``value`` as a field of type ``hint`` (an int for a float is fine; a
    bool is never a number; a spec's ``none`` is the text "none" where None is not allowed)."""
    allowed = typing.get_args(hint) if _is_union(hint) else (hint,)
    if value is None:
        if type(None) in allowed:
            return True, None
        return (True, "none") if str in allowed else (False, None)
    if isinstance(value, bool):
        return (True, value) if bool in allowed else (False, None)
    if isinstance(value, int) and abs(value) >= 2**63 and (int in allowed or float in allowed):
        return False, None  # no option counts that far (an int64 overflow further down)
    if isinstance(value, float) and not math.isfinite(value):
        return False, None
    if isinstance(value, int) and int in allowed:
        return True, value
    if isinstance(value, int | float) and float in allowed:
        return True, float(value)
    if isinstance(value, str) and str in allowed:
        return True, value
    if isinstance(value, int | float) and str in allowed:
        return True, str(value)
    return False, None


def as_spec(spec: str | MethodSpec) -> MethodSpec:
    return parse_spec(spec) if isinstance(spec, str) else spec


def canonical_options(defn: MethodDef, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` under the config's field names (``n`` -> ``N``, ``scorer`` -> ``reranker``)."""
    return {defn.aliases.get(k, k): v for k, v in options.items()}


def make_config(defn: MethodDef, options: Mapping[str, Any], run: Mapping[str, Any]) -> Any:
    """The method's typed config from spec ``options`` over ``run`` options over defaults."""
    hints = typing.get_type_hints(defn.config)
    valid = [f.name for f in fields(defn.config)]
    opts = canonical_options(defn, options)
    unknown = sorted(set(opts) - set(valid))
    if unknown:
        raise ConfigError(
            f"unknown option(s) {', '.join(unknown)} for {defn.name}: "
            f"valid keys are {', '.join(valid)}"
        )
    kwargs = {k: v for k, v in run.items() if k in hints and v is not None and k not in opts}
    for key, value in opts.items():
        ok, kwargs[key] = _convert(value, hints[key])
        if not ok:
            raise ConfigError(
                f"{defn.name}: {key} must be {_type_name(hints[key])}, got {value!r}; "
                f"valid keys are {', '.join(valid)}"
            )
    return defn.config(**kwargs)


def check_spec(spec: str | MethodSpec, **run: Any) -> MethodSpec:
    """Parse and validate without an index (fail before any work); returns the spec."""
    spec = as_spec(spec)
    make_config(method_def(spec.name), spec.options, run)
    return spec


def build_method(spec: str | MethodSpec, index: Index, **run: Any) -> Method:
    """The method of ``spec`` over ``index``; ``run`` holds :data:`RUN_KEYS` values."""
    spec = as_spec(spec)
    extra = sorted(set(run) - set(RUN_KEYS))
    if extra:
        raise ConfigError(f"unknown run option(s) {', '.join(extra)}: use {', '.join(RUN_KEYS)}")
    defn = method_def(spec.name)
    return defn.build(index, make_config(defn, spec.options, run))


def get_method(name: str, index: Index, **options: Any) -> Method:
    """``name`` with keyword options: :data:`RUN_KEYS` are run-level, the rest spec options."""
    run = {k: v for k, v in options.items() if k in RUN_KEYS}
    opts = {k: v for k, v in options.items() if k not in RUN_KEYS}
    return build_method(MethodSpec(name, name, opts), index, **run)
