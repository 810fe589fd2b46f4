"""Issue 46, item 5: titles that explain themselves. Real files: a Sphinx page whose headings
carry permalink marks, a Node.js API page, Markdown titled with a link, PDFs (reportlab) whose
first page holds a ``# comment`` line, and two pages of one ``<title>`` in two folders, told
apart by their path in ``info --documents`` and ``search`` (the real CLI on a real index)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run
from rich_docs import FILLER, write_pdf

from ragsieve.formats import locate, markdown_title, plain_markdown, read_rich, rst_title
from ragsieve.io import read_file
from ragsieve.titles import SEPARATOR, display_names, distinguishing_suffixes

SPHINX = """<!DOCTYPE html><html><head><meta charset="utf-8">
<title>Abstract &#8212; Harbour 1.0 documentation</title></head><body>
<div class="related"><ul><li><a href="index.html">Harbour 1.0 documentation</a></li></ul></div>
<div class="body" role="main"><section id="abstract">
<h1>Abstract<a class="headerlink" href="#abstract" title="Link to this heading">¶</a></h1>
<p>This document describes how the harbour authority schedules its dredging work.</p>
<section id="tides"><h2>Tides<a class="headerlink" href="#tides" title="Permalink">¶</a></h2>
<p>The pilots read the tide tables every morning before the first ship comes in.</p>
</section></section></div></body></html>"""

NODE = """<!DOCTYPE html><html><head><title>{title}</title></head><body>
<header><h1>Node.js v20.11.1 documentation</h1></header><div id="apicontent"><section>
<h2>{heading}<span><a class="mark" href="#{anchor}" id="{anchor}">#</a></span></h2>
<p>{body}</p></section></div></body></html>"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_sphinx_page_has_no_permalink_mark_in_its_title_or_headings(tmp_path: Path) -> None:
    rich = read_rich(_write(tmp_path / "abstract.html", SPHINX))
    assert rich.title == "Abstract \u2014 Harbour 1.0 documentation"
    assert "\u00b6" not in rich.text and "# Abstract" in rich.text
    assert locate(rich.text, rich.text.index("pilots")) == "Tides"
    # Without a <title>, the first heading, cleaned the same way.
    bare = SPHINX.replace("<title>Abstract &#8212; Harbour 1.0 documentation</title>", "")
    assert read_rich(_write(tmp_path / "bare.html", bare)).title == "Abstract"


def test_a_node_page_takes_its_title_not_the_sites_shared_h1(tmp_path: Path) -> None:
    page = NODE.format(
        title="File system | Node.js v20.11.1 Documentation",
        heading="File system",
        anchor="file-system",
        body="The node:fs module enables interacting with the file system in a POSIX way.",
    )
    rich = read_rich(_write(tmp_path / "fs.html", page))
    assert rich.title == "File system | Node.js v20.11.1 Documentation"
    assert locate(rich.text, rich.text.index("POSIX")) == "File system"
    assert "File system#" not in rich.text


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# [Title](http://x)\n\nBody.", "Title"),
        ("# [Harbour guide](https://example.org/guide) ##\n", "Harbour guide"),
        (
            "# ![logo](logo.png) **Harbour** _tides_ `tide_table()`\n",
            "logo Harbour tides tide_table()",
        ),
        ("# <em>Pilots</em> &amp; keepers\n", "Pilots & keepers"),
        ("[![build](b.svg)](ci)\n\n# Dredging \\*notes\\*\n", "Dredging *notes*"),
        ('---\ntitle: "Front matter"\n---\n# Other\n', "Front matter"),
        ("Harbour\n=======\n\nBody.\n\n# Later\n", "Harbour"),
        ("```sh\n# update-mime-database command. DO NOT EDIT!\n```\n\n# Real\n", "Real"),
        ("## Usage\n\nBody.\n", "Usage"),
        ("Some text first.\n\n## Usage\n", ""),
        ("# C#\n", "C#"),
        ("# my_var_name\n", "my_var_name"),
    ],
)
def test_a_markdown_title_is_its_first_headings_plain_text(text: str, title: str) -> None:
    assert markdown_title(text) == title


def test_a_markdown_file_is_titled_with_plain_text_and_located_outside_code(
    tmp_path: Path,
) -> None:
    md = _write(
        tmp_path / "guide.md",
        "# [Harbour guide](http://example.org)\n\nIntro.\n\n## [Tides](#tides)\n\n"
        "```bash\n# fetch the tables\ncurl example.org\n```\n\nAfter the code block.\n",
    )
    doc = read_file(md)[0]
    assert doc.title == "Harbour guide"
    assert locate(doc.text, doc.text.index("curl")) == "Tides"
    assert locate(doc.text, doc.text.index("After")) == "Tides"
    assert read_file(_write(tmp_path / "notes.md", "No heading here.\n"))[0].title == "notes"
    rst = _write(tmp_path / "r.rst", "=========\nPilotage\n=========\n\nText.\n")
    assert read_file(rst)[0].title == "Pilotage" and rst_title("Plain text.\n") == ""
    assert plain_markdown("[a](b) and ![c](d) ¶") == "a and c"


def _comment_pdf(path: Path, title: str = "") -> Path:
    """Page 1: a line, a ``# comment`` line and content after it; page 2: more content."""
    page1 = ["Installing the viewer", "# update-mime-database command. DO NOT EDIT!"]
    page1 += ["The viewer reads MIME types from the shared database.", *FILLER[:3]]
    return write_pdf(path, [page1, ["Icons are looked up by their MIME type.", *FILLER[:3]]], title)


def _heading_pdf(path: Path) -> Path:
    """A one-page PDF whose heading is set large, above a ``# comment`` line in body type."""
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    c.setFont("Helvetica-Bold", 20)
    c.drawString(72, 800, "Shared MIME-info Database")
    c.setFont("Helvetica", 11)
    for i, line in enumerate(["# update-mime-database command. DO NOT EDIT!", *FILLER[:4]]):
        c.drawString(72, 770 - 15 * i, line)
    c.showPage()
    c.save()
    return path


def test_a_pdfs_title_and_locations_never_come_from_a_code_comment(tmp_path: Path) -> None:
    titled = read_rich(_comment_pdf(tmp_path / "titled.pdf", title="Viewer manual"))
    assert titled.title == "Viewer manual"
    untitled = read_file(_comment_pdf(tmp_path / "mime-notes.pdf"))[0]
    assert untitled.title == "mime-notes"  # no /Title, no larger type: the file's name
    text = untitled.text
    # Pages are a PDF's locations, exactly; the "# ..." line is content, not a heading.
    assert locate(text, text.index("The viewer reads")) == "page 1"
    assert locate(text, text.index("Icons")) == "page 2"
    start = text.index("The viewer reads")
    assert locate(text, start, text.index("Icons") + 5) == "pages 1-2"
    assert "# update-mime-database command" in text
    one = read_rich(_heading_pdf(tmp_path / "one.pdf"))
    assert one.title == "Shared MIME-info Database"  # the first heading, by its type size
    assert locate(one.text, one.text.index(FILLER[0][:20])) == "page 1"
    word = read_rich(_comment_pdf(tmp_path / "w.pdf", title="Microsoft Word - Harbour.docx"))
    assert word.title == "Harbour"


def test_listing_names_tell_shared_titles_apart_by_the_end_of_their_paths() -> None:
    ends = distinguishing_suffixes(["/d/v18/api.html", "/d/v20/api.html", "/d/x/fs.html"])
    assert ends == {"/d/v18/api.html": "v18/api.html", "/d/v20/api.html": "v20/api.html"} | {
        "/d/x/fs.html": "fs.html"
    }
    assert distinguishing_suffixes(["a/b", "x/a/b"]) == {"a/b": "a/b", "x/a/b": "x/a/b"}
    docs = [("/s/a/node.html", "Node.js"), ("/s/b/node.html", "Node.js"), ("/s/c.md", "Tides")]
    docs += [("/s/d.jsonl#7", ""), ("/s/e.jsonl#1", "Q"), ("/s/e.jsonl#2", "Q")]
    names = display_names(docs)
    assert names == {
        "/s/a/node.html": f"Node.js{SEPARATOR}a/node.html",
        "/s/b/node.html": f"Node.js{SEPARATOR}b/node.html",
        "/s/c.md": "Tides",
        "/s/d.jsonl#7": "/s/d.jsonl#7",
        "/s/e.jsonl#1": f"Q{SEPARATOR}e.jsonl#1",
        "/s/e.jsonl#2": f"Q{SEPARATOR}e.jsonl#2",
    }


@pytest.mark.integration
def test_two_pages_with_one_title_are_told_apart_in_info_and_search(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    shared = "Node.js v20.11.1 Documentation"
    for sub, heading, body in [
        ("api", "Streams", "A stream is an abstract interface for working with streaming data."),
        ("guides", "Timers", "The timer module exposes a global API for scheduling functions."),
    ]:
        page = NODE.format(title=shared, heading=heading, anchor=heading.lower(), body=body)
        _write(folder / sub / "index.html", page)
    _write(folder / "sphinx.html", SPHINX)
    _write(folder / "guide.md", "# [Harbour guide](http://example.org)\n\nThe quay is long.\n")
    _comment_pdf(folder / "viewer.pdf")
    idx = str(tmp_path / "ix")
    p = run("index", str(folder), "--index", idx, "--json")
    assert p.returncode == 0, p.stderr
    p = run("info", "--index", idx, "--documents", "--json")
    titles = {Path(d["doc_id"]).name: d["title"] for d in json.loads(p.stdout)["document_list"]}
    assert titles["sphinx.html"] == "Abstract \u2014 Harbour 1.0 documentation"
    assert titles["guide.md"] == "Harbour guide" and titles["viewer.pdf"] == "viewer"
    assert titles["index.html"] == shared  # the stored title is left as it is
    p = run("info", "--index", idx, "--documents")
    assert p.returncode == 0, p.stderr
    assert f"{shared}{SEPARATOR}api/index.html" in p.stdout
    assert f"{shared}{SEPARATOR}guides/index.html" in p.stdout
    assert "\u00b6" not in p.stdout and "](http" not in p.stdout
    # One of the two pages is found; it is named by its path's end even shown alone.
    p = run("search", "streaming data interface", "--index", idx, "--k", "1")
    assert p.returncode == 0, p.stderr
    assert f"{shared}{SEPARATOR}api/index.html (Streams)" in p.stdout
    p = run("search", "shared database of MIME types", "--index", idx, "--k", "1", "--json")
    hit = json.loads(p.stdout)["results"][0]
    # A page (or the two a chunk spans), never the "# update-mime-database" comment.
    assert hit["title"] == "viewer" and hit["where"] in ("page 1", "pages 1-2")
