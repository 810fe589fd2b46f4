"""PDF, HTML and DOCX files go in (real files written by reportlab and python-docx), with their
pages and headings; a scan without a text layer is one warning; the acceptance folder of 3 PDFs,
2 HTML pages and 2 DOCX files indexes without a warning and ``ask`` reports "page 3"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run
from rich_docs import FACT, write_docx, write_folder, write_html, write_pdf, write_scanned_pdf

from ragsieve.errors import InputError
from ragsieve.formats import locate, read_rich
from ragsieve.io import load_paths


def test_a_pdf_keeps_its_pages_and_title(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "r.pdf", [["one"], ["two"], ["Dredging", FACT]], title="Report")
    rich = read_rich(pdf)
    assert rich.title == "Report" and rich.text.count("\f") == 2  # page 1 runs on to page 2
    assert locate(rich.text, rich.text.index("Albatross")) == "page 3"
    assert locate(rich.text, 0) == "page 1"
    untitled = read_rich(write_pdf(tmp_path / "u.pdf", [["text"]]))
    assert untitled.title == ""  # reportlab's "untitled" placeholder is not a title


def test_html_main_content_without_menu_and_footer(tmp_path: Path) -> None:
    page = write_html(tmp_path / "p.html", "Sourdough", "Starter", ["Feed it flour and water."])
    rich = read_rich(page)
    assert rich.title == "Sourdough" and "Feed it flour and water." in rich.text
    assert "menu entry" not in rich.text and "Cookie settings" not in rich.text
    assert locate(rich.text, rich.text.index("Feed")) == "Starter"


def test_docx_paragraphs_headings_and_tables_in_order(tmp_path: Path) -> None:
    doc = write_docx(tmp_path / "d.docx", "Bees", [("Hives", ["Fifty thousand bees."])])
    rich = read_rich(doc)
    assert rich.text.index("# Bees") < rich.text.index("Hives") < rich.text.index("Fifty")
    assert "crates | 12" in rich.text
    assert locate(rich.text, rich.text.index("Fifty")) == "Hives"
    (docs,) = [load_paths([doc]).documents]
    assert docs[0].title == "Bees"


def test_docx_house_heading_styles_and_outline_levels_are_headings(tmp_path: Path) -> None:
    """A custom style based on Heading 2, and an outline level set on a plain paragraph or on
    a custom style, are headings as Word's navigation pane shows them; outline level 9 and
    plain body text are not."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    def outline(ppr_owner: object, level: int) -> None:
        lvl = OxmlElement("w:outlineLvl")
        lvl.set(qn("w:val"), str(level))
        ppr_owner.get_or_add_pPr().append(lvl)  # type: ignore[attr-defined]

    d = docx.Document()
    chapter = d.styles.add_style("Chapter", WD_STYLE_TYPE.PARAGRAPH)
    chapter.base_style = d.styles["Heading 2"]
    part = d.styles.add_style("Part", WD_STYLE_TYPE.PARAGRAPH)
    outline(part.element, 0)
    d.add_paragraph("Installing the hive", style="Part")
    d.add_paragraph("Frames go in first, then the queen cage.")
    d.add_paragraph("Feeding", style="Chapter")
    d.add_paragraph("Sugar syrup is one part sugar to one part water.")
    outline(d.add_paragraph("Winter care")._p, 2)
    d.add_paragraph("Wrap the hive when nights fall below freezing.")
    outline(d.add_paragraph("Body text at level nine")._p, 9)
    d.save(str(tmp_path / "house.docx"))
    text = read_rich(tmp_path / "house.docx").text
    assert "# Installing the hive" in text and "## Feeding" in text
    assert "### Winter care" in text and "# Body text" not in text
    assert locate(text, text.index("Frames go in")) == "Installing the hive"
    assert locate(text, text.index("Sugar syrup")) == "Feeding"
    assert locate(text, text.index("Wrap the hive")) == "Winter care"
    assert locate(text, text.index("Body text")) == "Winter care"


def test_a_scan_is_one_warning_in_a_folder_and_an_error_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    write_pdf(folder / "ok.pdf", [["Real text here."]])
    scan = write_scanned_pdf(folder / "scan.pdf")
    (folder / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    rep = load_paths([folder])
    assert [d.title for d in rep.documents] == ["ok"]
    reasons = dict(rep.skipped)
    assert "no text layer" in reasons[str(scan)] and "OCR" in reasons[str(scan)]
    assert "cannot read this DOCX file" in reasons[str(folder / "broken.docx")]
    assert all("\n" not in r for r in reasons.values())
    with pytest.raises(InputError, match="no text layer"):
        load_paths([scan])


@pytest.mark.integration
def test_a_folder_of_real_documents_answers_with_its_page(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "docs")
    idx = tmp_path / "ix"
    p = run("index", str(folder), "--index", str(idx), "--json")
    assert p.returncode == 0, p.stderr
    assert "warning" not in p.stderr and json.loads(p.stdout)["added"] == 7
    q = "When was the dredger Albatross commissioned?"
    p = run("search", q, "--index", str(idx), "--k", "1", "--json")
    hit = json.loads(p.stdout)["results"][0]
    assert "Albatross" in hit["text"] and hit["where"] in ("page 3", "pages 2-3")
    p = run("ask", q, "--index", str(idx), "--max-tokens", "24", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert "2019" in out["answer"]
    top = next(c for c in out["context"] if "Albatross" in c["text"])
    assert top["where"] == "page 3" and top["title"] == "Harbour report"
    p = run("ask", q, "--index", str(idx), "--max-tokens", "24")
    assert "Harbour report (page 3)" in p.stdout
    p = run("explain", q, "--index", str(idx), "--method", "tagger", "--json")
    rep = json.loads(p.stdout)
    assert "page 3" in rep["where"].values()
    segs = [s for d in rep["documents"] for s in d["segments"] if s["selected"]]
    assert any(s["where"] == "page 3" for s in segs)


def test_a_scan_named_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    scan = write_scanned_pdf(tmp_path / "scan.pdf")
    assert_one_line_error(run("index", str(scan), "--index", str(tmp_path / "ix")), 2, "OCR")
    assert not (tmp_path / "ix").exists()
