"""Layout is not text (issue 44, item 3): real PDFs (reportlab) with running headers, footers,
page numbers and a sentence across a page break, and an HTML page with table rules, read by
ragsieve's readers; page provenance stays exact by offsets."""

from __future__ import annotations

from pathlib import Path

from ragsieve.formats import PAGE_BREAK, PAGE_JOIN, drop_page_layout, locate, read_rich
from ragsieve.text import has_words, sentence_texts, split_sentences

BODY = [
    "The harbour authority met on the first Monday of the month.",
    "Tonnage figures for the quarter were read out and compared.",
    "The pilot station asked for a second launch before the winter.",
]
RUNS_ON = "The new dredger Albatross was commissioned on 14 March 2019 and was built in"
CONTINUED = "Rotterdam by the Damen yard over eleven months."


def layout_pdf(path: Path, pages: list[list[str]], head: str, foot: str) -> Path:
    """A PDF whose pages carry a running head at the top and a foot at the bottom (``{n}`` is
    the page number, ``{total}`` the page count), drawn in reading order."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    for n, lines in enumerate(pages, start=1):
        c.drawString(72, 810, head.format(n=n, total=len(pages)))
        y = 770
        for line in lines:
            c.drawString(72, y, line)
            y -= 16
        c.drawString(290, 30, foot.format(n=n, total=len(pages)))
        c.showPage()
    c.save()
    return path


def test_running_heads_feet_and_page_numbers_are_dropped(tmp_path: Path) -> None:
    for head, foot in [
        ("Harbour Report 2019", "{n}"),
        ("Harbour Report 2019", "Page {n}"),
        ("Harbour Report 2019", "{n} / {total}"),
        ("Port of Kessel", "- {n} -"),
        ("Chapter 3: Dredging {n}", "Annual report of the harbour authority"),
    ]:
        pages = [BODY, [*BODY[:2], RUNS_ON], [CONTINUED, BODY[2]], ["Appendix tables follow."]]
        rich = read_rich(layout_pdf(tmp_path / "r.pdf", pages, head, foot))
        text = rich.text
        assert text.count("\f") == 3, (head, foot)  # four pages, three breaks
        lines = [line.strip() for line in text.split("\n")]
        assert not any(
            line.startswith(("Harbour Report", "Port of", "Chapter 3")) for line in lines
        )
        assert "Annual report" not in text and "Page " not in text
        assert not [u for u in sentence_texts(text) if not has_words(u)], (head, foot, text)
        # the sentence across the page break is one sentence, on pages 2-3
        joined = f"{RUNS_ON}{PAGE_JOIN}{CONTINUED}"
        assert joined in text
        start = text.index(RUNS_ON)
        spans = [(a, b) for a, b in split_sentences(text) if a <= start < b]
        assert spans and text[spans[0][0] : spans[0][1]] == joined
        assert locate(text, *spans[0]) == "pages 2-3"
        assert locate(text, text.index("Appendix")) == "page 4"
        assert locate(text, text.index(BODY[2], text.index(CONTINUED))) == "page 3"
        assert locate(text, text.index(BODY[0])) == "page 1"
        assert text.count(PAGE_BREAK) == 2  # the other breaks stay paragraph breaks


def test_a_page_that_ends_a_sentence_or_a_heading_is_not_joined(tmp_path: Path) -> None:
    pages = [[*BODY, "2.3 Dredging plans"], ["The works start in May."], [BODY[0], "see the"]]
    pages.append(["4 Function reference", BODY[1]])  # after "see the": not joined
    text = read_rich(layout_pdf(tmp_path / "j.pdf", pages, "Harbour Report", "{n}")).text
    assert text.count(PAGE_BREAK) == 3 and PAGE_JOIN not in text  # heading; "4 Function ..."
    assert locate(text, text.index("The works")) == "page 2"


def test_lines_inside_a_page_and_labels_are_kept() -> None:
    body = ["Possible return values:", "BZ_OK", "42", "if the stream ended."]
    pages = [f"Library\n{body[0]}\nsome text\n{body[0]}" for _ in range(4)]
    pages.append("Library\nA table of sizes:\n42\n17\nend of table.\n9")
    out = drop_page_layout(pages)
    assert all("Library" not in p for p in out)  # the running head, on every page
    assert all(p.count("Possible return values:") == 2 for p in out[:4])  # a label, kept
    assert "42\n17" in out[4] and not out[4].endswith("9")  # numbers inside a page stay
    # a document that would be left with nothing keeps its text
    assert drop_page_layout(["1", "2", "3"]) == ["1", "2", "3"]


def test_chapter_heads_of_one_page_each_are_dropped(tmp_path: Path) -> None:
    heads = ["Introduction", "Copyright", "Conventions", "Linking"]
    pages = [[f"{BODY[i % 3]}"] for i in range(4)]
    path = tmp_path / "c.pdf"
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path))
    for i, (name, lines) in enumerate(zip(heads, pages, strict=True), start=1):
        c.drawString(72, 810, f"Chapter {i}: {name} {i + 1}")
        c.drawString(72, 770, lines[0])
        c.showPage()
    c.save()
    text = read_rich(path).text
    assert "Chapter" not in text and all(b in text for b in BODY)


def test_html_tables_rules_and_fences_leave_no_unit_without_words(tmp_path: Path) -> None:
    page = tmp_path / "t.html"
    page.write_text(
        "<html><head><title>Sizes</title></head><body><article><h1>Block sizes</h1>"
        "<p>The block size affects the compression ratio and the memory needed.</p>"
        "<table><tr><th>flag</th><th>memory</th></tr><tr><td>-1</td><td>1200k</td></tr>"
        "<tr><td>|</td><td>9</td></tr></table><hr>"
        "<pre><code>\n</code></pre><p>14</p>"
        "<p>Larger block sizes give rapidly diminishing marginal returns.</p>"
        "</article></body></html>",
        encoding="utf-8",
    )
    text = read_rich(page).text
    units = sentence_texts(text)
    assert "Larger block sizes give rapidly diminishing marginal returns." in units
    junk = [u for u in units if not has_words(u)]
    assert "14" in junk  # read, but never a candidate
    kept = [u for u in units if has_words(u)]
    assert all(any(c.isalpha() for c in u) for u in kept)
    assert locate(text, text.index("Larger")) == "Block sizes"
