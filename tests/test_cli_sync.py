"""The index stays in step with a folder, ``rm`` takes folders and globs and is idempotent,
``info`` reads like a person wrote it, and the config-mismatch message names what differs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, nobody_cli, run

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


def _corpus(root: Path, *rels: str) -> dict[str, str]:
    """Small text files under ``root``; relative name -> document id."""
    ids = {}
    for n, rel in enumerate(rels):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"# Note {n}\n\nThe note number {n} mentions the word {rel!r}.\n")
        ids[rel] = str(p.resolve())
    return ids


def _index(
    folder: Path, idx: Path, *cmd: str, follow: bool = False
) -> subprocess.CompletedProcess[str]:
    extra = ["--follow-symlinks"] if follow else []
    p = run(*cmd, "index", str(folder), "--index", str(idx), "--embedder", "minilm-onnx", *extra)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    return p


def test_rm_removes_only_what_the_user_named(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    ids = _corpus(docs, "d/a.md", "d/a1.md", "d/a[1].md", "d/sub/b.md", "c.txt")
    idx = tmp_path / "ix"
    _index(docs, idx)
    # An empty or blank name (a script's empty variable) is refused; nothing is removed.
    for name in ("", "  "):
        assert_one_line_error(run("rm", name, "--index", str(idx)), 2, "names no document")
        assert_one_line_error(run("rm", str(docs / "c.txt"), name, "--index", str(idx)), 2, "")
    assert _ids(idx) == set(ids.values())
    # A bracket name that is an indexed file is that file, not the glob ``a1.md``.
    p = run("rm", str(docs / "d" / "a[1].md"), "--index", str(idx))
    assert p.returncode == 0 and p.stdout.strip() == f"removed 1 document: {ids['d/a[1].md']}"
    # ``*`` stays inside d/: d/sub/b.md stays, and the line names what went.
    p = run("rm", str(docs / "d" / "*.md"), "--index", str(idx))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == f"removed 2 documents: {ids['d/a.md']}, {ids['d/a1.md']}"
    assert _ids(idx) == {ids["d/sub/b.md"], ids["c.txt"]}
    p = run("rm", str(docs / "**" / "*.md"), "--index", str(idx), "--json")
    assert json.loads(p.stdout) == {"removed": [ids["d/sub/b.md"]], "missing": []}
    assert _ids(idx) == {ids["c.txt"]}


def test_rm_of_many_names_the_first_and_counts_the_rest(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    ids = _corpus(docs, *(f"n{i:02}.md" for i in range(13)))
    idx = tmp_path / "ix"
    _index(docs, idx)
    p = run("rm", str(docs), "--index", str(idx))
    assert p.returncode == 0, p.stderr
    first = ", ".join(sorted(ids.values())[:10])
    assert p.stdout.strip() == f"removed 13 documents: {first} and 3 more (--json lists them all)"


def test_a_folder_sync_follows_its_symlinks_when_asked_and_survives_loops(
    tmp_path: Path,
) -> None:
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    ids = _corpus(docs, "a.md", "b.md")
    target = _corpus(outside, "t.md", "u.md")
    (docs / "link.md").symlink_to(outside / "t.md")  # a file from elsewhere, through a link
    (docs / "alias.md").symlink_to(docs / "a.md")  # the same file twice: one document
    (docs / "dangling.md").symlink_to(outside / "u.md")
    (docs / "loop.md").symlink_to(docs / "loop.md")
    (docs / "loopA").symlink_to(docs / "loopB")
    (docs / "loopB").symlink_to(docs / "loopA")
    idx = tmp_path / "ix"
    p = _index(docs, idx, follow=True)
    assert "skipped" in p.stderr and "loop.md: a symlink loop: not read" in p.stderr
    assert "loopA: a symlink loop" in p.stderr  # the true reason, not "unsupported file type"
    assert _ids(idx) == {*ids.values(), *target.values()}

    (outside / "u.md").unlink()  # the link dangles: skipped with a warning, its document kept
    (docs / "link.md").unlink()  # the link left the folder: its target's document leaves too
    p = run(
        "index", str(docs), "--index", str(idx), "--embedder", "minilm-onnx", "--follow-symlinks"
    )
    assert p.returncode == 0, p.stderr
    assert "warning: skipped" in p.stderr and "dangling.md: a dangling symlink" in p.stderr
    assert f"removed 1 document whose file has left {docs}" in p.stdout, p.stdout
    assert p.stdout.strip().endswith(target["t.md"])
    assert _ids(idx) == {*ids.values(), target["u.md"]}


def test_links_out_of_the_folder_are_not_followed(tmp_path: Path) -> None:
    """An /etc-like file, a sibling folder, a chain of links, a folder above, a loop: only the
    folder's own files are read, each link out is one warning naming it and its target."""
    docs, outside, sibling = tmp_path / "docs", tmp_path / "etc", tmp_path / "sibling"
    ids = _corpus(docs, "a.md", "sub/b.md")
    secret = _corpus(outside, "passwd.txt")["passwd.txt"]
    sib = _corpus(sibling, "s.md")["s.md"]
    (docs / "passwd.txt").symlink_to(secret)
    (docs / "chain.txt").symlink_to(docs / "passwd.txt")  # a link to a link out
    (docs / "sub" / "sib").symlink_to(sibling)
    (docs / "up").symlink_to(tmp_path)  # the folder above the root, the root inside it
    (docs / "self").symlink_to(docs)  # a folder link inside: its files are read where they are
    (docs / "alias.md").symlink_to(docs / "a.md")
    (docs / "loop.md").symlink_to(docs / "loop.md")
    idx = tmp_path / "ix"
    p = _index(docs, idx)
    warnings = [ln for ln in p.stderr.splitlines() if ln.startswith("warning:")]
    for link, to in (
        ("passwd.txt", secret),
        ("chain.txt", secret),
        ("sub/sib", str(sibling.resolve())),
        ("up", str(tmp_path.resolve())),
    ):
        line = f"warning: skipped {docs / link}: a symlink to {to}, outside {docs.resolve()}"
        assert sum(w.startswith(line) for w in warnings) == 1, (line, p.stderr)
    assert sum("loop.md: a symlink loop" in w for w in warnings) == 1, p.stderr
    assert _ids(idx) == set(ids.values())
    assert json.loads((idx / "ragsieve.json").read_text())["roots"] == {str(docs.resolve()): False}

    # Opt in: the links are followed (the folder above once; the loop is still one warning).
    p = _index(docs, idx, follow=True)
    assert {secret, sib} <= _ids(idx), p.stderr
    assert json.loads((idx / "ragsieve.json").read_text())["roots"] == {str(docs.resolve()): True}
    # Without it again, what was read through those links is dropped, with the warning.
    p = _index(docs, idx)
    assert "removed 2 documents read through a symlink out of" in p.stdout, p.stdout
    assert f"warning: skipped {docs / 'passwd.txt'}: a symlink to {secret}" in p.stderr
    assert _ids(idx) == set(ids.values())


def test_a_named_link_out_of_its_folder_is_refused(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _corpus(docs, "a.md")
    secret = _corpus(tmp_path / "etc", "passwd.txt")["passwd.txt"]
    (docs / "passwd.txt").symlink_to(secret)
    idx = tmp_path / "ix"
    p = run("index", str(docs / "passwd.txt"), "--index", str(idx))
    assert_one_line_error(p, 2, f"a symlink to {secret}, outside {docs.resolve()}")
    assert not idx.exists()
    p = run("index", str(docs / "passwd.txt"), "--index", str(idx), "--follow-symlinks")
    assert p.returncode == 0, p.stderr
    assert _ids(idx) == {secret}


def test_a_folder_that_cannot_be_read_keeps_its_documents(tmp_path: Path) -> None:
    cli = nobody_cli()
    if cli is None:
        pytest.skip("no unprivileged user can run the CLI here (setpriv, python)")
    work = tmp_path / "w"
    docs = work / "docs"
    ids = _corpus(docs, "a.md", "sub/b.md", "sub/c.md")
    idx = work / "ix"
    work.chmod(0o777)
    if os.geteuid() == 0:
        for p in [work, *work.rglob("*")]:
            os.chown(p, 65534, 65534)
        tmp_path.chmod(0o755)
        for parent in tmp_path.parents:  # pytest's basetemp is 700 under root
            if parent.stat().st_mode & 0o001 == 0 and str(parent).startswith(tempfile.gettempdir()):
                parent.chmod(parent.stat().st_mode | 0o005)
    env = {**os.environ, "HOME": str(work)}

    def cli_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cli, *args], capture_output=True, text=True, timeout=300, env=env, cwd=work
        )

    p = cli_run("index", str(docs), "--index", str(idx), "--embedder", "minilm-onnx")
    assert p.returncode == 0, p.stderr
    sub = docs / "sub"
    try:
        for mode in (0o000, 0o600, 0o100):  # unreadable, unsearchable, unlistable
            sub.chmod(mode)
            p = cli_run("index", str(docs), "--index", str(idx))
            assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
            assert f"warning: skipped {sub}: cannot read this folder" in p.stderr, p.stderr
            assert "removed" not in p.stdout, p.stdout
            assert _ids(idx) == set(ids.values())
    finally:
        sub.chmod(0o755)
