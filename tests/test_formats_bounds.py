"""Issue 45: the rich readers are bounded. Zip bombs, megabyte titles, million-space runs,
non-UTF-8 names, encrypted and damaged files: one line each by name, a skip inside a folder,
and a folder with one bad file among good ones indexes the good ones. Real files only."""

from __future__ import annotations

import json
import os
import resource
import zipfile
from collections.abc import Callable
from pathlib import Path

import hostile_docs as h
import pytest
from cli_helpers import assert_one_line_error, run

from ragsieve.errors import InputError
from ragsieve.formats import (
    MAX_TITLE_CHARS,
    MAX_WHITESPACE_RUN,
    PAGE_BREAK,
    collapse_space,
    locate,
    read_rich,
    short_title,
)
from ragsieve.io import load_paths, read_file, read_source

GAP = "The second sentence follows the gap."


@pytest.mark.parametrize(
    "make", [h.pdf_with_space_run, h.html_with_space_run, h.docx_with_space_run]
)
def test_a_million_spaces_are_cut_in_every_rich_reader(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    suffix = {"pdf": ".pdf", "html": ".html", "docx": ".docx"}[make.__name__.split("_")[0]]
    doc = read_file(make(tmp_path / f"gap{suffix}"))[0]
    assert len(doc.text) < 1000, len(doc.text)
    assert h.WORDS.split()[0] in doc.text and GAP in doc.text
    assert " " * (MAX_WHITESPACE_RUN + 1) not in doc.text


def test_a_cut_keeps_pdf_pages_and_headings_where_they_were(tmp_path: Path) -> None:
    pdf = h.pdf(tmp_path / "p.pdf", ["Page one text." + " " * 5000 + "still page one."], pages=3)
    text = read_rich(pdf).text
    assert text.count("\f") == 2 and len(text) < 1000
    assert locate(text, text.rindex("still page one.")) == "page 3"
    # a run with one line break before a heading keeps the heading on its own line
    md = collapse_space("intro" + " " * 500 + "\n# Results\nbody")
    assert locate(md, md.index("body")) == "Results"
    assert collapse_space("a" + " \n" * 300 + "b") == "a\n\nb"
    assert PAGE_BREAK in read_rich(pdf).text


def test_a_zip_bomb_docx_is_one_line_by_name_and_a_skip_in_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    bomb = h.docx_bomb(folder / "bomb.docx", mb=400)
    assert bomb.stat().st_size < 2 * 2**20  # a 1 MB file on disk
    h.docx(folder / "good.docx")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(InputError, match="inflate to 401 MB"):
        read_file(bomb)
    loaded = load_paths([folder])
    assert [Path(d.source).name for d in loaded.documents] == ["good.docx"]
    assert "zip bomb" in loaded.skipped[0][1]
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100, grown_mb  # refused from the central directory: nothing inflated


def test_a_bomb_under_the_total_cap_is_refused_by_its_ratio(tmp_path: Path) -> None:
    bomb = h.docx_bomb(tmp_path / "ratio.docx", mb=60)
    with pytest.raises(InputError, match=r"inflates \d+:1"):
        read_file(bomb)


def test_a_central_directory_that_lies_cannot_inflate_past_it(tmp_path: Path) -> None:
    """Declared tiny, inflating to 50 MB: zipfile stops at the declared size (CRC fails)."""
    small = h.zip_declaring(h.docx_bomb(tmp_path / "lie.docx", mb=50), 1000)
    with pytest.raises(InputError, match="cannot read this DOCX") as e:
        read_file(small)
    assert "\n" not in str(e.value)
    huge = h.zip_declaring(tmp_path / "huge.docx", 4_000_000_000)
    with pytest.raises(InputError, match="limit 200 MB"):
        read_file(huge)


@pytest.mark.parametrize("suffix", [".pdf", ".html", ".docx", ".md"])
def test_a_non_utf8_name_is_indexed_under_an_escaped_id(tmp_path: Path, suffix: str) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    path = h.bytes_name(folder, b"caf\xe9" + suffix.encode())
    {".pdf": h.pdf, ".html": h.html, ".docx": h.docx}.get(suffix, _md)(path)
    loaded = load_paths([folder])
    assert loaded.skipped == [], loaded.skipped
    (doc,) = loaded.documents
    assert doc.id.endswith("caf\\xe9" + suffix) and doc.source.endswith("caf\\xe9" + suffix)
    (doc.id + doc.title + doc.source + doc.text).encode("utf-8")  # storable


def _md(path: Path) -> Path:
    path.write_text("# Notes\n" + h.WORDS)
    return path


@pytest.mark.parametrize("fmt", ["pdf", "docx", "html"])
def test_a_megabyte_title_is_cut_at_a_word(tmp_path: Path, fmt: str) -> None:
    title = "Harbour " * 125_000
    path = tmp_path / f"t.{fmt}"
    if fmt == "pdf":
        h.pdf(path, title=title)
    elif fmt == "docx":
        h.docx(path, title=title)
    else:
        h.html(path, title=title)
    doc = read_file(path)[0]
    assert len(doc.title) <= MAX_TITLE_CHARS, len(doc.title)
    if fmt != "html":  # trafilatura may prefer the page's <h1>, a short title anyway
        assert doc.title.endswith("Harbour\u2026"), doc.title


def test_short_title() -> None:
    assert short_title("  A   short\ntitle ") == "A short title"
    assert short_title("x" * 10_000) == "x" * (MAX_TITLE_CHARS - 1) + "\u2026"
    jsonl = short_title("word " * 1000)
    assert len(jsonl) <= MAX_TITLE_CHARS and jsonl.endswith("word\u2026")


def _writes(data: bytes) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        path.write_bytes(data)
        return path

    return make


def _truncated_pdf(path: Path) -> Path:
    """A real PDF cut after 300 bytes (a broken download)."""
    path.write_bytes(h.pdf(path).read_bytes()[:300])
    return path


@pytest.mark.parametrize(
    ("name", "make", "fragment"),
    [
        ("enc.pdf", h.encrypted_pdf, r"encrypted \(password protected\)"),
        ("zero.pdf", _writes(b""), "is empty"),
        ("cut.pdf", _truncated_pdf, "PDF"),
        ("text.pdf", _writes(b"just some text, not a PDF"), "PDF"),
        ("notzip.docx", _writes(b"not a zip"), "not a zip archive"),
        ("zero.docx", _writes(b""), "is empty"),
        ("script.html", _writes(b"<script>var a = 1;</script>"), "no text"),
        ("zero.html", _writes(b""), "is empty"),
    ],
)
def test_broken_rich_files_are_one_line_by_name_and_skipped_in_a_folder(
    tmp_path: Path, name: str, make: Callable[[Path], Path], fragment: str
) -> None:
    path = make(tmp_path / name)
    with pytest.raises(InputError, match=fragment) as e:
        read_source(path, True)
    assert "\n" not in str(e.value)
    docs, why = read_source(path, False)
    assert docs == [] and why is not None and "\n" not in why


def test_any_reader_failure_is_a_skip_in_a_folder_and_one_line_by_name(tmp_path: Path) -> None:
    """Not only InputError: a directory named like a file makes the reader raise OSError."""
    odd = tmp_path / "odd.pdf"
    odd.write_bytes(b"%PDF-1.4\n" + b"1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" * 3)
    docs, why = read_source(odd, False)
    # The reason, without the path the warning names already ("skipped PATH: reason").
    assert docs == [] and why and "cannot read this PDF file" in why and "odd.pdf" not in why
    with pytest.raises(InputError):
        read_source(odd, True)


def test_a_folder_with_hostile_files_indexes_its_good_ones(tmp_path: Path) -> None:
    """The real CLI: exit 0, the good files indexed, each bad one a one-line warning."""
    d = tmp_path / "corpus"
    (d / "sub").mkdir(parents=True)
    h.pdf(d / "good.pdf", ["The lighthouse keeper logs the tide at Port Kessel."])
    h.docx(d / "sub" / "good.docx")
    h.html(d / "good.html")
    h.pdf_with_space_run(d / "sub" / "spaces.pdf")
    h.html_with_space_run(d / "spaces.html")
    h.docx_with_space_run(d / "spaces.docx")
    h.docx_bomb(d / "sub" / "bomb.docx", mb=300)
    h.encrypted_pdf(d / "enc.pdf")
    h.pdf(h.bytes_name(d, b"caf\xe9.pdf"))
    h.html(h.bytes_name(d, b"r\xe9sum\xe9.html"))
    h.docx(h.bytes_name(d / "sub", b"\xff.docx"))
    (d / "broken.docx").write_text("not a zip")
    p = run("index", str(d), "--index", str(tmp_path / "idx"), "--json", timeout=600)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "error:" not in p.stderr
    out = json.loads(p.stdout)
    assert out["added"] == 9 and out["total_documents"] == 9, out
    warned = [ln for ln in p.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warned) == 3 and all(n in p.stderr for n in ("bomb.docx", "enc.pdf", "broken"))
    info = run("info", "--index", str(tmp_path / "idx"), "--documents", "--json")
    assert info.returncode == 0 and len(info.stdout) < 20_000


@pytest.mark.parametrize("name", ["bomb.docx", "gap.pdf"])
def test_a_hostile_file_named_on_the_command_line(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name == "bomb.docx":
        h.docx_bomb(path, mb=300)
        p = run("index", str(path), "--index", str(tmp_path / "idx"))
        assert_one_line_error(p, 2, "zip bomb")
        assert not (tmp_path / "idx").exists()
    else:
        h.pdf_with_space_run(path)
        p = run("index", str(path), "--index", str(tmp_path / "idx"), "--json")
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["n_chunks" if False else "added"] == 1


def test_zip_bounds_read_the_central_directory_only(tmp_path: Path) -> None:
    """A zip of many tiny parts past the member cap is refused before any is inflated."""
    path = tmp_path / "many.docx"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(10_001):
            z.writestr(f"p{i}", b"")
    with pytest.raises(InputError, match="parts"):
        read_file(path)
    assert os.path.getsize(path) < 2**21


def test_html_paragraph_text_is_gathered_in_linear_time_with_the_same_nodes(
    tmp_path: Path,
) -> None:
    """trafilatura's ``//p//text()`` (quadratic in libxml2 2.14) answered paragraph by
    paragraph: the same strings in the same order, nested and inline elements included."""
    from lxml import etree
    from trafilatura import utils

    from ragsieve.webpage import linear_html_parser

    linear_html_parser()
    page = (
        "<html><body><div><p>one <b>bold</b> tail</p><p>two<p>nested?</p></p></div>"
        "<article>" + "".join(f"<p>p{i} <i>x{i}</i> y</p>" for i in range(2000)) + "</article>"
        "<table><tr><td><p>cell</p></td></tr></table></body></html>"
    )
    tree = utils.load_html(page)
    ours = tree.xpath("//p//text()")
    libxml = etree._Element.xpath(tree, "//p//text()")
    assert [str(t) for t in ours] == [str(t) for t in libxml] and len(ours) > 6000
    doc = read_file(h.html(tmp_path / "p.html", body="A paragraph about tides."))[0]
    assert "A paragraph about tides." in doc.text


@pytest.mark.parametrize("depth", [300, 1_000, 5_000])
def test_deeply_nested_html_is_read(tmp_path: Path, depth: int) -> None:
    """libxml2 stops at 256 levels (its tree, not the text); past what any tree parser takes
    the page is read flat. Alone in a folder, it is a document, not "no readable documents"."""
    body = "<h2>Kelp</h2><p>The deep page says the otter sleeps in kelp forests at night.</p>"
    page = (
        "<html><head><title>Deep page</title><style>p {color: red}</style></head><body>"
        + "<div>" * depth
        + body
        + "</div>" * depth
        + "<script>var hidden = 1;</script></body></html>"
    )
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "deep.html").write_text(page, encoding="utf-8")
    rep = load_paths([folder])
    assert rep.skipped == []
    (doc,) = rep.documents
    assert "the otter sleeps in kelp forests" in doc.text and doc.title == "Deep page"
    assert "color" not in doc.text and "hidden" not in doc.text


def test_a_page_read_flat_keeps_its_visible_text_and_headings() -> None:
    from ragsieve.webpage import flat_html_text

    page = (
        b"<html><head><title>T</title><style>x{}</style></head><body><h2>Kelp</h2>"
        b"<p>One &amp; two.</p><script>bad()</script><ul><li>a</li><li>b</li></ul></body></html>"
    )
    assert flat_html_text(page) == "## Kelp\n\nOne & two.\n\na\n\nb"
