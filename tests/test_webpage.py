"""HTML pages read through trafilatura keep their headings, so each unit has a ``where``."""

from __future__ import annotations

import re
from pathlib import Path

import trafilatura

from ragsieve.formats import headings, locate, read_rich
from ragsieve.webpage import HeadingMarks

#: What a heading mark looks like (:class:`HeadingMarks`).
MARK = re.compile(r"rsh[0-9a-f]{12}")

BODY = (
    "Compile your program with -g to include debugging information so that the error "
    "messages of the checker include exact line numbers. "
)

#: A DocBook page as xsltproc writes one (valgrind's manuals): each heading sits in a
#: ``div.titlepage``, a block trafilatura reads as boilerplate.
DOCBOOK = f"""<html><head><title>Quick Start Guide</title></head><body>
<div class="article"><div class="titlepage"><div><div><h1 class="title">
<a name="quick-start"></a>The Quick Start Guide</h1></div></div><hr></div>
<div class="sect1"><div class="titlepage"><div><div><h2 class="title" style="clear: both">
<a name="quick-start.prepare"></a>2. Preparing your program</h2></div></div></div>
<p>{BODY * 3}</p>
<div class="sect1"><div class="titlepage"><div><div><h2 class="title" style="clear: both">
<a name="quick-start.mcrun"></a>3. Running your program under the checker</h2></div></div></div>
<p>If you normally run your program like this, run it under the checker instead, and the
checker reports each error it finds with the stack trace where it happened. {BODY * 2}</p>
</div></div></div></body></html>"""


def _write(tmp_path: Path, html: str, name: str = "page.html") -> Path:
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return path


def test_headings_in_boilerplate_blocks_reach_the_text_and_where(tmp_path: Path) -> None:
    text = read_rich(_write(tmp_path, DOCBOOK)).text
    names = [h[2] for h in headings(text)]
    assert names == [
        "The Quick Start Guide",
        "2. Preparing your program",
        "3. Running your program under the checker",
    ]
    assert not MARK.search(text)  # no mark is left
    at = text.index("If you normally run")
    assert locate(text, at) == "3. Running your program under the checker"
    assert locate(text, text.index("Compile your program")) == "2. Preparing your program"


def test_a_heading_inside_a_table_cell_is_plain_text(tmp_path: Path) -> None:
    """A heading that trafilatura writes inside a line (a table cell) keeps its words and
    loses its mark; it names no section, since it starts no line."""
    rows = "".join(
        f"<tr><td><h3>{n}. Question number {n}</h3></td><td>{BODY}</td></tr>" for n in (1, 2, 3)
    )
    html = f"<html><body><p>{BODY * 2}</p><table>{rows}</table><p>{BODY}</p></body></html>"
    text = read_rich(_write(tmp_path, html)).text
    assert "Question number 2" in text
    assert not MARK.search(text)
    assert headings(text) == ()


def test_a_page_cannot_forge_a_heading_mark(tmp_path: Path) -> None:
    """The mark is new for every page: text shaped like one stays as it is, and becomes no
    heading."""
    first = HeadingMarks()
    forged = f"{first.token}2 Not a heading"
    html = f"<html><body><p>{forged} {BODY}</p><p>{BODY * 2}</p></body></html>"
    text = read_rich(_write(tmp_path, html)).text
    assert forged in text
    assert HeadingMarks().token != first.token
    assert headings(text) == ()


def test_mark_and_restore_round_trip_through_trafilatura() -> None:
    tree = trafilatura.load_html(DOCBOOK)
    marks = HeadingMarks()
    assert marks.mark(tree) == 3
    out = trafilatura.extract(tree, output_format="markdown", favor_recall=True)
    restored = marks.restore(out or "")
    assert "# The Quick Start Guide" in restored
    assert "## 2. Preparing your program" in restored
    assert marks.token not in restored


def test_a_comment_line_of_an_unfenced_pre_block_is_no_heading(tmp_path: Path) -> None:
    """trafilatura writes a ``<pre>`` without ``<code>`` as plain lines, so a shell or ninja
    comment inside ("# If left unspecified, ...") would read as a heading and a ``where``; it
    stays page text (escaped), while a fenced block's comment stays as written."""
    html = f"""<html><body><h1>Build statements</h1><p>{BODY * 2}</p>
<pre class="screen">cflags = -Wall
# If left unspecified, builds get the outer $cflags.
build foo.o: cc foo.c
</pre><p>{BODY}</p><pre><code>x = 1
# a fenced comment
</code></pre><h2>Pools</h2><p>{BODY}</p></body></html>"""
    text = read_rich(_write(tmp_path, html)).text
    assert [h[2] for h in headings(text)] == ["Build statements", "Pools"]
    assert "\\# If left unspecified, builds get the outer $cflags." in text
    assert "\n# a fenced comment\n" in text
    assert locate(text, text.index("build foo.o")) == "Build statements"


def test_a_fence_opened_after_text_hides_no_heading(tmp_path: Path) -> None:
    """trafilatura writes a ``<code>`` of two lines inside a paragraph as a fence opened at the
    end of a line of text ("calls like ```"); that fence gets a line of its own, so the one
    closing it opens nothing and the headings after it stay headings."""
    html = f"""<html><body><h1>Generating files</h1><p>{BODY}</p><p><code>misc/syntax.py</code>
is a Python module to generate Ninja files.  It allows you to make
Python calls like <code class="literal">ninja.rule(name='foo', command='bar',
depfile='$out.d')</code> and it writes the syntax.</p><h2>The phony rule</h2><p>{BODY * 2}</p>
<h2>Pools</h2><p>Pools allow you to allocate one or more rules or edges a finite number of
concurrent jobs, which is more tightly restricted than the default parallelism.</p>
</body></html>"""
    text = read_rich(_write(tmp_path, html)).text
    assert [h[2] for h in headings(text)] == ["Generating files", "The phony rule", "Pools"]
    assert locate(text, text.index("concurrent jobs")) == "Pools"
