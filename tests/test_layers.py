"""The package's import graph: no cycles, and no import from a lower floor to a higher one.

Two checks, because each misses what the other finds: a fresh interpreter importing every
module in alphabetical order fails on a cycle that breaks at import time, and the static graph
(every ``import`` in a module, including those inside functions, and every module loaded by
name) finds the cycles and upward imports that lazy imports hide until a code path runs. The
cycle check reads what runs (not ``TYPE_CHECKING`` imports); the floor check reads those too,
since a type named from a higher floor ties a lower one to its concept all the same.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import ragsieve

SRC = Path(ragsieve.__file__).resolve().parent

#: Floors from the ground up: a module imports only its own floor and those below. Entry
#: points (``ragsieve/__init__``, the ``cli`` package, ``serve`` and ``integrations``) are the
#: top floor.
FLOORS: list[set[str]] = [
    {"errors", "types", "data", "checks", "defaults", "numeric"},
    {"text", "io", "jsonl", "metrics", "formats", "webpage", "progress", "titles"},
    {"embed", "llm", "training"},
    {"link", "segment", "rerank"},
    {"index", "select", "retrieve", "tag"},
    {"agent"},
    {"methods"},
    {"api", "pool", "explain", "evaluate"},
    {"serve", "cli", "compare", "integrations", "__init__"},
]


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(SRC.rglob("*.py")):
        parts = p.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


#: Calls that load a module by its name: a module that makes one loads every ragsieve module it
#: names in a string literal (``importlib.import_module("ragsieve.x")``, a name -> module map
#: such as ``ragsieve._LAZY``, a tuple of modules looped over).
LOADERS = {"import_module", "__import__"}


def _loads_by_name(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in LOADERS:
                return True
    return False


def _imports(path: Path, known: set[str], typing: bool = False) -> set[str]:
    """ragsieve modules imported anywhere in ``path`` (under ``if TYPE_CHECKING`` only with
    ``typing``), and, in a module that loads modules by name, every ragsieve module a string
    literal names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if not typing and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    by_name = _loads_by_name(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif by_name and isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        found.update(n for n in names if n in known)
    return found


def _graph(typing: bool = False) -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(p, known, typing) - {m} for m, p in mods.items()}


def _floor(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return len(FLOORS) - 1  # ragsieve/__init__.py
    for i, names in enumerate(FLOORS):
        if parts[1] in names:
            return i
    raise AssertionError(f"{module} is on no floor: add its package to FLOORS")


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return [*stack[stack.index(n) :], n]
            if n not in state and (found := visit(n)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_static_import_graph_has_no_cycle() -> None:
    assert _cycle(_graph()) is None, " -> ".join(_cycle(_graph()) or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_loads_by_name_and_type_only_imports_are_seen(tmp_path: Path) -> None:
    known = {"ragsieve.api", "ragsieve.index", "ragsieve.serve"}
    lazy = tmp_path / "lazy.py"
    lazy.write_text(
        "import importlib\n"
        "_LAZY = {'ask': 'ragsieve.api'}\n"
        "def load(name):\n"
        "    return importlib.import_module(_LAZY[name])\n",
        encoding="utf-8",
    )
    assert _imports(lazy, known) == {"ragsieve.api"}
    # A module's name in a string is no import where nothing loads by name (a logger's name).
    named = tmp_path / "named.py"
    named.write_text("import logging\nlog = logging.getLogger('ragsieve.serve')\n", "utf-8")
    assert _imports(named, known) == set()
    typed = tmp_path / "typed.py"
    typed.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ragsieve.index import X\n",
        encoding="utf-8",
    )
    assert _imports(typed, known) == set()
    assert _imports(typed, known, typing=True) == {"ragsieve.index"}


def test_no_module_imports_a_higher_floor() -> None:
    upward = [
        f"{m} (floor {_floor(m)}) imports {n} (floor {_floor(n)})"
        for m, targets in sorted(_graph(typing=True).items())
        for n in sorted(targets)
        if _floor(n) > _floor(m)
    ]
    assert upward == []


def test_every_module_imports_in_a_fresh_interpreter_in_alphabetical_order() -> None:
    names = sorted(_modules())
    # An integration whose framework is not installed says so (MissingExtra, an ImportError
    # naming the extra); every other module must import.
    code = (
        "import importlib, sys\n"
        "for n in sys.argv[1:]:\n"
        "    try:\n"
        "        importlib.import_module(n)\n"
        "    except ImportError as e:\n"
        "        if not (n.startswith('ragsieve.integrations.') and 'pip install' in str(e)):\n"
        "            raise\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
