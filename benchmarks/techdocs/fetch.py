"""Rebuild the technical-documents dev set's folder: Debian manuals, pinned by package version.

Each document comes from a Debian bookworm package (``apt-get download PKG=VERSION``, then
``dpkg-deb -x``), is checked against its sha256 and copied to ``cache/docs/``. The documents are
then read with ragsieve's own readers (:func:`ragsieve.io.read_file`: PDF pages with their
running headers dropped, HTML main content as Markdown) into ``cache/corpus.jsonl``, and the
questions of ``questions.jsonl`` are written per split as ragsieve's generic eval format
(``cache/dev.jsonl``, ``cache/test.jsonl``). Every gold evidence sentence is checked to occur in
the text of its document as read (whitespace and NFKC aside: ligatures such as "ﬁ" read "fi").

    .venv/bin/python benchmarks/techdocs/fetch.py          # download (once), read, check
    .venv/bin/ragsieve eval --data benchmarks/techdocs/cache/dev.jsonl \\
        --corpus benchmarks/techdocs/cache/corpus.jsonl --no-llm --methods naive,tagger

``--offline`` uses only the debs already in ``cache/debs`` (or the installed files when their
sha256 matches); a missing one is a one-line error.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / "cache"
QUESTIONS = HERE / "questions.jsonl"
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Doc:
    """A document: its name in the folder, the package (and version) that ships it, its path
    inside the package (``.gz``: gunzipped) and the sha256 of the file as copied."""

    name: str
    package: str
    version: str
    member: str
    sha256: str


DOCS = (
    Doc(
        "bzip2-manual.pdf",
        "bzip2-doc",
        "1.0.8-5",
        "usr/share/doc/bzip2/manual.pdf.gz",
        "1dd1f12b3dcb0894481708881ed8d052c769f3820c06839c702c8cfad973d7d3",
    ),
    Doc(
        "libtasn1.pdf",
        "libtasn1-doc",
        "4.19.0-2+deb12u1",
        "usr/share/doc/libtasn1-doc/libtasn1.pdf",
        "3917eb460d87e275f9792b3597029873fd77890ed3ccebe40bbc5a3a7ee516d3",
    ),
    Doc(
        "shared-mime-info-spec.pdf",
        "shared-mime-info",
        "2.2-1",
        "usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf",
        "4d9666c46b4d367a12e2922f4f3b114396c377106c57bbc934d03320e6888002",
    ),
    Doc(
        "fontconfig-user.pdf",
        "fontconfig",
        "2.14.1-4",
        "usr/share/doc/fontconfig/fontconfig-user.pdf.gz",
        "8851a84c668b22261828d36a10f9c46dac3faadf78122995dd92842f9f51747f",
    ),
    Doc(
        "nettle.pdf",
        "nettle-dev",
        "3.8.1-2",
        "usr/share/doc/nettle-dev/nettle.pdf.gz",
        "fa0c6394acde69113eb33202a4c9ba33a4858429f2d735bc2707d41112da98f5",
    ),
    Doc(
        "time.html",
        "time",
        "1.9-0.2",
        "usr/share/doc/time/time.html",
        "e90753640f8ca23c9ca57c1cda5dee2b3a6520e78ddefae48dabf484c615f026",
    ),
    Doc(
        "ninja-manual.html",
        "ninja-build",
        "1.11.1-2~deb12u1",
        "usr/share/doc/ninja-build/manual.html",
        "b1a2f010c30cfe7da72773b5e510eef3668a02f862e678462262780b3326f004",
    ),
    Doc(
        "expat-reference.html",
        "libexpat1-dev",
        "2.5.0-1+deb12u2",
        "usr/share/doc/libexpat1-dev/expat.html/reference.html",
        "793f476e136c8239c01b23414d42d55b00c867b934558b66480060b2dd64833d",
    ),
    Doc(
        "libffi-the-basics.html",
        "libffi-dev",
        "3.4.4-1",
        "usr/share/doc/libffi8/html/The-Basics.html",
        "e52e0840c0815deed45a4d86ee46245353e468ba1af7027758be91ac6d0d2ca5",
    ),
    Doc(
        "libffi-closure-api.html",
        "libffi-dev",
        "3.4.4-1",
        "usr/share/doc/libffi8/html/The-Closure-API.html",
        "05d13136fcc67eadfe546eba50d0a5fd56c7d4495fe95da624f638a4a4de20ae",
    ),
    Doc(
        "libffi-primitive-types.html",
        "libffi-dev",
        "3.4.4-1",
        "usr/share/doc/libffi8/html/Primitive-Types.html",
        "8a7e2326af4d6e88dd5dfddfcb81140205c6065a87896bd02bcb81514e6dda5c",
    ),
    Doc(
        "gitignore.html",
        "git-doc",
        "1:2.39.5-0+deb12u3",
        "usr/share/doc/git-doc/gitignore.html",
        "47fa8f55feff5feffe8381551bc90159144c7c463d92805cb21dccbac3086357",
    ),
    Doc(
        "git-stash.html",
        "git-doc",
        "1:2.39.5-0+deb12u3",
        "usr/share/doc/git-doc/git-stash.html",
        "ba46b3d59953444a98366a8105372b1bc5682cd590a689385cf13954f8bfe100",
    ),
    Doc(
        "valgrind-quick-start.html",
        "valgrind",
        "1:3.19.0-1",
        "usr/share/doc/valgrind/html/quick-start.html",
        "2647941ea76d5b40feb2971d687da7c622a5babcfe694f2dbd702de78a8c1b66",
    ),
    Doc(
        "valgrind-faq.html",
        "valgrind",
        "1:3.19.0-1",
        "usr/share/doc/valgrind/html/faq.html",
        "c91ad7b15297bb1c746c1fec325c31ea093b1db542dcc4e9ee44be617620cba7",
    ),
    Doc(
        "zstd-README.md",
        "zstd",
        "1.5.4+dfsg2-5",
        "usr/share/doc/zstd/README.md.gz",
        "682212486494a36ec1545925c467b4faeee0b1326795584346747b159c10a0f6",
    ),
)


class FetchError(Exception):
    """One line for the user: what failed and what to do."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _deb(package: str, version: str, debs: Path, offline: bool) -> Path:
    """The package's .deb in ``debs``, downloaded with apt-get when it is not there yet."""
    found = sorted(debs.glob(f"{package}_*.deb"))
    # apt-get download names a version with an epoch "1%3a2.39.5-..."; older caches may hold
    # the name without it.
    names = {f"{package}_{version.replace(':', '%3a')}_", f"{package}_{version.split(':')[-1]}_"}
    for deb in found:
        if any(deb.name.startswith(n) for n in names):
            return deb
    if offline:
        raise FetchError(f"{package}={version}: no .deb in {debs} and --offline was given")
    debs.mkdir(parents=True, exist_ok=True)
    try:
        p = subprocess.run(
            ["apt-get", "download", f"{package}={version}"],
            cwd=debs,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except FileNotFoundError as e:
        raise FetchError("apt-get not found: run this on Debian 12 (bookworm)") from e
    except subprocess.TimeoutExpired as e:
        raise FetchError(f"apt-get download {package}={version} timed out (offline?)") from e
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["no message"])[-1]
        raise FetchError(
            f"apt-get download {package}={version} failed (offline, or the version left the "
            f"mirror: try snapshot.debian.org): {last}"
        )
    for deb in sorted(debs.glob(f"{package}_*.deb")):
        if deb not in found:
            return deb
    raise FetchError(f"apt-get download {package}={version} wrote no .deb into {debs}")


def _member(deb: Path, member: str) -> bytes:
    """A file's bytes from a .deb (``dpkg-deb -x`` into a temporary folder), gunzipped."""
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(["dpkg-deb", "-x", str(deb), tmp], capture_output=True, text=True)
        if p.returncode != 0:
            raise FetchError(f"dpkg-deb -x {deb.name} failed: {p.stderr.strip()[:200]}")
        path = Path(tmp) / member
        if not path.is_file():
            raise FetchError(f"{deb.name} holds no {member}")
        data = path.read_bytes()
    return gzip.decompress(data) if member.endswith(".gz") else data


def fetch(cache: Path, offline: bool = False, update: bool = False) -> list[Path]:
    """Every document in ``cache/docs``, downloaded and checked; ``update`` prints the sha256
    of each instead of checking it (for a maintainer pinning a new version)."""
    docs_dir, debs = cache / "docs", cache / "debs"
    docs_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for d in DOCS:
        target = docs_dir / d.name
        if not (target.is_file() and _sha256(target.read_bytes()) == d.sha256):
            data = _member(_deb(d.package, d.version, debs, offline), d.member)
            got = _sha256(data)
            if update:
                print(f"{d.name} {got}")
            elif got != d.sha256:
                raise FetchError(
                    f"{d.name} from {d.package}={d.version}: sha256 {got}, expected {d.sha256}"
                )
            target.write_bytes(data)
        out.append(target)
    return out


def norm(text: str) -> str:
    """Text as evidence is compared: NFKC (ligatures as letters), whitespace runs as one."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def read_corpus(paths: list[Path]) -> list[dict[str, str]]:
    """The documents as ragsieve reads them: ``{"id", "title", "text"}``, id = file name."""
    from ragsieve.io import read_file

    rows = []
    for path in paths:
        (doc,) = read_file(path)
        rows.append({"id": path.name, "title": doc.title or path.name, "text": doc.text})
    return rows


def split_of(qid: str) -> str:
    """The split rule, fixed before any run: ``test`` iff sha256(id) % 3 == 0."""
    return "test" if int(hashlib.sha256(qid.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def check_questions(questions: list[dict], corpus: list[dict[str, str]]) -> list[str]:
    """Problems with the questions (one line each): a split the rule does not give, a source
    unknown, a duplicate id, a gold evidence sentence that is not in its source document as
    read, or an answer that is in none of its evidence sentences. A question with
    ``meta.parts`` (two-part, list, how-to) needs each part (a list of acceptable strings) in
    its evidence instead of the joined answer. An ``unanswerable`` question has no answers and
    no evidence, and none of the terms of its ``meta.absent`` occurs in any document as read."""
    texts = {r["id"]: norm(r["text"]) for r in corpus}
    lowered = {k: v.lower() for k, v in texts.items()}
    problems, ids = [], set()
    for q in questions:
        qid, meta = q.get("id", "?"), q.get("meta", {})
        if qid in ids:
            problems.append(f"{qid}: duplicate id")
        ids.add(qid)
        if meta.get("split") != split_of(str(qid)):
            problems.append(f"{qid}: split {meta.get('split')!r}, the rule says {split_of(qid)}")
        sources = meta.get("source", [])
        for s in sources:
            if s not in texts:
                problems.append(f"{qid}: source {s!r} is not a document of the set")
        if meta.get("kind") == "unanswerable":
            if q.get("answers") or q.get("evidence"):
                problems.append(f"{qid}: an unanswerable question has no answers and no evidence")
            if not meta.get("absent"):
                problems.append(f"{qid}: an unanswerable question names its absent terms")
            for term in meta.get("absent", []):
                hits = [d for d, t in lowered.items() if norm(term).lower() in t]
                if hits:
                    problems.append(f"{qid}: absent term {term!r} occurs in {hits}")
            continue
        if not q.get("answers") or not q.get("evidence"):
            problems.append(f"{qid}: an answerable question needs answers and evidence")
        for e in q.get("evidence", []):
            if not any(norm(e) in texts.get(s, "") for s in sources):
                problems.append(f"{qid}: evidence not found in {sources}: {e[:70]!r}")
        # An answer is in its evidence (line-end hyphens aside), unless it is computed from it
        # ("1 + 1024"); a question in parts needs each part there instead.
        ev = norm(" ".join(q.get("evidence", []))).lower()
        ev = ev + " " + ev.replace("- ", "").replace("\\", "")
        parts = meta.get("parts")
        if parts:
            for part in parts:
                if not any(norm(a).lower() in ev for a in part):
                    problems.append(f"{qid}: part {part!r} occurs nowhere in the evidence")
            continue
        found = any(norm(a).lower() in ev for a in q.get("answers", []))
        if not found and meta.get("kind") != "computed":
            problems.append(f"{qid}: no answer occurs in the evidence")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=CACHE, help="where the folder is built")
    ap.add_argument("--offline", action="store_true", help="use only the debs already cached")
    ap.add_argument("--update-hashes", action="store_true", help="print sha256s, check none")
    args = ap.parse_args(argv)
    try:
        paths = fetch(args.cache, args.offline, args.update_hashes)
    except FetchError as e:
        print(f"fetch.py: {e}", file=sys.stderr)
        return 2
    corpus = read_corpus(paths)
    with (args.cache / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for row in corpus:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    questions = [json.loads(x) for x in QUESTIONS.read_text("utf-8").splitlines() if x.strip()]
    problems = check_questions(questions, corpus)
    for p in problems:
        print(f"fetch.py: {p}", file=sys.stderr)
    for split in SPLITS:
        rows = [q for q in questions if q["meta"]["split"] == split]
        with (args.cache / f"{split}.jsonl").open("w", encoding="utf-8") as fh:
            for q in rows:
                fh.write(json.dumps(q, ensure_ascii=False) + "\n")
        print(f"{split}: {len(rows)} questions -> {args.cache / f'{split}.jsonl'}")
    print(f"corpus: {len(corpus)} documents -> {args.cache / 'corpus.jsonl'}")
    if shutil.which("dpkg-deb") is None:  # pragma: no cover - informational
        print("note: dpkg-deb not found", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
