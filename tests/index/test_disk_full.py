"""A full disk during ``index``, ``index --force`` or ``rm`` is one line (exit 3) naming the
index, and the index keeps answering from its last commit (a real tmpfs filled to the brim)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import fill_disk, run

from ragsieve.index.diskfull import is_no_space

pytestmark = pytest.mark.integration


def test_a_full_disk_is_recognised_in_every_form_it_comes_in() -> None:
    assert is_no_space(OSError(errno.ENOSPC, "No space left on device"))
    assert is_no_space(
        RuntimeError(
            "LanceError(IO): Generic LocalFileSystem error: No space left on device (os error 28)"
        )
    )
    try:
        try:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        except OSError as inner:
            raise ValueError("write failed") from inner
    except ValueError as outer:
        assert is_no_space(outer)
    assert not is_no_space(OSError(errno.EACCES, "Permission denied"))
    assert not is_no_space(RuntimeError("LanceError(IO): not found"))


@pytest.fixture()
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs at ``tmp_path/disk`` (root only), unmounted afterwards."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    p = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4M", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=60)


def _one_error(p: subprocess.CompletedProcess[str], fragment: str) -> str:
    """Exit 3 and one ``error:`` line (after the progress lines of the stages that ran)."""
    assert p.returncode == 3 and "Traceback" not in p.stderr, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error: ")]
    assert errors == [lines[-1]] and fragment in errors[0], p.stderr
    return errors[0]


def test_a_full_disk_is_one_line_and_loses_nothing(
    small_disk: Path, corpus_dir: Path, tmp_path: Path
) -> None:
    idx = small_disk / "ix"
    p = run("index", str(corpus_dir), "--index", str(idx), "--embedder", "minilm-onnx")
    assert p.returncode == 0, p.stderr
    before = run("info", "--index", str(idx), "--documents", "--json")
    assert before.returncode == 0, before.stderr
    more = tmp_path / "more"
    more.mkdir()
    words = " ".join(f"word{i % 997} place{i % 31}" for i in range(1000))
    (more / "long.txt").write_text(f"A long note about many places.\n\n{words}\n")
    fill_disk(small_disk)

    new_doc = run("index", str(more), "--index", str(idx))
    forced = run("index", str(corpus_dir), "--index", str(idx), "--force")
    removed = run("rm", str(corpus_dir / "voyager.md"), "--index", str(idx))
    created = run("index", str(more), "--index", str(small_disk / "new-ix"))
    for p in (new_doc, forced, removed):
        line = _one_error(p, f"no space left on the device holding index {idx}")
        assert "nothing was committed" in line and "as it was" in line
    _one_error(created, "no space left on the device")

    after = run("info", "--index", str(idx), "--documents", "--json")
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["document_list"] == json.loads(before.stdout)["document_list"]
    hits = run("search", "Voyager golden record", "--index", str(idx), "--k", "1", "--json")
    assert hits.returncode == 0, hits.stderr
    assert "voyager" in json.loads(hits.stdout)["results"][0]["doc_id"]

    (small_disk / "filler").unlink()  # with room again, the same write goes through
    p = run("index", str(more), "--index", str(idx))
    assert p.returncode == 0, p.stderr
    assert "index now has 5 documents" in p.stdout
