"""Answering a question never loads torch: every registered method selects its context, in a
fresh interpreter, on the int8 ONNX models alone (torch is for training only), and loads none
of the other libraries the core install leaves to the ``[train]`` and ``[eval]`` extras."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import probe_json

pytestmark = pytest.mark.integration


def test_every_method_selects_without_importing_torch(sentence_index_dir: Path) -> None:
    probe = (
        "import json, sys\n"
        "from ragsieve.index import Index\n"
        "from ragsieve.methods import build_method, known_methods\n"
        f"index = Index.open({str(sentence_index_dir)!r})\n"
        "q = 'When did Champollion announce the decipherment of the hieroglyphs?'\n"
        "picked = {}\n"
        "for name in known_methods():\n"
        "    r = build_method(name, index, budget=300).retrieve([q])[0]\n"
        "    picked[name] = len(r.context.chunks)\n"
        "opt_in = {}\n"
        "for spec in ('carrot[combination_cosine=pooled]', 'carrot[combination_cosine=int8]'):\n"
        "    r = build_method(spec, index, budget=300).retrieve([q])[0]\n"
        "    opt_in[spec] = len(r.context.chunks)\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers', 'scipy', 'sklearn',\n"
        "         'sympy', 'matplotlib')\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "print(json.dumps({'picked': picked, 'opt_in': opt_in, 'loaded': loaded}))\n"
    )
    result = probe_json(probe, timeout=600)
    from ragsieve.methods import known_methods

    assert sorted(result["picked"]) == known_methods()
    assert all(n >= 1 for n in result["picked"].values()), result["picked"]
    assert result["opt_in"]["carrot[combination_cosine=pooled]"] >= 1
    assert result["opt_in"]["carrot[combination_cosine=int8]"] >= 1
    assert result["loaded"] == []
