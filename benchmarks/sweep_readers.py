"""Issue 45's bad-input cases: readers (run by bad_input_sweep.py --issue45).

Hostile PDF, HTML and DOCX files made by the real writers (tests/hostile_docs.py): a million
spaces, a non-UTF-8 name, a megabyte title, a zip bomb, truncated, empty, encrypted, the wrong
format under a known extension. Named on the command line each is indexed or one ``error:``
line (exit 2); inside a folder each bad one is a warning, and the folder's good files are
indexed (``check`` reads the index back with ``info --documents --json``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from bad_input_sweep import Case, cli_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import hostile_docs as h

Make = Callable[[Path], object]
I = ["--index", "{idx}"]  # noqa: E741


def _file(rel: str | bytes, make: Make) -> Callable[[Path, Path], None]:
    """Setup: ``make`` writes ``{tmp}/REL`` (REL may be raw bytes: a non-UTF-8 name)."""

    def f(tmp: Path, idx: Path) -> None:
        path = h.bytes_name(tmp, rel) if isinstance(rel, bytes) else tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        make(path)

    return f


def _folder(bad: list[tuple[str | bytes, Make]]) -> Callable[[Path, Path], None]:
    """Setup: {tmp}/d with three good files (one per format, one in a subfolder) and ``bad``."""

    def f(tmp: Path, idx: Path) -> None:
        d = tmp / "d"
        (d / "sub").mkdir(parents=True)
        h.pdf(d / "good.pdf", ["The lighthouse keeper logs the tide at Port Kessel."])
        h.docx(d / "sub" / "good.docx")
        h.html(d / "good.html")
        for rel, make in bad:
            _file(rel, make)(d, idx)

    return f


def _documents(idx: Path) -> list[dict[str, object]]:
    out, _ = cli_json("info", "--index", str(idx), "--documents")
    return [] if out is None else list(out["document_list"])


def _indexed(*names: str, total: int | None = None) -> Callable[[Path, Path, str], str]:
    """Check: documents whose id ends with each of ``names`` are in the index, every title is
    short, and (``total``) the index holds that many documents after the base corpus."""

    def check(tmp: Path, idx: Path, stdout: str) -> str:
        docs = _documents(idx)
        if not docs:
            return "info --documents gave nothing"
        ids = [str(d.get("doc_id", d.get("id", ""))) for d in docs]
        missing = [n for n in names if not any(i.endswith(n) for i in ids)]
        if missing:
            return f"not indexed: {missing}"
        long = [d for d in docs if len(str(d.get("title", ""))) > 200]
        if long:
            return f"a title of {len(str(long[0].get('title')))} characters"
        base = len([p for p in (h_corpus()).iterdir() if p.is_file()])
        if total is not None and len(docs) != base + total:
            return f"{len(docs)} documents, expected {base + total}"
        return ""

    return check


def h_corpus() -> Path:
    return Path(__file__).resolve().parents[1] / "examples" / "corpus"


def _writes(data: bytes) -> Make:
    return lambda p: p.write_bytes(data)


def _truncated_pdf(p: Path) -> None:
    p.write_bytes(h.pdf(p).read_bytes()[:300])


def _truncated_docx(p: Path) -> None:
    p.write_bytes(h.docx(p).read_bytes()[:2000])


def _script_html(p: Path) -> None:
    p.write_text("<html><head><script>var a = 1;</script></head><body></body></html>")


def _html_title(p: Path) -> None:
    p.write_text(
        "<html><head><title>"
        + "Harbour " * 125_000
        + "</title></head><body><p>"
        + h.WORDS
        + "</p></body></html>"
    )


def _bomb(mb: int) -> Make:
    return lambda p: h.docx_bomb(p, mb=mb)


def _pdf_title(p: Path) -> None:
    h.pdf(p, title="Harbour " * 125_000)


def _pdf_both(p: Path) -> None:
    h.pdf(p, [h.WORDS + h.SPACES + "After the gap."], title="Harbour " * 125_000)


def _docx_title(p: Path) -> None:
    h.docx(p, title="Harbour " * 125_000)


def _pdf_in_docx(p: Path) -> None:
    p.write_bytes(h.pdf(p.with_suffix(".tmp.pdf")).read_bytes())
    os.unlink(p.with_suffix(".tmp.pdf"))


def _docx_as_html(p: Path) -> None:
    p.write_bytes(h.docx(p.with_suffix(".tmp.docx")).read_bytes())
    os.unlink(p.with_suffix(".tmp.docx"))


# fmt: off
def cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    area = "readers45"
    # --- each hostile kind, named on the command line: indexed (0) or one error line (2)
    good_named: list[tuple[str, str | bytes, Make, str]] = [
        ("pdf with a million spaces", "gap.pdf", h.pdf_with_space_run, "gap.pdf"),
        ("html with a million spaces", "gap.html", h.html_with_space_run, "gap.html"),
        ("docx with a million spaces", "gap.docx", h.docx_with_space_run, "gap.docx"),
        ("pdf with a non-UTF-8 name", b"caf\xe9.pdf", h.pdf, "caf\\xe9.pdf"),
        ("html with a non-UTF-8 name", b"caf\xe9.html", h.html, "caf\\xe9.html"),
        ("docx with a non-UTF-8 name", b"caf\xe9.docx", h.docx, "caf\\xe9.docx"),
        ("pdf with a 1 MB /Title", "title.pdf", _pdf_title, "title.pdf"),
        ("docx with a 1 MB title", "title.docx", _docx_title, "title.docx"),
        ("html with a 1 MB <title>", "title.html", _html_title, "title.html"),
        ("pdf with a million spaces and a 1 MB title", "both.pdf", _pdf_both, "both.pdf"),
    ]
    for name, rel, make, suffix in good_named:
        arg = os.fsdecode(b"{tmp}/" + rel) if isinstance(rel, bytes) else "{tmp}/" + rel
        add(Case(area, f"named: {name}", ["index", arg, *I], 0, _file(rel, make), timeout=300,
            check=_indexed(suffix, total=1)))
    bad_named: list[tuple[str, str, Make, str]] = [
        ("docx zip bomb (400 MB document.xml)", "bomb.docx", _bomb(400), "zip bomb"),
        ("docx bomb under the total cap (60 MB, ratio)", "ratio.docx", _bomb(60), "zip bomb"),
        ("docx declaring 3 GB", "huge.docx", lambda p: h.zip_declaring(p, 3_000_000_000),
            "limit 200 MB"),
        ("docx whose header lies small", "lie.docx",
            lambda p: h.zip_declaring(h.docx_bomb(p, mb=50), 1000), "cannot read this DOCX"),
        ("docx that is not a zip", "plain.docx", _writes(b"plain text, not a zip"),
            "not a zip archive"),
        ("docx that is a PDF", "pdf.docx", _pdf_in_docx, "not a zip archive"),
        ("truncated docx", "cut.docx", _truncated_docx, "DOCX"),
        ("zero-byte docx", "zero.docx", _writes(b""), "is empty"),
        ("zero-byte pdf", "zero.pdf", _writes(b""), "is empty"),
        ("zero-byte html", "zero.html", _writes(b""), "is empty"),
        ("truncated pdf", "cut.pdf", _truncated_pdf, "PDF"),
        ("text file named .pdf", "text.pdf", _writes(b"just text, not a PDF at all"), "PDF"),
        ("encrypted pdf", "enc.pdf", h.encrypted_pdf, "encrypted"),
        ("html with only a script", "script.html", _script_html, "no text"),
        ("docx bytes named .html", "docx.html", _docx_as_html, "html"),
        ("binary junk named .pdf", "junk.pdf", _writes(bytes(range(256)) * 64), "PDF"),
        ("zip of 10,001 parts named .docx", "many.docx", _many_parts, "parts"),
    ]
    for name, rel, make, fragment in bad_named:
        add(Case(area, f"named: {name}", ["index", "{tmp}/" + rel, *I], 2, _file(rel, make),
            timeout=300, fragment=fragment))
    # --- the same files inside a folder: exit 0, good files indexed, bad ones warned
    for name, rel, make, _ in bad_named:
        add(Case(area, f"folder with a {name}", ["index", "{tmp}/d", *I], 0, _folder([(rel, make)]),
            timeout=300, check=_indexed("good.pdf", "good.docx", "good.html", total=3)))
    for name, rel, make, suffix in good_named[:6]:
        add(Case(area, f"folder with a {name}", ["index", "{tmp}/d", *I], 0, _folder([(rel, make)]),
            timeout=300, check=_indexed("good.pdf", suffix, total=4)))
    add(Case(area, "nested folder with every bad kind among good files", ["index", "{tmp}/d", *I],
        0, _folder([(f"sub/deeper/{rel}", make) for _, rel, make, _ in bad_named[:9]]
        + [(b"sub/\xff.pdf", h.pdf), ("sub/gap.html", h.html_with_space_run)]), timeout=600,
        check=_indexed("good.pdf", "good.docx", "good.html", "\\xff.pdf", "gap.html", total=5)))
    add(Case(area, "new index from a folder of only bad files",
        ["index", "{tmp}/d", "--index", "{tmp}/new"], 2, _file("d/enc.pdf", h.encrypted_pdf),
        fragment="no readable documents"))
    add(Case(area, "index --json with a non-UTF-8 docx skipped", ["index", "{tmp}/d", *I, "--json"],
        0, _folder([(b"\xff\xfe.docx", _writes(b"not a zip"))]), timeout=300,
        check=_indexed("good.pdf", total=3)))
    return c
# fmt: on


def _many_parts(p: Path) -> None:
    import zipfile

    with zipfile.ZipFile(p, "w") as z:
        for i in range(10_001):
            z.writestr(f"p{i}", b"")
