"""`pip install ragsieve` as a user does it: a fresh venv from the wheel, its size, packages and
install time, and cold commands from it (another folder, an empty HOME).

    .venv/bin/python -m build --no-isolation --outdir /tmp/dist   # or: make dist
    .venv/bin/python -m benchmarks bench_install --wheel /tmp/dist/ragsieve-0.1.0-py3-none-any.whl
    .venv/bin/python -m benchmarks bench_install --wheel ... --extras all --no-cold

The venv is made with this interpreter's ``venv`` and its bundled pip (what a user's new venv
has); ``pip install WHEEL[EXTRAS]`` downloads what pip's cache lacks, so the install time
includes the network. Sizes are ``du -sm`` of the whole venv (MiB, pip and the .pyc files pip
writes included). Cold commands: median of ``--repeat`` runs, each a new process, with its peak
RSS. Results go to ``benchmarks/results/install.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import REPO, RESULTS, run_measured, wait_healthy

CORPUS = REPO / "examples" / "corpus"
QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"
NOT_IN_CORE = ("torch", "transformers", "scipy", "scikit-learn", "sympy", "matplotlib")


def install(wheel: Path, extras: str, venv: Path) -> dict[str, Any]:
    """A new venv at ``venv`` with ``wheel[extras]``: seconds, MiB on disk, packages."""
    shutil.rmtree(venv, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    target = f"{wheel}[{extras}]" if extras else str(wheel)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", target], check=True, env=env)
    seconds = time.perf_counter() - t0
    du = subprocess.run(["du", "-sm", str(venv)], capture_output=True, text=True, check=True)
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import importlib.metadata as m, json; "
         "print(json.dumps(sorted({d.metadata['Name'].lower() for d in m.distributions()})))"],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    names = json.loads(listed.stdout)
    return {
        "extras": extras,
        "install_s": round(seconds, 1),
        "venv_mib": int(du.stdout.split()[0]),
        "packages": len(names),
        "heavy_present": [n for n in NOT_IN_CORE if n in names],
    }


def cold(venv: Path, repeat: int) -> dict[str, Any]:
    """Cold ``search``, ``ask`` and ``serve`` until /health from ``venv``, in a new folder
    with an empty HOME."""
    import httpx

    from ragsieve.llm.server import free_port

    work = Path(tempfile.mkdtemp(prefix="ragsieve-install-"))
    (work / "home").mkdir()
    env = {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "HOME": str(work / "home")}
    exe = str(venv / "bin" / "ragsieve")
    shutil.copytree(CORPUS, work / "corpus")
    os.chdir(work)
    out: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    code, wall, rss, text = run_measured([exe, "index", "corpus", "--index", "idx"], env)
    assert code == 0, text[-500:]
    out["index"] = {"seconds": round(wall, 2), "rss_mb": round(rss)}
    commands = {
        "search": ["search", "hieroglyphs", "--index", "idx", "--k", "2"],
        "ask": ["ask", QUESTION, "--index", "idx", "--k", "2"],
    }
    for label, args in commands.items():
        runs = [run_measured([exe, *args], env) for _ in range(repeat)]
        assert all(r[0] == 0 for r in runs), runs[0][3][-500:]
        times = [round(r[1], 2) for r in runs]
        out[label] = {"median_s": statistics.median(times), "runs": times,
                      "rss_mb": round(max(r[2] for r in runs))}  # fmt: skip
        print(f"{label:8s} median {out[label]['median_s']:6.2f} s  {times}")
    ready = []
    for _ in range(repeat):
        port = free_port()
        argv = [exe, "serve", "--index", "idx", "--port", str(port), "--log-level", "error"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            wait_healthy(proc, f"http://127.0.0.1:{port}", 600, poll=0.05)
            ready.append(round(time.perf_counter() - t0, 2))
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).raise_for_status()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    out["serve ready"] = {"median_s": statistics.median(ready), "runs": ready}
    print(f"serve    median {out['serve ready']['median_s']:6.2f} s  {ready}")
    out["load_after"] = os.getloadavg()[0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--wheel", type=Path, required=True, help="the wheel python -m build made")
    ap.add_argument("--extras", default="", help="e.g. all (default: none, the core)")
    ap.add_argument("--venv", type=Path, default=None, help="where (default: a temp folder)")
    ap.add_argument("--reuse", action="store_true", help="measure an existing --venv as it is")
    ap.add_argument("--no-cold", action="store_true", help="size and install time only")
    ap.add_argument("--repeat", type=int, default=3, help="runs per cold command")
    args = ap.parse_args()
    venv = args.venv or Path(tempfile.mkdtemp(prefix="ragsieve-venv-")) / "venv"
    data: dict[str, Any] = {"wheel": args.wheel.name, "wheel_mb": args.wheel.stat().st_size / 1e6}
    if not args.reuse:
        data["install"] = install(args.wheel, args.extras, venv)
        print(json.dumps(data["install"]))
    if not args.no_cold:
        data["cold"] = cold(venv, args.repeat)
    path = RESULTS / "install.json"
    runs = json.loads(path.read_text()) if path.exists() else []
    runs.append({**data, "when": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count()})
    path.write_text(json.dumps(runs, indent=2) + "\n")


if __name__ == "__main__":
    main()
