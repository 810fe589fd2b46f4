"""``ragsieve serve`` under load (issue 34): requests/s and p50/p95 of ``POST /search`` and
``POST /explain`` at 1, 4 and 16 concurrent clients, with 1 and with 2 uvicorn workers.

    .venv/bin/python benchmarks/bench_serve_load.py [--workers 1,2] [--levels 1,4,16]

Loopback only and bounded (``--requests`` per level in all, shared by its clients). The index
is examples/corpus (built in a temporary folder). One worker is ``ragsieve serve`` itself; N
workers run the same app (``create_app``) under ``uvicorn --workers N --factory``, each worker
loading its own models. No LLM is called (``/explain`` is ``ask --no-llm``), so the server's
LLM is an OpenAI-compatible spec that is never reached. ``/explain`` runs with the server's
default method and with ``tagger`` (the default of issue 33). Results go to
``benchmarks/results/serve_load.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import QUERIES, free_port, run_level, wait_healthy

REPO = Path(__file__).resolve().parents[1]
RESULTS = Path(os.environ.get("RAGSIEVE_BENCH_RESULTS", REPO / "benchmarks" / "results"))
NO_LLM = "openai:unused@http://127.0.0.1:9/v1"
INDEX_ENV = "RAGSIEVE_BENCH_INDEX"


def app() -> Any:
    """The uvicorn factory of a multi-worker run: the app ``ragsieve serve`` would build."""
    from ragsieve.serve.app import create_app

    return create_app(os.environ[INDEX_ENV], llm_spec=NO_LLM)


def start(index: Path, workers: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "RAGSIEVE_TOKEN"}
    if workers == 1:
        cmd = [sys.executable, "-m", "ragsieve.cli", "serve", "--index", str(index)]
        cmd += ["--llm", NO_LLM, "--no-access-log", "--log-level", "warning"]
    else:
        env[INDEX_ENV] = str(index)
        cmd = [sys.executable, "-m", "uvicorn", "--factory", "bench_serve_load:app"]
        cmd += ["--app-dir", str(Path(__file__).resolve().parent), "--workers", str(workers)]
        cmd += ["--no-access-log", "--log-level", "warning", "--host", "127.0.0.1"]
    cmd += ["--port", str(port)]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    return proc, wait_healthy(proc, f"http://127.0.0.1:{port}", log, 300)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--requests", type=int, default=32, help="Requests per level, in all.")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    bodies = {
        "/search": lambda i: {"query": QUERIES[i % len(QUERIES)], "k": 5},
        "/explain": lambda i: {"question": QUERIES[i % len(QUERIES)]},
        "/explain tagger": lambda i: {"question": QUERIES[i % len(QUERIES)], "method": "tagger"},
    }
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        from ragsieve.index import Index

        index = Path(tmp) / "index"
        Index.create(index).add_paths([REPO / "examples" / "corpus"])
        for workers in (int(w) for w in args.workers.split(",")):
            proc, url = start(index, workers, Path(tmp) / f"server{workers}.log")
            try:
                for name, body in bodies.items():
                    path = name.split()[0]
                    run_level(url, path, 2, 2, body)  # warm-up: every worker loads its models
                    for c in levels:
                        r = run_level(url, path, c, max(1, args.requests // c), body)
                        rows.append({"workers": workers, "endpoint": name, **r})
                        print(workers, name, r, file=sys.stderr)
            finally:
                proc.terminate()
                proc.wait(timeout=60)
    load = os.getloadavg()
    lines = [
        f"examples/corpus index; {os.cpu_count()} CPUs; load average at the end "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}",
        "",
        "| workers | endpoint | clients | requests | errors | req/s | p50 ms | p95 ms |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['workers']} | {r['endpoint']} | {r['clients']} | {r['requests']} | "
            f"{r['errors']} | {r['throughput_rps']:.1f} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} |"
        )
    table = "\n".join(lines)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "serve_load.json").write_text(json.dumps({"rows": rows, "load": load}, indent=1))
    (RESULTS / "serve_load.md").write_text("# bench_serve_load.py\n\n" + table + "\n")
    print(table)
    if any(r["errors"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
