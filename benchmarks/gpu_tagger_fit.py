"""Runs ``python -m ragsieve.tag.fit.train`` steps on a machine that has the repository but not
ragsieve's index dependencies (a lent GPU machine: torch, transformers, tokenizers and onnx,
no LanceDB). ``ragsieve/__init__`` imports the index, so the package is registered without
running it; ``ragsieve.tag.fit.train`` itself needs none of it.

    python3 benchmarks/gpu_tagger_fit.py fit --examples .gpu/examples.jsonl.xz \
        --device cuda --out OUT [--time-limit MIN] [--seed N] [--set KEY=VALUE ...]
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ragsieve"

spec = importlib.util.spec_from_file_location(
    "ragsieve", SRC / "__init__.py", submodule_search_locations=[str(SRC)]
)
assert spec is not None
sys.modules["ragsieve"] = importlib.util.module_from_spec(spec)

from ragsieve.tag.fit.args import run_main  # noqa: E402
from ragsieve.tag.fit.train import main  # noqa: E402

sys.exit(run_main(main, sys.argv[1:]))
