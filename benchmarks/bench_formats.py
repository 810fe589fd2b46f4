"""Which PDF library reads pages for ``ragsieve.formats``: pypdf against pdfminer.six.

    .venv/bin/python benchmarks/bench_formats.py          # pip install pdfminer.six to compare

Writes a 100-page PDF with reportlab (15 lines a page, each line numbered by its page) and reads
it page by page with each library: seconds, and how many pages come back with exactly the text
written on them (whitespace collapsed). pdfminer.six is left out when it is not installed.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

LINE = "The committee reviewed the budget of the harbour authority and the northern quay"


def write(path: Path, pages: list[list[str]]) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    for lines in pages:
        for i, line in enumerate(lines):
            c.drawString(40, 800 - 16 * i, line)
        c.showPage()
    c.save()


def exact(want: list[list[str]], got: list[str]) -> int:
    return sum(
        " ".join(" ".join(w).split()) == " ".join(g.split()) for w, g in zip(want, got, strict=True)
    )


def main() -> None:
    pages = [[f"Page {p}"] + [f"{LINE} ({p}.{i})" for i in range(14)] for p in range(1, 101)]
    with tempfile.TemporaryDirectory() as tmp:
        pdf = Path(tmp) / "hundred.pdf"
        write(pdf, pages)
        from pypdf import PdfReader

        t0 = time.perf_counter()
        got = [p.extract_text() for p in PdfReader(pdf).pages]
        print(f"pypdf: {time.perf_counter() - t0:.2f} s, {exact(pages, got)}/100 pages exact")
        try:
            from pdfminer.high_level import extract_pages
            from pdfminer.layout import LTTextContainer
        except ImportError:
            print("pdfminer.six: not installed")
            return
        t0 = time.perf_counter()
        got = [
            "".join(e.get_text() for e in page if isinstance(e, LTTextContainer))
            for page in extract_pages(str(pdf))
        ]
        print(
            f"pdfminer.six: {time.perf_counter() - t0:.2f} s, {exact(pages, got)}/100 pages exact"
        )


if __name__ == "__main__":
    main()
