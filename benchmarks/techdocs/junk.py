"""Layout junk in the contexts methods choose on the techdocs set (issue 44, item 3 and (c)).

For each method, over one split: the kept units (each context chunk split into sentences), how
many have no words (:func:`ragsieve.text.has_words`: bare numbers, rules, pipes, fences) and
how many hold a PDF's running head or a page-number line as the old reader left them
("Chapter 3: Utilities 7", "How to use bzip2", a line "14"). The evaluation index is the one
``ragsieve eval`` builds and caches for the same split (same key), so this costs no re-index.

    .venv/bin/python benchmarks/techdocs/junk.py --split dev --methods naive,tagger \\
        --cache-dir /tmp/evalcache
"""

from __future__ import annotations

import argparse
import json
import re
import sys

#: Running heads of the set's PDFs as the reader left them before issue 44 (regression check).
RUNNING = re.compile(
    r"Chapter \d+: [A-Z][\w .:-]* \d+$|^(?:How to use bzip2|Programming with libbzip2|"
    r"Miscellanea|Shared MIME-info Database|fonts-conf)$",
    re.MULTILINE,
)


def main(argv: list[str] | None = None) -> int:
    from pathlib import Path

    from ragsieve.evaluate.datasets import load_dataset
    from ragsieve.evaluate.runner import EvalConfig, eval_index
    from ragsieve.methods import build_method, parse_methods
    from ragsieve.text import has_words, sentence_texts

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--methods", default="naive,tagger")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument("--cache-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    ds = load_dataset("techdocs" if args.split == "dev" else "techdocs-test")
    specs = parse_methods(args.methods)
    cfg = EvalConfig(methods=specs, k=args.k, budget=args.budget, cache_dir=args.cache_dir)
    index, _ = eval_index(ds, cfg)
    questions = [q.question for q in ds.questions]
    out = {}
    for spec in specs:
        method = build_method(spec, index, k=args.k, budget=args.budget)
        units = junk = heads = 0
        examples: list[str] = []
        for r in method.retrieve(questions, [None] * len(questions)):
            for s in r.context.chunks:
                for u in sentence_texts(s.chunk.text):
                    units += 1
                    if not has_words(u):
                        junk += 1
                        examples.append(u[:30])
                    heads += bool(RUNNING.search(u))
        out[spec.label] = {
            "units": units,
            "without_words": junk,
            "running_heads": heads,
            "examples": sorted(set(examples))[:10],
        }
        print(f"{spec.label}: {units} kept units, {junk} without words, {heads} running heads")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
