"""Bounded load test of ``ragsieve serve`` over loopback (issue: HTTP API).

Starts a real server process, then drives it with 1, 5 and 10 concurrent clients (threads, one
``httpx.Client`` and connection each), a fixed number of ``POST /search`` requests per client,
plus a smaller ``POST /ask`` run with the server's LLM. Reports p50/p95 latency, throughput,
errors, and p50 at each level relative to 1x -- the shape of SAGE's Table VIII (5x and 10x
concurrency). Zero errors are expected; the exit status is 1 if any request failed.

Loopback only and bounded: at most ``max(levels) * requests`` searches per level, so it is safe
beside other jobs (and its numbers then include their noise: note the load average).

Usage: .venv/bin/python benchmarks/bench_server.py [--index DIR] [--requests 20]
       [--levels 1,5,10] [--ask-clients 5] [--ask-requests 2] [--llm local] [--json OUT]
Without --index it indexes examples/corpus into a temporary directory first.
"""

from __future__ import annotations

import argparse
import json
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

REPO = Path(__file__).resolve().parents[1]
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


def free_port() -> int:
    from ragsieve.llm.server import free_port as _free_port

    return _free_port()


def start_server(index: Path, llm: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "ragsieve.cli", "serve", "--index", str(index)]
    cmd += ["--port", str(port), "--llm", llm, "--no-access-log", "--log-level", "warning"]
    env = {k: v for k, v in os.environ.items() if k != "RAGSIEVE_TOKEN"}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    return proc, wait_healthy(proc, f"http://127.0.0.1:{port}", log, 180)


def wait_healthy(proc: subprocess.Popen, url: str, log: Path, seconds: float) -> str:
    """``url`` once its ``/health`` answers 200; exits with the server's log if it dies or
    does not answer within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return url
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    proc.kill()
    sys.exit(f"server did not become healthy:\n{log.read_text()}")


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


def table(title: str, rows: list[dict[str, Any]]) -> str:
    base = rows[0]["p50_ms"]
    out = [
        f"### {title}",
        "",
        "| clients | requests | errors | p50 ms | p95 ms | max ms | req/s | p50 / p50@1x |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['clients']} | {r['requests']} | {r['errors']} | {r['p50_ms']:.1f} | "
            f"{r['p95_ms']:.1f} | {r['max_ms']:.1f} | {r['throughput_rps']:.1f} | "
            f"{r['p50_ms'] / base:.2f} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, help="Index to serve (default: examples/corpus).")
    ap.add_argument("--requests", type=int, default=20, help="/search requests per client.")
    ap.add_argument("--levels", default="1,5,10", help="Concurrent clients per level.")
    ap.add_argument("--k", type=int, default=5, help="k of every /search.")
    ap.add_argument("--retriever", default="dense", help="Retriever of every /search.")
    ap.add_argument("--ask-clients", type=int, default=5, help="Concurrent /ask clients.")
    ap.add_argument("--ask-requests", type=int, default=2, help="/ask requests per client.")
    ap.add_argument("--ask-tokens", type=int, default=16, help="max_tokens of every /ask.")
    ap.add_argument("--llm", default="local", help="The server's --llm.")
    ap.add_argument("--json", type=Path, help="Also write the numbers here.")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]

    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        index = args.index
        if index is None:
            from ragsieve.index import Index

            index = Path(tmp) / "index"
            Index.create(index).add_paths([REPO / "examples" / "corpus"])
        proc, url = start_server(index, args.llm, Path(tmp) / "server.log")
        try:

            def search_body(i: int) -> dict[str, Any]:
                q = QUERIES[i % len(QUERIES)]
                return {"query": q, "k": args.k, "retriever": args.retriever}

            def ask_body(i: int) -> dict[str, Any]:
                q = QUERIES[i % len(QUERIES)]
                return {"question": q, "k": 2, "max_tokens": args.ask_tokens}

            run_level(url, "/search", 1, 5, search_body)  # warm-up, not reported
            run_level(url, "/ask", 1, 1, ask_body)
            search = [run_level(url, "/search", c, args.requests, search_body) for c in levels]
            ask = [
                run_level(url, "/ask", 1, args.ask_requests, ask_body),
                run_level(url, "/ask", args.ask_clients, args.ask_requests, ask_body),
            ]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    load = os.getloadavg()
    print(f"load average (1/5/15 min) at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"cpus: {os.cpu_count()}; llm: {args.llm}\n")
    print(table(f"POST /search (k={args.k}, {args.retriever})", search) + "\n")
    print(table(f"POST /ask (k=2, max_tokens={args.ask_tokens}, llm={args.llm})", ask))
    if args.json:
        args.json.write_text(json.dumps({"search": search, "ask": ask, "load": load}, indent=2))
    if any(r["errors"] for r in search + ask):
        sys.exit(1)


if __name__ == "__main__":
    main()
