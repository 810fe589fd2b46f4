"""The integrations import their frameworks only when imported themselves, and say what to
install when a framework is missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

FRAMEWORKS = ("langchain_core", "langchain_classic", "llama_index", "haystack")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_ragsieve_imports_no_framework() -> None:
    code = (
        "import sys, ragsieve, ragsieve.pool, ragsieve.integrations\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r})\n"
        "assert not bad, bad\n"
    )
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-1500:]


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("langchain", "langchain_core", "langchain"),
        ("llamaindex", "llama_index", "llamaindex"),
        ("haystack", "haystack", "haystack"),
    ],
)
def test_a_missing_framework_names_the_extra(module: str, blocked: str, extra: str) -> None:
    code = (
        "import sys\n"
        f"sys.modules[{blocked!r}] = None\n"
        "from ragsieve.errors import ConfigError\n"
        "try:\n"
        f"    import ragsieve.integrations.{module}\n"
        "except ImportError as e:\n"
        "    assert isinstance(e, ConfigError)\n"
        "    print(e)\n"
        "else:\n"
        "    raise SystemExit('imported without its framework')\n"
    )
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-1500:]
    line = proc.stdout.strip()
    assert "\n" not in line
    assert f"pip install 'ragsieve[{extra}]'" in line
