"""llama.cpp's prompt cache and a greedy reader: seconds, and replies that change with it.

    .venv/bin/python -m benchmarks bench_cache --llm local --limit 40

Answer prompts over the gold paragraphs of dev questions (``bench_reader``'s), read by two
instances of one model in this process: ``cache_prompt`` on and off (the default). Each reads
the prompts in order, again, then in reverse. Printed per setting: seconds a prompt on the first
pass (new prompts, where the cache can reuse only the shared start) and on the second (the same
prompts again), and how many replies differ from the first pass's. Appends to
``benchmarks/results/cache_prompt.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from bench_reader import questions
from common import RESULTS

from ragsieve.llm import get_llm, prompts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--llm", default="local", help="a local LLM spec (local, qwen-0.5b, ...)")
    ap.add_argument("--limit", type=int, default=40, help="first N dev questions")
    args = ap.parse_args()
    msgs = [prompts.build_answer_messages(q, c) for q, c, _ in questions("dev", args.limit)]
    result: dict[str, Any] = {"llm": args.llm, "n": len(msgs)}
    for cache in (True, False):
        llm = get_llm(args.llm, n_ctx=2048, cache_prompt=cache)
        llm.generate([{"role": "user", "content": "Hello."}], max_tokens=2)  # load the model
        passes: list[list[str]] = []
        secs: list[float] = []
        for order in (msgs, msgs, msgs[::-1]):
            t0 = time.perf_counter()
            passes.append([llm.generate(m, max_tokens=64).text for m in order])
            secs.append((time.perf_counter() - t0) / len(msgs))
        passes[2].reverse()
        row = {
            "s_first": secs[0],
            "s_again": secs[1],
            "changed_again": sum(a != b for a, b in zip(passes[0], passes[1], strict=True)),
            "changed_reversed": sum(a != b for a, b in zip(passes[0], passes[2], strict=True)),
        }
        result["on" if cache else "off"] = row
        print(f"{args.llm} cache_prompt={cache}: {row}", flush=True)
        llm.close()
    on, off = result["on"], result["off"]
    print(
        f"off / on seconds: first pass {off['s_first'] / on['s_first']:.2f}x, "
        f"again {off['s_again'] / on['s_again']:.2f}x"
    )
    path = RESULTS / "cache_prompt.json"
    runs = json.loads(path.read_text()) if path.exists() else []
    path.write_text(json.dumps([*runs, result], indent=2))


if __name__ == "__main__":
    main()
