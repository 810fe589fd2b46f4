"""The raw span of tagger models on sentences holding the answer beside a look-alike of it.

    python -m benchmarks span_look_alikes [MODEL_DIR ...]   # none: the shipped model

Sixteen hand-written pairs (two questions on one sentence, each answered by the other's
neighbour: two dates, two names, two numbers), written for the wrong-entity case of issue 57
after it was seen, so a small probe to read beside the dev figures, never one that chooses. A
span counts as right when it holds the answer and at most 12 more characters. The span is the
tagger's own on the sentence alone (no pool, no clause check).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ragsieve.tag.model import OnnxTagger, shipped_model_dir
from ragsieve.tag.prune import span_in

_PAIRS = [
    (
        "Voyager 2 was launched first, on 20 August 1977; Voyager 1 followed on 5 September 1977.",
        ("When was Voyager 1 launched?", "5 September 1977"),
        ("When was Voyager 2 launched?", "20 August 1977"),
    ),
    (
        "Anna Berg won the gold medal and Maria Lund took silver.",
        ("Who won the silver medal?", "Maria Lund"),
        ("Who won the gold medal?", "Anna Berg"),
    ),
    (
        "The south tower is 415 metres tall, while the north tower reaches 417 metres.",
        ("How tall is the north tower?", "417 metres"),
        ("How tall is the south tower?", "415 metres"),
    ),
    (
        "Pierre was born in Paris, and Marie was born in Warsaw.",
        ("Where was Marie born?", "Warsaw"),
        ("Where was Pierre born?", "Paris"),
    ),
    (
        "The web server listens on port 8080 and the admin console on port 9090.",
        ("What is the default port of the admin console?", "9090"),
        ("What is the default port of the web server?", "8080"),
    ),
    (
        "The original film was directed by John Hale, and its sequel by Rosa Diaz.",
        ("Who directed the sequel?", "Rosa Diaz"),
        ("Who directed the original film?", "John Hale"),
    ),
    (
        "Construction began in 1929 and the bridge opened in 1932.",
        ("In which year did the bridge open?", "1932"),
        ("In which year did construction begin?", "1929"),
    ),
    (
        "The capital of Sweden is Stockholm and the capital of Norway is Oslo.",
        ("What is the capital of Norway?", "Oslo"),
        ("What is the capital of Sweden?", "Stockholm"),
    ),
]


def probe(model_dir: Path | None) -> list[tuple[str, str, bool]]:
    """(question, span, right) for every question of :data:`_PAIRS`."""
    tagger = OnnxTagger(model_dir or shipped_model_dir())
    out = []
    for sentence, *asks in _PAIRS:
        for question, gold in asks:
            read = tagger.tag(question, [("", [sentence])])
            spans = getattr(read[0], "spans", None) if read else None
            a, b = span_in(tagger.span_chars, sentence, spans[0], True) if spans else (0, 0)
            text = sentence[a:b]
            right = gold.lower() in text.lower() and len(text) <= len(gold) + 12
            out.append((question, text, right))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    args = ap.parse_args()
    for model in args.models or [None]:
        rows = probe(model)
        print(f"{model or 'shipped'}: {sum(r for *_, r in rows)} / {len(rows)} right")
        for question, text, right in rows:
            print(f"  {'+' if right else '-'} {question} -> {text!r}")


if __name__ == "__main__":
    main()
