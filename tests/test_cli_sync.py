"""The index stays in step with a folder, ``rm`` takes folders and globs and is idempotent,
``info`` reads like a person wrote it, and the config-mismatch message names what differs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

pytestmark = pytest.mark.integration


def _ids(index: Path) -> set[str]:
    p = run("info", "--index", str(index), "--documents", "--json")
    assert p.returncode == 0, p.stderr
    return {d["doc_id"] for d in json.loads(p.stdout)["document_list"]}


def test_a_file_that_left_the_folder_leaves_the_index(tmp_path: Path, corpus_dir: Path) -> None:
    folder = tmp_path / "notes"
    shutil.copytree(corpus_dir, folder)
    (folder / "sub").mkdir()
    (folder / "sub" / "extra.md").write_text("# Extra\n\nThe quokka lives on Rottnest Island.\n")
    idx = tmp_path / "ix"
    p = run("index", str(folder), "--index", str(idx))
    assert p.returncode == 0, p.stderr
    # Piped, every stage is a line as it starts and as it ends, never a silent minute.
    assert "embed chunks: 0/" in p.stderr and "embed chunks: 13/13 done in" in p.stderr
    assert "full-text index: 1/1 done in" in p.stderr
    assert str((folder / "voyager.md").resolve()) in _ids(idx)

    (folder / "voyager.md").unlink()
    p = run("index", str(folder), "--index", str(idx), "--keep-missing", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["removed"] == []
    assert str((folder / "voyager.md").resolve()) in _ids(idx)

    p = run("index", str(folder), "--index", str(idx))
    assert p.returncode == 0, p.stderr
    assert "removed 1 document whose file has left" in p.stdout and "voyager.md" in p.stdout
    assert str((folder / "voyager.md").resolve()) not in _ids(idx)
    p = run("search", "Voyager golden record", "--index", str(idx), "--json")
    assert all("voyager" not in r["doc_id"] for r in json.loads(p.stdout)["results"])

    # rm takes a folder and a quoted glob; a second rm of the same file says so and exits 0.
    p = run("rm", str(folder / "sub"), "--index", str(idx))
    assert p.returncode == 0 and "removed 1 document" in p.stdout, p.stderr
    p = run("rm", str(folder / "h*.md"), "--index", str(idx))
    assert p.returncode == 0 and "removed 1 document" in p.stdout, p.stderr
    assert len(_ids(idx)) == 2
    p = run("rm", str(folder / "honey-bees.md"), "--index", str(idx))
    assert p.returncode == 0 and "removed 0 documents" in p.stdout
    assert "not in the index" in p.stderr and "honey-bees.md" in p.stderr
    assert len(_ids(idx)) == 2


def test_info_is_human_readable_and_lists_documents(writable_index: Path) -> None:
    p = run("info", "--index", str(writable_index), "--documents")
    assert p.returncode == 0, p.stderr
    updated = next(ln for ln in p.stdout.splitlines() if ln.startswith("updated: "))
    assert updated[len("updated: ") : len("updated: ") + 2] == "20", updated  # 20YY-MM-DD ...
    assert "rosetta-stone.md" in p.stdout and "chunk" in p.stdout


def test_asking_for_a_sentence_table_names_it_and_offers_force(writable_index: Path) -> None:
    line = assert_one_line_error(
        run(
            "index", str(writable_index / "nothing"), "--index", str(writable_index), "--sentences"
        ),
        2,
        "sentences=(unset) (asked True)",
    )
    assert "was built with ;" not in line and "--force" in line
