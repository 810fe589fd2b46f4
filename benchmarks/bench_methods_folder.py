"""Every method on a user's folder, default index: seconds a question and context tokens.

Issue 46's acceptance: on a folder of real PDFs, HTML and DOCX, ``ask --method M`` works on the
default index (built without ``--sentences``) for every method ``ragsieve ask -h`` lists. This
builds such a folder from documentation installed here (two PDF manuals, HTML pages, a DOCX
written with python-docx, the sample markdown), indexes it with the default settings, and asks
~6 questions of every method through the Python API with no LLM (the retrieval ``ask`` runs;
generation is the same for every method and is left out). Per method: seconds a question
(mean, after one warm-up question) and context tokens (mean), beside naive's.

    .venv/bin/python benchmarks/bench_methods_folder.py [--out /tmp/folder-bench] [--k 10]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = Path("/usr/share/doc")
FILES = [
    "libtasn1-doc/libtasn1.pdf",
    "shared-mime-info/shared-mime-info-spec.pdf",
    "zlib1g-dev/examples/zlib_how.html",
    "base-passwd/users-and-groups.html",
    "libffi8/html/The-Closure-API.html",
    "libffi8/html/The-Basics.html",
    "libffi8/html/Structures.html",
    "libffi8/html/Memory-Usage.html",
    "python3/python-policy.html",
]
QUESTIONS = [
    "Which libtasn1 function encodes an ASN.1 structure in DER?",
    "How does shared-mime-info recognise a file type from its contents?",
    "What does deflate() do when flush is set to Z_FINISH?",
    "Which user owns files that nobody should own?",
    "What does the libffi closure API let a program do?",
    "When was Voyager 1 launched?",
    "How many crates does the beekeeping report count?",
]


def build_folder(folder: Path) -> list[str]:
    """The folder of real documents; returns the names of the files it holds."""
    import docx

    folder.mkdir(parents=True, exist_ok=True)
    for rel in FILES:
        src = DOC / rel
        if src.is_file():
            shutil.copy(src, folder / src.name)
    for md in sorted((REPO / "examples" / "corpus").glob("*.md")):
        shutil.copy(md, folder / md.name)
    d = docx.Document()
    d.add_heading("Beekeeping report", level=0)
    d.add_heading("Hives", level=1)
    d.add_paragraph("The apiary kept twelve hives this season; two swarmed in June.")
    d.add_paragraph("Honey was extracted in August and stored in food-grade crates.")
    table = d.add_table(rows=2, cols=2)
    for r, row in enumerate([("item", "count"), ("crates", "12")]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    d.save(str(folder / "beekeeping.docx"))
    return sorted(p.name for p in folder.iterdir())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/ragsieve-folder-bench"))
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--methods", default="", help="comma-separated (default: every method)")
    args = ap.parse_args()

    from ragsieve.index import Index
    from ragsieve.methods import build_method, known_methods

    folder, index_dir = args.out / "docs", args.out / "index"
    names = build_folder(folder)
    t0 = time.perf_counter()
    if index_dir.exists():
        idx = Index.open(index_dir)
    else:
        idx = Index.create(index_dir)
        idx.add_paths([folder])
    st = idx.stats()
    print(
        f"folder: {len(names)} files ({', '.join(names)}); index: {st['chunks']} chunks, "
        f"sentence table: {idx.has_sentences}, ready in {time.perf_counter() - t0:.1f}s",
        file=sys.stderr,
    )
    methods = [m for m in args.methods.split(",") if m] or known_methods()
    if "naive" in methods:
        methods = ["naive", *[m for m in methods if m != "naive"]]
    rows: dict[str, tuple[float, float]] = {}
    for name in methods:
        t0 = time.perf_counter()
        m = build_method(name, idx, k=args.k)
        m.retrieve(QUESTIONS[:1])  # warm-up: models loaded, caches filled
        setup = time.perf_counter() - t0
        secs, toks = [], []
        for q in QUESTIONS:
            t0 = time.perf_counter()
            (r,) = m.retrieve([q])
            secs.append(time.perf_counter() - t0)
            toks.append(r.context.n_tokens)
        rows[name] = (statistics.mean(secs), statistics.mean(toks))
        print(f"{name}: {rows[name][0]:.2f} s/q, {rows[name][1]:.0f} tokens, setup {setup:.1f}s")
    base = rows.get("naive")
    print(f"\n{len(QUESTIONS)} questions, --k {args.k}, default index, no LLM\n")
    print("| method | s / question | x naive | context tokens | x naive |")
    print("|---|---:|---:|---:|---:|")
    for name, (s, t) in rows.items():
        rs = f"{s / base[0]:.1f}x" if base and base[0] > 0 else "-"
        rt = f"{t / base[1]:.2f}x" if base and base[1] > 0 else "-"
        print(f"| {name} | {s:.2f} | {rs} | {t:.0f} | {rt} |")


if __name__ == "__main__":
    main()
