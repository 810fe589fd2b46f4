"""How many of a corpus's sentences have no ``where`` (no page and no heading above them).

Each document of a ``corpus.jsonl`` (as ``fetch.py`` writes it: the readers' output) is split
into sentences as the index splits it, and :func:`ragsieve.formats.locate` is asked where each
one sits; printed per document that has headings or sentences without one (with its count of
headings, :func:`ragsieve.formats.headings`), and in all.

    .venv/bin/python benchmarks/techdocs/where.py benchmarks/techdocs/cache/corpus.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from ragsieve.formats import headings, locate
    from ragsieve.text.sentences import split_sentences

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, nargs="+", help="corpus.jsonl files")
    args = ap.parse_args(argv)
    for path in args.corpus:
        empty = total = 0
        rows = []
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                doc = json.loads(line)
                spans = split_sentences(doc["text"])
                none = sum(1 for s, e in spans if not locate(doc["text"], s, e))
                empty, total = empty + none, total + len(spans)
                if none or headings(doc["text"]):
                    n = len(headings(doc["text"]))
                    rows.append(f"  {doc['id']}: {none} of {len(spans)}; {n} headings")
        print(f"{path}: {empty} of {total} sentences without a where")
        print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
