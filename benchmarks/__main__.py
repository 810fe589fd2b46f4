"""One entry point for the benchmarks (the bm25s layout: one folder, one runner).

    python -m benchmarks                 # list every benchmark with its first docstring line
    python -m benchmarks NAME [ARGS...]  # run benchmarks/NAME.py's main() with ARGS

Benchmarks are found by file, so a new ``benchmarks/X.py`` (or ``benchmarks/DIR/X.py``, named
``DIR/X``) with a top-level ``main()`` is listed and runnable without registering it. Modules
run with ``benchmarks/`` first on ``sys.path``, exactly as ``python benchmarks/NAME.py`` runs
them, so their sibling imports (``from common import ...``) work both ways.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Modules that are shared code, not benchmarks.
NOT_BENCHMARKS = {"common", "__init__", "__main__"}


def benchmarks() -> dict[str, str]:
    """name -> first line of the module docstring, for every module with a top-level main()."""
    found: dict[str, str] = {}
    for path in sorted(HERE.rglob("*.py")):
        rel = path.relative_to(HERE).with_suffix("")
        if rel.name in NOT_BENCHMARKS or "results" in rel.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue  # a file another helper is still writing: not listed, never fatal
        if any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body):
            doc = (ast.get_docstring(tree) or "").strip()
            found[rel.as_posix()] = doc.splitlines()[0] if doc else ""
    return found


def main(argv: list[str] | None = None) -> int:
    """List the benchmarks, or run one with the remaining arguments."""
    args = list(sys.argv[1:] if argv is None else argv)
    found = benchmarks()
    if not args or args[0] in ("-h", "--help", "--list"):
        print(__doc__.strip().splitlines()[0], end="\n\n")
        print("usage: python -m benchmarks NAME [ARGS...]  (NAME --help for its options)\n")
        width = max(map(len, found), default=0)
        for name, line in found.items():
            print(f"  {name:<{width}}  {line}")
        return 0
    name = args[0].removesuffix(".py").removeprefix("benchmarks/")
    if name not in found:
        print(f"error: no benchmark {args[0]!r} (python -m benchmarks lists them)", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE))
    sys.argv = [str(HERE / f"{name}.py"), *args[1:]]
    module = importlib.import_module(name.replace("/", "."))
    code = module.main()
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
