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
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from common import REPO, RESULTS, free_port, md_table, save_json, wait_healthy

QUERIES = [
    "When was the Fresnel lens first installed?",
    "What does a lighthouse characteristic encode?",
    "Who found the Rosetta Stone?",
    "How many eggs can a queen bee lay in a day?",
    "When was Voyager 1 launched?",
    "What is the waggle dance?",
    "Which planets did Voyager 2 visit?",
    "Who deciphered Egyptian hieroglyphs?",
    "What is on the golden record?",
    "How do worker bees make wax?",
]
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
    return proc, wait_healthy(proc, f"http://127.0.0.1:{port}", 300, log)


def run_level(
    url: str, path: str, clients: int, per_client: int, body: Any
) -> dict[str, float | int]:
    """``clients`` threads each send ``per_client`` requests; latencies of all of them."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(clients)

    def client(cid: int) -> None:
        with httpx.Client(base_url=url, timeout=300) as http:
            http.get("/health")  # open the connection before the clock starts
            start.wait()
            for i in range(per_client):
                payload = body(cid * per_client + i)
                t0 = time.perf_counter()
                try:
                    r = http.post(path, json=payload)
                    ok = r.status_code == 200
                    why = f"HTTP {r.status_code}: {r.text[:120]}"
                except httpx.HTTPError as e:
                    ok, why = False, f"{type(e).__name__}: {e}"
                dt = time.perf_counter() - t0
                with lock:
                    latencies.append(dt)
                    if not ok:
                        errors.append(why)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    for e in errors[:3]:
        print(f"  error: {e}", file=sys.stderr)
    lat = np.array(latencies) * 1000
    return {
        "clients": clients,
        "requests": len(latencies),
        "errors": len(errors),
        "p50_ms": float(np.percentile(lat, 50)),
        "p95_ms": float(np.percentile(lat, 95)),
        "max_ms": float(lat.max()),
        "throughput_rps": len(latencies) / wall,
    }


def rates(r: dict[str, Any]) -> list[str]:
    return [f"{r['throughput_rps']:.1f}", f"{r['p50_ms']:.0f}", f"{r['p95_ms']:.0f}"]


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
    head = ["workers", "endpoint", "clients", "requests", "errors", "req/s", "p50 ms", "p95 ms"]
    cells = [
        [r["workers"], r["endpoint"], r["clients"], r["requests"], r["errors"], *rates(r)]
        for r in rows
    ]
    table = "\n".join(
        [
            f"examples/corpus index; {os.cpu_count()} CPUs; load average at the end "
            f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}",
            "",
            *md_table(head, cells, align="rlrrrrrr"),
        ]
    )
    save_json("serve_load.json", {"rows": rows, "load": load}, indent=1)
    (RESULTS / "serve_load.md").write_text("# bench_serve_load.py\n\n" + table + "\n")
    print(table)
    if any(r["errors"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
