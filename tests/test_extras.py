"""A command whose extra is missing names it: one line, exit 2, before any work.

The libraries of an extra are hidden from a fresh interpreter the way Python marks a module
that is absent (``sys.modules[name] = None``: ``import`` raises ModuleNotFoundError and
``importlib.util.find_spec`` answers None), then the real ``ragsieve`` entry point runs.
``tests/test_wheel.py`` checks the same on a real install without the extras.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error

from ragsieve.errors import (
    EXTRA_OF_MODULE,
    MissingExtraError,
    missing_extra,
    require_extra,
)

CORPUS = Path(__file__).resolve().parent.parent / "examples" / "corpus"


def _without(modules: tuple[str, ...], *args: str) -> subprocess.CompletedProcess[str]:
    """``ragsieve ARGS`` in a fresh interpreter where ``modules`` are not installed."""
    code = (
        "import sys\n"
        f"for m in {modules!r}:\n"
        "    sys.modules[m] = None\n"
        f"sys.argv = ['ragsieve', *{list(args)!r}]\n"
        "from ragsieve.cli import main\n"
        "main()\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def _extra(extra: str) -> tuple[str, ...]:
    return tuple(m for m, e in EXTRA_OF_MODULE.items() if e == extra)


def test_a_missing_module_names_the_extra_that_brings_it() -> None:
    err = missing_extra(ModuleNotFoundError("No module named 'torch.nn'", name="torch.nn"), "x")
    assert isinstance(err, MissingExtraError) and isinstance(err, ImportError)
    assert str(err) == "x needs torch: pip install 'ragsieve[train]'"
    assert err.exit_code == 2
    nltk = missing_extra(ModuleNotFoundError(name="nltk"), "ragsieve eval")
    assert nltk is not None and "pip install 'ragsieve[eval]'" in str(nltk)
    assert missing_extra(ModuleNotFoundError(name="no_such_module_here"), "x") is None


def test_require_extra_passes_where_the_extra_is_installed_and_names_it_where_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_extra("train", "ragsieve train-reranker")  # the dev venv has every extra
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(MissingExtraError, match=r"train-fusion needs sklearn: .*\[train\]"):
        require_extra("train", "ragsieve train-fusion")


@pytest.mark.integration
@pytest.mark.parametrize(
    "command", ["train-reranker", "train-tagger", "train-segmenter", "train-agent", "train-fusion"]
)
def test_a_train_command_without_the_train_extra(tmp_path: Path, command: str) -> None:
    p = _without(_extra("train"), command, "--out", str(tmp_path / "model"))
    line = assert_one_line_error(p, 2, "pip install 'ragsieve[train]'")
    assert f"ragsieve {command} needs" in line
    assert not (tmp_path / "model").exists()  # stopped before any work


@pytest.mark.integration
def test_eval_without_the_eval_extra(tmp_path: Path) -> None:
    p = _without(_extra("eval"), "eval", "--out", str(tmp_path / "out"))
    assert_one_line_error(p, 2, "ragsieve eval needs rouge_score: pip install 'ragsieve[eval]'")


@pytest.mark.integration
def test_explain_plot_without_matplotlib_names_eval(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    built = _without((), "index", str(CORPUS), "--index", str(idx))
    assert built.returncode == 0, built.stderr[-2000:]
    plot = tmp_path / "why.png"
    q = "Who decoded the honey bee waggle dance?"
    p = _without(("matplotlib",), "explain", q, "--index", str(idx), "--plot", str(plot))
    assert_one_line_error(p, 2, "ragsieve explain needs matplotlib: pip install 'ragsieve[eval]'")
    assert not plot.exists()
