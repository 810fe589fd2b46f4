"""Hostile PDF, HTML and DOCX files, made by the real writers (reportlab, python-docx) and then
bent the way a hostile user bends them: a zip bomb, a megabyte title, a million spaces, a
name that is not UTF-8. Used by the reader tests and by benchmarks/sweep_readers.py."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from rich_docs import write_pdf

SPACES = " " * 1_000_000
WORDS = "The harbour pilot logged the tide at dawn and the keeper lit the lamp at dusk."


def pdf(path: Path, lines: list[str] | None = None, title: str = "", pages: int = 1) -> Path:
    """A real PDF (reportlab) with a text layer, ``pages`` pages of ``lines``; ``title`` goes
    in its ``/Title``."""
    return write_pdf(path, [lines or [WORDS]] * pages, title)


def pdf_with_space_run(path: Path) -> Path:
    """A PDF whose page text holds a run of a million spaces between two sentences."""
    return pdf(path, [WORDS + SPACES + "The second sentence follows the gap."])


def encrypted_pdf(path: Path, password: str = "secret") -> Path:
    """A PDF with a user password (RC4, which pypdf opens without extra packages)."""
    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen import canvas

    enc = pdfencrypt.StandardEncryption(password, canPrint=0)
    c = canvas.Canvas(str(path), encrypt=enc)
    c.drawString(72, 800, WORDS)
    c.showPage()
    c.save()
    return path


def docx(path: Path, paragraphs: list[str] | None = None, title: str = "") -> Path:
    """A real DOCX (python-docx): a heading and paragraphs; ``title`` in its core properties."""
    import docx as python_docx

    d = python_docx.Document()
    d.add_heading("Harbour notes", level=1)
    for p in paragraphs or [WORDS]:
        d.add_paragraph(p)
    d.core_properties.title = "PLACEHOLDER"
    d.save(str(path))
    if title:  # python-docx refuses over 255 characters; a hostile file need not
        with zipfile.ZipFile(path) as z:
            core = z.read("docProps/core.xml")
        core = core.replace(b"PLACEHOLDER", title.encode())
        rewrite_member(path, "docProps/core.xml", core)
    return path


def rewrite_member(path: Path, member: str, data: bytes) -> Path:
    """``path`` (a zip) with ``member`` replaced by ``data``, deflated."""
    with zipfile.ZipFile(path) as z:
        parts = [(i, z.read(i.filename)) for i in z.infolist()]
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for info, blob in parts:
            z.writestr(info.filename, data if info.filename == member else blob)
    os.replace(tmp, path)
    return path


def docx_bomb(path: Path, mb: int = 400) -> Path:
    """A real DOCX whose ``word/document.xml`` inflates to ``mb`` MB of valid XML (a paragraph
    of a run of spaces), about 1/1000 of that on disk."""
    docx(path)
    with zipfile.ZipFile(path) as z:
        xml = z.read("word/document.xml")
    head, tail = xml.split(b"</w:body>")
    pad = b'<w:p><w:r><w:t xml:space="preserve">' + b" " * (mb * 2**20) + b"</w:t></w:r></w:p>"
    return rewrite_member(path, "word/document.xml", head + pad + b"</w:body>" + tail)


def docx_with_space_run(path: Path) -> Path:
    return docx(path, [WORDS + SPACES + "The second sentence follows the gap."])


def zip_declaring(path: Path, declared: int) -> Path:
    """A real DOCX whose central directory declares ``declared`` bytes for document.xml."""
    docx(path)
    raw = bytearray(path.read_bytes())
    name = b"word/document.xml"
    at = raw.rfind(b"PK\x01\x02", 0, raw.find(name, raw.find(b"PK\x01\x02")) + 1)
    # central directory entry: the uncompressed size is at offset 24 (4 bytes, little endian)
    raw[at + 24 : at + 28] = declared.to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    return path


def html_with_space_run(path: Path) -> Path:
    path.write_text(
        f"<html><head><title>Gap</title></head><body><article><h1>Gap</h1><p>{WORDS}"
        f"{SPACES}The second sentence follows the gap.</p></article></body></html>",
        "utf-8",
    )
    return path


def html(path: Path, title: str = "Harbour", body: str = "") -> Path:
    path.write_text(
        f"<html><head><title>{title}</title></head><body><article><h1>Harbour</h1>"
        f"<p>{body or WORDS}</p></article></body></html>",
        "utf-8",
    )
    return path


def bytes_name(folder: Path, name: bytes) -> Path:
    """The path of a file named by raw (possibly non-UTF-8) bytes inside ``folder``."""
    return Path(os.fsdecode(os.path.join(os.fsencode(folder), name)))
