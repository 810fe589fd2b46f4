"""Issue 45's bad-input cases: ``rm`` and the folder sync remove only what the user named, and
a full disk is one line (run by bad_input_sweep.py --issue45).

Each case builds its own small index of ``{tmp}/docs`` (``{tmp}/i2``, MiniLM through ONNX) in
its set-up, runs one real command against it, and ``check`` reads the index back: a command
that exits 0 but removes a document nobody named fails. Areas: ``rm45`` (names, globs, ids),
``sync45`` (re-indexing a folder: symlinks, loops, unreadable folders as an unprivileged user)
and ``diskfull45`` (a real 4 MB tmpfs filled to the brim; root only, else left out).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from bad_input_sweep import REPO, Case, cli_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from cli_helpers import fill_disk, nobody_cli

Setup = Callable[[Path, Path], None]
Check = Callable[[Path, Path, str], str]

#: The small corpus every case starts from: relative name -> text ({tmp}/docs/NAME).
FILES = {
    "d/a.md": "# Alpha\n\nAlpacas hum when they are content.\n",
    "d/a1.md": "# Alpha one\n\nAardvarks dig burrows at night.\n",
    "d/a[1].md": "# Bracket\n\nBadgers keep their setts tidy.\n",
    "d/sub/b.md": "# Beta\n\nBeavers build dams across streams.\n",
    "d/sub/deep/e.md": "# Deep\n\nEels cross the Sargasso Sea to spawn.\n",
    "c.txt": "Cormorants dry their wings in the sun.\n",
    "g/[x]/in.md": "# Inside\n\nIbexes climb steep dams in the Alps.\n",
    "q/f?.md": "# Question\n\nFerrets sleep most of the day.\n",
    "q/fa.md": "# Fa\n\nFlamingos stand on one leg.\n",
    "star/*.md": "# Star\n\nStarlings gather in murmurations.\n",
    "star/s.md": "# Ess\n\nSwifts sleep on the wing.\n",
    "r.jsonl": '{"id": "r1", "text": "Ravens solve puzzles."}\n'
    '{"id": "r2", "text": "Rooks use tools too."}\n',
}
#: Every document of FILES, as _names() reports them (relative to {tmp}).
ALL = {f"docs/{n}" for n in FILES if not n.endswith(".jsonl")} | {
    "docs/r.jsonl#r1",
    "docs/r.jsonl#r2",
}
I2 = ["--index", "{tmp}/i2"]


# ----------------------------------------------------------------------------- set-up
def _write_files(tmp: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = tmp / "docs" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _index_docs(tmp: Path, folder: str = "docs", index: str = "i2", follow: bool = False) -> None:
    """Index ``{tmp}/FOLDER`` into ``{tmp}/INDEX`` in this process (fast after the first);
    ``follow``: symlinks out of the folder too."""
    from ragsieve.index import Index, IndexConfig

    idx = Index.open_or_create(tmp / index, IndexConfig(embedder="minilm-onnx"))
    idx.add_paths([tmp / folder], follow_symlinks=follow)


def _built(
    files: dict[str, str] | None = None,
    links: dict[str, str] | None = None,
    then: Iterable[Callable[[Path], object]] = (),
    index: bool = True,
    follow: bool = False,
) -> Setup:
    """{tmp}/docs holding ``files`` (FILES by default) and ``links`` (link -> target, both
    relative to {tmp}), indexed into {tmp}/i2; then each of ``then`` runs on {tmp}."""

    def f(tmp: Path, idx: Path) -> None:
        _write_files(tmp, FILES if files is None else files)
        for link, target in (links or {}).items():
            (tmp / link).parent.mkdir(parents=True, exist_ok=True)
            (tmp / link).symlink_to(tmp / target)
        if index:
            _index_docs(tmp, follow=follow)
        for step in then:
            step(tmp)

    return f


def _unlink(rel: str) -> Callable[[Path], object]:
    return lambda tmp: os.unlink(tmp / rel)


def _rmtree(rel: str) -> Callable[[Path], object]:
    return lambda tmp: shutil.rmtree(tmp / rel)


def _write(rel: str, text: str) -> Callable[[Path], object]:
    def f(tmp: Path) -> None:
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)

    return f


def _relink(link: str, target: str) -> Callable[[Path], object]:
    def f(tmp: Path) -> None:
        os.unlink(tmp / link)
        (tmp / link).symlink_to(tmp / target)

    return f


def _remove_now(rel: str) -> Callable[[Path], object]:
    """Remove one document by id (a first ``rm``), in this process."""

    def f(tmp: Path) -> None:
        from ragsieve.index import Index

        Index.open(tmp / "i2").remove([str((tmp / rel).resolve())])

    return f


# ----------------------------------------------------------------------------- checks
def _names(tmp: Path, index: str = "i2") -> set[str]:
    """The documents of ``{tmp}/INDEX``, relative to {tmp} (``docs/r.jsonl#r1``)."""
    from ragsieve.index import Index

    root = str(tmp.resolve()) + os.sep
    return {
        d["doc_id"][len(root) :] if d["doc_id"].startswith(root) else d["doc_id"]
        for d in Index.open(tmp / index).documents()
    }


def _left(expect: set[str], out_has: str = "", index: str = "i2") -> Check:
    """Check: exactly ``expect`` is left in the index (and stdout holds ``out_has``)."""

    def check(tmp: Path, idx: Path, out: str) -> str:
        got = _names(tmp, index)
        if got != expect:
            return f"removed {sorted(expect - got)}; kept {sorted(got - expect)}"
        if out_has and out_has.replace("{tmp}", str(tmp.resolve())) not in out:
            return f"stdout lacks {out_has!r}: {out.strip()[:80]!r}"
        return ""

    return check


def _base_left(n: int) -> Check:
    """Check: the base index copy ({idx}: examples/corpus, 4 documents) holds ``n``."""

    def check(tmp: Path, idx: Path, out: str) -> str:
        from ragsieve.index import Index

        got = len(Index.open(idx).documents())
        return "" if got == n else f"{got} documents left in the base index, expected {n}"

    return check


def _in(cwd: str, *args: str) -> str:
    """``python`` code for a case: the CLI run from ``cwd`` (relative names), exit passed on."""
    return (
        "import subprocess, sys\n"
        f"p = subprocess.run([sys.executable, '-m', 'ragsieve.cli', *{list(args)!r}], "
        f"cwd={cwd!r})\n"
        "sys.exit(p.returncode)"
    )


def _without(*rels: str) -> set[str]:
    return ALL - {f"docs/{r}" for r in rels}


# ----------------------------------------------------------------------------- rm
# fmt: off
def _rm_cases() -> list[Case]:
    c: list[Case] = []

    def add(
        name: str,
        args: list[str],
        expect: int,
        left: set[str],
        setup: Setup | None = None,
        fragment: str = "",
        out_has: str = "",
    ) -> None:
        check = _left(left, out_has)
        rm = ["rm", *args, *I2]
        c.append(Case("rm45", name, rm, expect, setup or _built(), fragment=fragment, check=check))

    T = "{tmp}/docs"
    add("empty name", [""], 2, ALL, fragment="names no document")
    add("blank name", ["  "], 2, ALL, fragment="names no document")
    add("tab and newline name", ["\t\n"], 2, ALL, fragment="names no document")
    add("empty name beside a real one", [f"{T}/c.txt", ""], 2, ALL, fragment="nothing was removed")
    add("star stays in one folder", [f"{T}/d/*.md"], 0, _without("d/a.md", "d/a1.md", "d/a[1].md"))
    add("bracket name taken literally", [f"{T}/d/a[1].md"], 0, _without("d/a[1].md"))
    add("bracket name gone from disk, still indexed", [f"{T}/d/a[1].md"], 0, _without("d/a[1].md"),
        setup=_built(then=[_unlink("docs/d/a[1].md")]))
    add("question mark glob", [f"{T}/d/a?.md"], 0, _without("d/a1.md"))
    add("double star crosses folders", [f"{T}/d/**/*.md"], 0,
        _without("d/a.md", "d/a1.md", "d/a[1].md", "d/sub/b.md", "d/sub/deep/e.md"))
    add("trailing double star", [f"{T}/d/**"], 0,
        _without("d/a.md", "d/a1.md", "d/a[1].md", "d/sub/b.md", "d/sub/deep/e.md"))
    add("nested glob one level", [f"{T}/d/*/*.md"], 0, _without("d/sub/b.md"))
    add("star at the top", [f"{T}/*"], 0,
        _without("c.txt") - {"docs/r.jsonl#r1", "docs/r.jsonl#r2"})
    add("glob ending in slash: folders", [f"{T}/d/*/"], 0,
        _without("d/sub/b.md", "d/sub/deep/e.md"))
    add("folder with trailing slash", [f"{T}/d/"], 0,
        _without("d/a.md", "d/a1.md", "d/a[1].md", "d/sub/b.md", "d/sub/deep/e.md"))
    add("dot-dot in the path", [f"{T}/d/sub/../a.md"], 0, _without("d/a.md"))
    add("folder named by dot", [f"{T}/d/sub/."], 0, _without("d/sub/b.md", "d/sub/deep/e.md"))
    add("folder named by dot-dot", [f"{T}/d/sub/deep/.."], 0,
        _without("d/sub/b.md", "d/sub/deep/e.md"))
    add("folder named like a glob", [f"{T}/g/[x]"], 0, _without("g/[x]/in.md"))
    add("file named star taken literally", [f"{T}/star/*.md"], 0, _without("star/*.md"))
    add("file named with question mark", [f"{T}/q/f?.md"], 0, _without("q/f?.md"))
    add("record id", [f"{T}/r.jsonl#r1"], 0, ALL - {"docs/r.jsonl#r1"})
    add("JSONL file: all its records", [f"{T}/r.jsonl"], 0,
        ALL - {"docs/r.jsonl#r1", "docs/r.jsonl#r2"})
    add("unknown record id", [f"{T}/r.jsonl#r9"], 0, ALL)
    add("removing twice", [f"{T}/d/a.md"], 0, _without("d/a.md"),
        setup=_built(then=[_remove_now("docs/d/a.md")]))
    add("name not in the index", [f"{T}/nope.md"], 0, ALL)
    add("glob matching nothing", [f"{T}/zz*"], 0, ALL)
    add("unbalanced bracket", [f"{T}/d/a[.md"], 0, ALL)
    add("a prefix is not a folder", [f"{T}/d/su"], 0, ALL)
    add("hidden glob matches nothing indexed", [f"{T}/d/.*"], 0, ALL)
    add("name with a newline", [f"{T}/d/a.md\nx"], 0, ALL)
    add("a dash", ["-"], 0, ALL)
    add("many slashes", [f"{T}//d///a.md"], 0, _without("d/a.md"))
    add("three thousand levels of glob", [T + "/" + "*/" * 3000 + "*.md"], 0, ALL)
    add("a name of 100,000 characters", [f"{T}/" + "n" * 100_000], 0, ALL)
    add("a glob of 40,000 characters", [f"{T}/d/" + "*a" * 20_000], 0, ALL)
    add("many double stars", [T + "/" + "**/" * 200 + "e.md"], 0, _without("d/sub/deep/e.md"))
    add("symlink name removes its target", [f"{T}/alias.md"], 0, _without("d/a.md"),
        setup=_built(links={"docs/alias.md": "docs/d/a.md"}))
    add("symlink loop name", [f"{T}/loop.md"], 0, ALL,
        setup=_built(links={"docs/loop.md": "docs/loop.md"}))
    add("output names what it removed", [f"{T}/q/fa.md"], 0, _without("q/fa.md"),
        out_has="removed 1 document: {tmp}/docs/q/fa.md")
    many = {f"m/n{i:02}.md": f"Note {i} about newts.\n" for i in range(14)}
    add("many removed: the first ten and a count", [f"{T}/m"], 0, set(), setup=_built(files=many),
        out_has="and 4 more (--json lists them all)")
    # Relative names, from inside {tmp}/docs (the CLI run there).
    rel = [
        ("relative star", ["d/*.md"], _without("d/a.md", "d/a1.md", "d/a[1].md")),
        ("relative bracket name", ["d/a[1].md"], _without("d/a[1].md")),
        ("relative record id", ["r.jsonl#r2"], ALL - {"docs/r.jsonl#r2"}),
        ("relative dot-dot", ["../docs/c.txt"], _without("c.txt")),
        ("relative star alone", ["*"], _without("c.txt") - {"docs/r.jsonl#r1", "docs/r.jsonl#r2"}),
    ]
    for name, args, left in rel:
        c.append(Case("rm45", name, [], 0, _built(),
            python=_in("{tmp}/docs", "rm", *args, "--index", "{tmp}/i2"), check=_left(left)))
    c.append(Case("rm45", "relative glob against the base index", [], 0,
        python=_in(str(REPO), "rm", "examples/corpus/h*.md", "--index", "{idx}"),
        check=_base_left(3)))
    c.append(Case("rm45", "empty name against the base index from the repo root", [], 2,
        python=_in(str(REPO), "rm", "", "--index", "{idx}"), fragment="names no document",
        check=_base_left(4)))
    return c
# fmt: on


# ----------------------------------------------------------------------------- sync
# fmt: off
def _sync_cases() -> list[Case]:
    c: list[Case] = []
    reindex = ["index", "{tmp}/docs", *I2]

    def add(
        name: str, setup: Setup, left: set[str], args: list[str] | None = None, out_has: str = ""
    ) -> None:
        c.append(Case("sync45", name, args or reindex, 0, setup, check=_left(left, out_has)))

    small = {"a.md": "# A\n\nAlpacas hum.\n", "sub/b.md": "# B\n\nBeavers build.\n"}
    out = {"elsewhere/t.md": "# T\n\nTapirs swim.\n", "elsewhere/u.md": "# U\n\nUakaris.\n"}

    def outside(tmp: Path) -> None:
        for rel, text in out.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text)

    def with_outside(links: dict[str, str], then: list[Callable[[Path], object]]) -> Setup:
        """Links out of the folder, followed (``--follow-symlinks``) when indexed and synced."""
        def f(tmp: Path, idx: Path) -> None:
            outside(tmp)
            _built(small, links, then, follow=True)(tmp, idx)

        return f

    follow = [*reindex, "--follow-symlinks"]

    base = {"docs/a.md", "docs/sub/b.md"}
    add("a deleted file leaves", _built(small, then=[_unlink("docs/a.md")]), {"docs/sub/b.md"})
    add("a deleted subfolder leaves", _built(small, then=[_rmtree("docs/sub")]), {"docs/a.md"})
    add("symlink loop in the folder",
        _built(small, then=[lambda t: (t / "docs" / "loop.md").symlink_to(t / "docs" / "loop.md")]),
        base)
    add("two-link loop in the folder",
        _built(small, {"docs/loopA": "docs/loopB", "docs/loopB": "docs/loopA"}), base)
    add("symlink loop as a subfolder name", _built(small, {"docs/sub/deeper": "docs/sub/deeper"}),
        base)
    add("deleted symlink drops its target",
        with_outside({"docs/link.md": "elsewhere/t.md"}, [_unlink("docs/link.md")]), base,
        args=follow, out_has="removed 1 document whose file has left")
    add("symlink kept keeps its target", with_outside({"docs/link.md": "elsewhere/t.md"}, []),
        base | {"elsewhere/t.md"}, args=follow)
    add("dangling symlink keeps its document",
        with_outside({"docs/link.md": "elsewhere/t.md"}, [_unlink("elsewhere/t.md")]),
        base | {"elsewhere/t.md"}, args=follow)
    add("retargeted symlink", with_outside({"docs/link.md": "elsewhere/t.md"},
        [_relink("docs/link.md", "elsewhere/u.md")]), base | {"elsewhere/u.md"}, args=follow)
    add("two links to one file, one deleted", with_outside(
        {"docs/l1.md": "elsewhere/t.md", "docs/l2.md": "elsewhere/t.md"}, [_unlink("docs/l1.md")]),
        base | {"elsewhere/t.md"}, args=follow)
    add("symlink to a file in the folder: one document",
        _built(small, {"docs/alias.md": "docs/a.md"}, index=False), base)
    add("deleted symlink with --keep-missing",
        with_outside({"docs/link.md": "elsewhere/t.md"}, [_unlink("docs/link.md")]),
        base | {"elsewhere/t.md"}, args=[*follow, "--keep-missing"])
    add("folder given through a symlinked path",
        _built(small, {"via": "docs"}, [_unlink("docs/a.md")]), {"docs/sub/b.md"},
        args=["index", "{tmp}/via", *I2])
    add("a link out, not followed: its document leaves with a warning",
        with_outside({"docs/link.md": "elsewhere/t.md"}, []), base,
        out_has="removed 1 document read through a symlink out of")
    add("folder given with dot-dot", _built(small, then=[_unlink("docs/a.md")]), {"docs/sub/b.md"},
        args=["index", "{tmp}/docs/sub/..", *I2])
    add("only the folder given is synced", _built(small, then=[_unlink("docs/a.md"),
        _unlink("docs/sub/b.md"), _write("docs/sub/n.md", "# N\n\nNewts.\n")]),
        {"docs/a.md", "docs/sub/n.md"}, args=["index", "{tmp}/docs/sub", *I2])
    recs = {"r.jsonl": '{"id": "r1", "text": "Ravens."}\n{"id": "r2", "text": "Rooks."}\n'}
    add("a record that left its JSONL file",
        _built(recs, then=[_write("docs/r.jsonl", '{"id": "r1", "text": "Ravens."}\n')]),
        {"docs/r.jsonl#r1"})
    add("a JSONL file that turned invalid keeps its records",
        _built({**recs, **small}, then=[_write("docs/r.jsonl", "{not json\n")]),
        {"docs/r.jsonl#r1", "docs/r.jsonl#r2"} | base)
    c.extend(_unreadable_cases())
    return c
# fmt: on


# fmt: off
def _unreadable_cases() -> list[Case]:
    """Re-indexing a folder whose subfolder (or file) the user cannot read keeps its documents
    (run as uid 65534 when we are root: root reads a mode-000 folder anyway)."""
    cli = nobody_cli()
    if cli is None:
        print("sweep_rm: no unprivileged user to run as; unreadable-folder cases left out",
            file=sys.stderr)
        return []
    files = {"a.md": "# A\n\nAlpacas hum.\n", "sub/b.md": "# B\n\nBeavers.\n",
        "sub/c.md": "# C\n\nCats.\n"}

    def setup(mode_of: str, mode: int) -> Setup:
        def f(tmp: Path, idx: Path) -> None:
            tmp.chmod(0o755)
            _write_files(tmp, files)
            if os.geteuid() == 0:
                for p in [tmp, *tmp.rglob("*")]:
                    if p != idx and idx not in p.parents:
                        os.lchown(p, 65534, 65534)
            env = {**os.environ, "HOME": str(tmp)}
            first = [
                *cli, "index", str(tmp / "docs"), "--index", str(tmp / "i2"), "--embedder",
                "minilm-onnx",
            ]
            p = subprocess.run(first, capture_output=True, text=True, timeout=300, env=env)
            if p.returncode != 0:
                raise RuntimeError(
                    f"set-up index as an unprivileged user failed: {p.stderr[-300:]}"
                )
            (tmp / "docs" / mode_of).chmod(mode)
            atexit.register(
                lambda: (tmp / "docs" / mode_of).exists() and (tmp / "docs" / mode_of).chmod(0o755)
            )

        return f

    def code(mode_of: str) -> str:
        return (
            "import os, subprocess, sys\n"
            f"cmd = {cli!r} + ['index', '{{tmp}}/docs', '--index', '{{tmp}}/i2']\n"
            "env = {**os.environ, 'HOME': '{tmp}'}\n"
            "try:\n"
            "    p = subprocess.run(cmd, env=env)\n"
            "finally:\n"
            f"    os.chmod('{{tmp}}/docs/{mode_of}', 0o755)\n"
            "sys.exit(p.returncode)"
        )

    keep = {"docs/a.md", "docs/sub/b.md", "docs/sub/c.md"}
    out = []
    for name, mode_of, mode in [
        ("unreadable subfolder (000) keeps its documents", "sub", 0o000),
        ("unsearchable subfolder (600) keeps its documents", "sub", 0o600),
        ("unlistable subfolder (100) keeps its documents", "sub", 0o100),
        ("unreadable file (000) keeps its document", "sub/b.md", 0o000),
    ]:
        out.append(Case("sync45", name, [], 0, setup(mode_of, mode), python=code(mode_of),
            check=_left(keep)))
    return out
# fmt: on


# ----------------------------------------------------------------------------- disk full
def _mount_small(disk: Path) -> bool:
    disk.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4M", "tmpfs", str(disk)],
        capture_output=True,
        timeout=60,
    )
    if p.returncode == 0:
        atexit.register(lambda: subprocess.run(["umount", "-l", str(disk)], capture_output=True))
    return p.returncode == 0


def _full_disk(tmp: Path, idx: Path) -> None:
    """{tmp}/disk: a 4 MB tmpfs holding {tmp}/disk/ix (examples/corpus), then filled up."""
    disk = tmp / "disk"
    if not _mount_small(disk):
        raise RuntimeError("cannot mount a tmpfs")
    from ragsieve.index import Index, IndexConfig

    Index.open_or_create(disk / "ix", IndexConfig(embedder="minilm-onnx")).add_paths(
        [REPO / "examples" / "corpus"]
    )
    words = " ".join(f"word{i % 997} place{i % 31}" for i in range(1000))
    (tmp / "more").mkdir()
    (tmp / "more" / "long.txt").write_text(f"A long note about many places.\n\n{words}\n")
    fill_disk(disk)


def _intact_after_full(tmp: Path, idx: Path, out: str) -> str:
    """Check: the index on the full disk still holds its 4 documents and answers a search;
    then the tmpfs is unmounted."""
    disk = tmp / "disk"
    try:
        found, err = cli_json(
            "search", "Voyager golden record", "--index", str(disk / "ix"), "--k", "1"
        )
        if found is None:
            return f"search fails after the full disk: {err.strip()[-100:]}"
        if "voyager" not in found["results"][0]["doc_id"]:
            return "search no longer finds the Voyager document"
        n = len(_names(tmp, "disk/ix"))
        return "" if n == 4 else f"{n} documents left on the full disk, expected 4"
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=60)


# fmt: off
def _disk_cases() -> list[Case]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        print("sweep_rm: not root: the disk-full cases (a tmpfs) are left out", file=sys.stderr)
        return []
    ix = ["--index", "{tmp}/disk/ix"]
    frag = "no space left on the device holding index"
    voyager = str(REPO / "examples" / "corpus" / "voyager.md")
    runs = [
        ("index a new file on a full disk", ["index", "{tmp}/more", *ix], frag),
        ("index --force on a full disk",
            ["index", str(REPO / "examples" / "corpus"), *ix, "--force"], frag),
        ("rm on a full disk", ["rm", voyager, *ix], frag),
        ("rm a glob on a full disk", ["rm", str(REPO / "examples" / "corpus" / "*.md"), *ix], frag),
        ("create an index on a full disk", ["index", "{tmp}/more", "--index", "{tmp}/disk/new"],
            "no space left on the device"),
    ]
    return [
        Case("diskfull45", name, args, 3, _full_disk, fragment=f, check=_intact_after_full,
            timeout=180)
        for name, args, f in runs
    ]
# fmt: on


def cases() -> list[Case]:
    return [*_rm_cases(), *_sync_cases(), *_disk_cases()]
