"""Real PDF, HTML and DOCX files for the reader tests, written by reportlab and python-docx (the
HTML by hand: a page with a menu, an article and a footer, as a site serves it)."""

from __future__ import annotations

from pathlib import Path

FILLER = [
    "The committee met in the spring and reviewed the budget of the harbour authority.",
    "Several members asked for more time to study the proposal in detail.",
    "Tonnage figures for the quarter were read out and compared with the last five years.",
    "A delegation from the fishing cooperative described the state of the northern quay.",
    "The chair thanked the staff of the pilot station for their work through the winter.",
] * 3
#: The fact the acceptance question finds, on page 3 of harbour-report.pdf.
FACT = "The new dredger Albatross was commissioned on 14 March 2019 at Port Kessel."


def write_pdf(path: Path, pages: list[list[str]], title: str = "") -> Path:
    """A PDF with a text layer: one list of lines per page."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    if title:
        c.setTitle(title)
    for lines in pages:
        y = 800
        for line in lines:
            c.drawString(72, y, line)
            y -= 16
        c.showPage()
    c.save()
    return path


def write_scanned_pdf(path: Path) -> Path:
    """A PDF of two pages with drawings and no text layer, as a scanner writes one."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    for _ in range(2):
        c.rect(72, 600, 300, 150, fill=1)
        c.showPage()
    c.save()
    return path


def write_docx(path: Path, title: str, sections: list[tuple[str, list[str]]]) -> Path:
    """A DOCX with a Title, Heading 1 sections of paragraphs, and a small table."""
    import docx

    d = docx.Document()
    d.add_heading(title, level=0)
    for heading, paragraphs in sections:
        d.add_heading(heading, level=1)
        for p in paragraphs:
            d.add_paragraph(p)
    table = d.add_table(rows=2, cols=2)
    for r, row in enumerate([("item", "count"), ("crates", "12")]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    d.save(str(path))
    return path


def write_html(path: Path, title: str, heading: str, paragraphs: list[str]) -> Path:
    menu = "".join(f"<li><a href='/{w}'>{w} menu entry</a></li>" for w in ("Home", "News", "Shop"))
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    path.write_text(
        f"<!doctype html><html><head><title>{title}</title></head><body>"
        f"<nav><ul>{menu}</ul></nav><article><h1>{title}</h1><h2>{heading}</h2>{body}</article>"
        "<footer><p>Copyright 2024 Example Publishing. All rights reserved. Cookie settings."
        "</p></footer></body></html>",
        "utf-8",
    )
    return path


def write_folder(folder: Path) -> Path:
    """3 PDFs, 2 HTML pages and 2 DOCX files on unrelated topics; :data:`FACT` is on page 3 of
    ``harbour-report.pdf``."""
    folder.mkdir(parents=True, exist_ok=True)
    write_pdf(
        folder / "harbour-report.pdf",
        [["Harbour report", *FILLER], ["Shipping volumes", *FILLER], ["Dredging", FACT, *FILLER]],
        title="Harbour report",
    )
    write_pdf(
        folder / "orchard.pdf",
        [["Apple orchards in the valley are pruned in late winter."], ["Pears ripen later."]],
    )
    write_pdf(
        folder / "glaciers.pdf",
        [["Glaciers retreat when summer melt exceeds winter snowfall."], ["Moraines mark ice."]],
    )
    write_html(
        folder / "bread.html",
        "Baking sourdough bread",
        "Starter",
        [
            "A sourdough starter is a culture of wild yeast and lactic acid bacteria.",
            "Feed the starter with equal weights of flour and water every day.",
        ],
    )
    write_html(
        folder / "comets.htm",
        "Comets of the outer system",
        "Orbits",
        [
            "Long-period comets come from the Oort cloud, far beyond Neptune.",
            "Their orbits can take thousands of years to complete.",
        ],
    )
    write_docx(
        folder / "beekeeping.docx",
        "Beekeeping notes",
        [("Hives", ["A strong hive holds about fifty thousand bees in summer."])],
    )
    write_docx(
        folder / "violin.docx",
        "Violin care",
        [("Strings", ["Gut strings were replaced by steel and synthetic cores in the 1900s."])],
    )
    return folder
