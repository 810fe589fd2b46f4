"""Where the benchmark and training data live, and the small readers that several trainers
(reranker, segmenter, agent) share. A ground-floor module: it imports nothing of ragsieve but
its errors, so a trainer never has to import another trainer or the evaluation harness."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from ragsieve.errors import InputError

#: QASPER's train split (questions, full-text papers), relative to the data folder.
QASPER_TRAIN_Q = "qasper/questions_train.json"
QASPER_TRAIN_P = "qasper/train_papers_fulltext.jsonl"
#: MS MARCO dev-small queries with their one positive passage.
MSMARCO = "msmarco/msmarco_dev_small_eng_query_positive.json"

ENV_VAR = "RAGSIEVE_DATA"


# --------------------------------------------------------------------------- data folder


def find_upwards(relative: str | Path, marker: str = "") -> Path | None:
    """The first ``<folder>/relative`` that is a folder (holding the file ``marker``, if one
    is named), walking up from the working directory and then from this package; None if
    there is none. How the data folders beside a checkout are found without configuration."""
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for base in (start, *start.parents):
            path = base / relative
            if (path / marker).is_file() if marker else path.is_dir():
                return path
    return None


def find_data_dir(data_dir: str | Path | None = None) -> Path:
    """The benchmark data folder: ``data_dir`` if given, else ``$RAGSIEVE_DATA``, else the first
    ``shared/data`` found walking up from the working directory and from this package (the
    repository lives at ``<root>/main`` with the data at ``<root>/shared/data``)."""
    if data_dir is not None:
        path = Path(data_dir)
        if not path.is_dir():
            raise InputError(f"data folder {path} does not exist")
        return path
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env)
        if not path.is_dir():
            raise InputError(f"{ENV_VAR}={env} is not a folder")
        return path
    found = find_upwards(Path("shared") / "data")
    if found is not None:
        return found
    raise InputError(
        f"benchmark data folder not found: set {ENV_VAR} or pass data_dir "
        "(expected shared/data beside the repository)"
    )


_MOJIBAKE = re.compile("[\u00c2-\u00f4][\u0080-\u00bf]")


def fix_mojibake(text: str) -> str:
    """Undo UTF-8 read as Latin-1 ("Ã©" -> "é"), which some shared data files carry."""
    if not _MOJIBAKE.search(text):
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def paper_paragraphs(text: str) -> list[str]:
    """Paragraphs of a QASPER full-text paper: blank-line blocks minus headers and the id line."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        block = block.strip()
        if not block or block.startswith("#") or block.startswith("**Paper ID:**"):
            continue
        out.append(block)
    return out


def qasper_evidence(question: dict[str, Any]) -> list[str]:
    """Textual evidence paragraphs of all answers (figures/tables dropped), de-duplicated."""
    seen: dict[str, None] = {}
    for ans in question.get("answers", []):
        for ev in ans.get("evidence", []):
            if ev and not ev.startswith("FLOAT SELECTED"):
                seen.setdefault(ev, None)
    return list(seen)


def read_training_json(path: Path) -> Any:
    """A JSON training file, or a one-line :class:`InputError` when it is missing."""
    if not path.is_file():
        raise InputError(f"training file {path} not found")
    return json.loads(path.read_text(encoding="utf-8"))


def qasper_papers(path: Path) -> dict[str, list[str]]:
    """Paper id -> its paragraphs (:func:`paper_paragraphs`), from a QASPER full-text file."""
    papers: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                obj = json.loads(line)
                papers[obj["paper_id"]] = paper_paragraphs(obj["text"])
    return papers


def gold_paragraphs(question: dict[str, Any], paragraphs: list[str]) -> list[int]:
    """Indices of ``paragraphs`` that are the question's textual evidence (compared with
    whitespace collapsed), each once, in evidence order."""
    index_of = {" ".join(p.split()): i for i, p in enumerate(paragraphs)}
    keys = (" ".join(e.split()) for e in qasper_evidence(question))
    return list(dict.fromkeys(index_of[k] for k in keys if k in index_of))


def msmarco_positives(data_dir: Path) -> tuple[list[str], list[str]]:
    """MS MARCO dev-small queries and their positive passages (mojibake undone), in file
    order, for the queries that have one."""
    rows = [r for r in read_training_json(data_dir / MSMARCO) if r.get("positive")]
    return [r["query"].strip() for r in rows], [
        fix_mojibake(r["positive"][0].strip()) for r in rows
    ]


def sha256_file(path: Path) -> str:
    """The sha256 hex digest of the file at ``path``, read in blocks."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
