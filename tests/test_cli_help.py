"""Every command's help shows what its source says: spec examples such as ``full[unit=passage]``
and a ``[method]`` table are not eaten as markup; ``-h`` and ``--version`` work."""

from __future__ import annotations

import re

import typer
from cli_helpers import run
from typer.testing import CliRunner

from ragsieve.cli import app

# Bracketed words without spaces in the help strings: spec examples and TOML tables.
_BRACKETED = re.compile(r"\S*\[[^\]\s]+\]\S*")


def _commands() -> dict[str, object]:
    return typer.main.get_command(app).commands  # type: ignore[attr-defined]


def test_every_help_shows_its_bracketed_examples() -> None:
    runner = CliRunner()
    commands = _commands()
    assert {"ask", "search", "index", "serve", "train-segmenter", "prune"} <= set(commands)
    checked = 0
    for name, cmd in commands.items():
        res = runner.invoke(app, [name, "--help"])
        assert res.exit_code == 0, (name, res.output)
        shown = " ".join(res.output.split())
        texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]
        for text in texts:
            for token in _BRACKETED.findall(" ".join(text.split())):
                assert token.strip(".,;:") in shown, (name, token, shown)
                checked += 1
    assert checked >= 5  # ask's spec examples, --config's [method] table, ...


def test_ask_help_lists_tagger_and_the_spec_example() -> None:
    out = " ".join(CliRunner().invoke(app, ["ask", "-h"]).output.split())
    assert "'full[unit=passage]'" in out and "tagger" in out
    assert "A TOML file whose [method] table is" in out


def test_version_and_short_help_from_the_real_command() -> None:
    p = run("--version")
    assert p.returncode == 0 and re.fullmatch(r"ragsieve \S+\n", p.stdout), p.stdout
    p = run("-h")
    assert p.returncode == 0 and "--version" in p.stdout and "ask" in p.stdout


def test_every_help_names_the_one_default_method_and_every_format() -> None:
    """``ask``, ``search``, ``explain`` and ``serve`` name the default method from its one
    constant; ``index``, ``prune`` and ``segment`` name every file type the readers take."""
    from ragsieve.defaults import DEFAULT_METHOD
    from ragsieve.io import SUPPORTED
    from ragsieve.methods import DEFAULT_METHOD as REGISTRY_DEFAULT
    from ragsieve.methods import METHODS

    assert REGISTRY_DEFAULT == DEFAULT_METHOD and DEFAULT_METHOD in METHODS
    assert {".pdf", ".html", ".htm", ".docx", ".jsonl", ".txt", ".md"} <= SUPPORTED
    runner = CliRunner()

    def shown(*args: str) -> str:
        res = runner.invoke(app, [*args, "-h"])
        assert res.exit_code == 0, res.output
        return " ".join(res.output.split())

    for name in ("ask", "explain"):
        assert f"(default {DEFAULT_METHOD}" in shown(name), name
    assert f"the default of ask and explain: {DEFAULT_METHOD}" in shown("search")
    assert f"(default: {DEFAULT_METHOD})" in shown("serve")
    assert "default sage" not in shown("explain")
    for name in ("index", "prune", "segment"):
        out = shown(name)
        assert all(suffix in out for suffix in SUPPORTED), (name, out)
