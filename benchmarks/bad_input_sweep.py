"""Bad-input sweep: every command of the real ``ragsieve`` CLI against inputs a user can get wrong.

Each case runs in a subprocess on a private copy of a small real index (the sample corpus,
MiniLM through ONNX Runtime) after an optional set-up step (a damaged manifest, a FIFO, a
scripted LLM server that hangs or answers garbage). A case passes when:

* it exits with the expected code (2 bad input, 3 index, 4 LLM; 0 where the input is odd but
  valid, e.g. a folder holding a pipe), within its time limit (else: a hang);
* a failure prints exactly one ``error:`` line on stderr and no traceback;
* the index's files are byte-for-byte what they were before a failed command (data harmed
  otherwise), and an intact index still answers ``info`` afterwards.

Prints the per-case table and the totals (Markdown).

    PYTHONPATH=src python benchmarks/bad_input_sweep.py            # ~20 min on 2 cores
    PYTHONPATH=src python benchmarks/bad_input_sweep.py --issue32  # issue 32's 181 cases
    PYTHONPATH=src python benchmarks/bad_input_sweep.py --issue58  # documents are data
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "examples" / "corpus"
DOC = str(CORPUS / "rosetta-stone.md")
Q = "When did Champollion announce the decipherment?"


# ----------------------------------------------------------------------------- LLM servers
def _llm_server(kind: str) -> str:
    """A scripted OpenAI-compatible endpoint on 127.0.0.1 that misbehaves in one way."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status, body = {
                "garbage": (200, b"<html>\x00\x1b[31mnot json" + b"x" * 4000),
                "nochoices": (200, b'{"result": "x"}'),
                "401": (401, b'{"error": {"message": "bad key"}}'),
                "500": (500, b"internal"),
                "hang": (200, b"{}"),
                "badcontent": (200, b'{"choices": [{"message": {"content": 5}}]}'),
            }[kind]
            if kind == "hang":
                time.sleep(30)
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass

        def log_message(self, *a: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"openai:m@http://127.0.0.1:{httpd.server_address[1]}/v1"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ----------------------------------------------------------------------------- cases
Setup = Callable[[Path, Path], None]  # (work dir, index copy)


@dataclass
class Case:
    area: str
    name: str
    args: list[str]  # {idx} and {tmp} are substituted
    expect: int
    setup: Setup | None = None
    timeout: float = 120
    fragment: str = ""  # must appear in the error line
    intact: bool = True  # the index copy is intact (info must work afterwards)
    meta: dict[str, Any] = field(default_factory=dict)
    #: Python code run instead of the CLI (``args`` unused; {idx} and {tmp} substituted). A
    #: ``RagsieveError`` it raises is printed as one ``error:`` line and exits with its code.
    python: str = ""
    #: After the command: (work dir, index copy, stdout) -> "" when all is well, else what went
    #: wrong (a document removed that was not named, a silent accept): the case fails with it.
    check: Callable[[Path, Path, str], str] | None = None


def _write(rel: str, data: str | bytes) -> Setup:
    def f(tmp: Path, idx: Path) -> None:
        p = tmp / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())

    return f


def _fifo(rel: str) -> Setup:
    def f(tmp: Path, idx: Path) -> None:
        p = tmp / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(p)
        if p.parent != tmp:
            shutil.copy(DOC, p.parent)

    return f


def _manifest(edit: Callable[[dict[str, Any]], Any]) -> Setup:
    def f(tmp: Path, idx: Path) -> None:
        m = json.loads((idx / "ragsieve.json").read_text())
        out = edit(m)
        (idx / "ragsieve.json").write_text(out if isinstance(out, str) else json.dumps(m))

    return f


def _rm(rel: str) -> Setup:
    def f(tmp: Path, idx: Path) -> None:
        p = idx / rel
        shutil.rmtree(p) if p.is_dir() else p.unlink()

    return f


def _big(rel: str, mb: float, punct: bool) -> Setup:
    def f(tmp: Path, idx: Path) -> None:
        rng = random.Random(0)
        words = ["river", "stone", "tower", "light", "city", "engine", "garden", "market"]
        n = int(mb * 1_000_000 / 7)
        text = " ".join(rng.choice(words) for _ in range(n))
        if punct:
            text = text.replace(" garden", ". Garden")
        (tmp / rel).write_text(text)

    return f


def _chain(*fs: Setup) -> Setup:
    def f(tmp: Path, idx: Path) -> None:
        for g in fs:
            g(tmp, idx)

    return f


def _jsonl(rows: list[Any]) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


# fmt: off
def cases(llm: dict[str, str]) -> list[Case]:
    I = ["--index", "{idx}"]  # noqa: E741
    qrow = {"question": "q?", "answers": ["a"], "documents": ["a b c"]}
    c: list[Case] = []
    add = c.append
    # --- index: what is read
    add(Case("index", "missing file", ["index", "{tmp}/nope.md", *I], 2, fragment="no such"))
    add(Case("index", "empty file", ["index", "{tmp}/e.md", *I], 2, _write("e.md", "")))
    add(Case("index", "whitespace-only file", ["index", "{tmp}/w.md", *I], 2,
        _write("w.md", " \n\t\n")))
    add(Case("index", "binary file", ["index", "{tmp}/b.txt", *I], 2,
        _write("b.txt", b"\x00\x01\x02\xff")))
    add(Case("index", "named pipe", ["index", "{tmp}/p.md", *I], 2, _fifo("p.md"), 60,
        "regular file"))
    add(Case("index", "pipe inside a folder (skipped)", ["index", "{tmp}/d", *I], 0,
        _fifo("d/p.md"), 60))
    add(Case("index", "character device /dev/null", ["index", "/dev/null", *I], 2, timeout=60))
    add(Case("index", "/dev/zero (endless device)", ["index", "/dev/zero", *I], 2, timeout=60))
    add(Case("index", "empty folder", ["index", "{tmp}/d", *I], 2, _write("d/.keep", "")))
    add(Case("index", "folder of binaries only", ["index", "{tmp}/d", *I], 2,
        _write("d/x.txt", b"\x00\x00")))
    add(Case("index", "Latin-1 bytes", ["index", "{tmp}/l.txt", *I], 2,
        _write("l.txt", "caf\xe9 cr\xe8me br\xfbl\xe9e. ".encode("latin-1") * 20)))
    add(Case("index", "malformed JSONL", ["index", "{tmp}/d.jsonl", *I], 2,
        _write("d.jsonl", '{"text": "a"}\n{oops\n')))
    add(Case("index", "JSONL without text", ["index", "{tmp}/d.jsonl", *I], 2,
        _write("d.jsonl", '{"title": "a"}\n')))
    add(Case("index", "JSONL text not a string", ["index", "{tmp}/d.jsonl", *I], 2,
        _write("d.jsonl", '{"text": 5}\n')))
    add(Case("index", "JSON array, not lines", ["index", "{tmp}/d.jsonl", *I], 2,
        _write("d.jsonl", '[{"text": "a"}]\n')))

    def loop(tmp: Path, idx: Path) -> None:
        (tmp / "loop").symlink_to(tmp / "loop")

    add(Case("index", "symlink loop", ["index", "{tmp}/loop", *I], 2, loop))

    def broken(tmp: Path, idx: Path) -> None:
        (tmp / "dead.md").symlink_to(tmp / "nowhere.md")

    add(Case("index", "broken symlink", ["index", "{tmp}/dead.md", *I], 2, broken))
    add(Case("index", "2 MB on one line, no sentence end", ["index", "{tmp}/big.txt", *I], 0,
        _big("big.txt", 2, False), 400))
    add(Case("index", "2 MB on one line with sentences", ["index", "{tmp}/big.txt", *I], 0,
        _big("big.txt", 2, True), 400))
    add(Case("index", "12 KB word without whitespace", ["index", "{tmp}/blob.txt", *I], 0,
        _write("blob.txt", "QUJD" * 3000)))
    # --- index: options
    add(Case("index", "--chunk-tokens 0", ["index", DOC, *I, "--chunk-tokens", "0"], 2))
    add(Case("index", "--chunk-tokens 7", ["index", DOC, *I, "--chunk-tokens", "7"], 2))
    add(Case("index", "--chunk-tokens abc", ["index", DOC, *I, "--chunk-tokens", "abc"], 2))
    add(Case("index", "--chunk-tokens clash with the index",
        ["index", DOC, *I, "--chunk-tokens", "50"], 2, fragment="--chunk-tokens 200"))
    add(Case("index", "--chunker bogus",
        ["index", DOC, "--index", "{tmp}/new", "--chunker", "bogus"], 2))
    add(Case("index", "--embedder bogus",
        ["index", DOC, "--index", "{tmp}/new", "--embedder", "bogus"], 2))
    add(Case("index", "--wait -1", ["index", DOC, *I, "--wait", "-1"], 2))
    add(Case("index", "--wait abc", ["index", DOC, *I, "--wait", "abc"], 2))
    add(Case("index", "unknown option", ["index", DOC, *I, "--frobnicate"], 2))
    add(Case("index", "no paths", ["index", *I], 2))
    # --- index: where it goes
    add(Case("location", "--index ''", ["index", DOC, "--index", ""], 2))
    add(Case("location", "--index under /proc", ["index", DOC, "--index", "/proc/ragsieve-x"], 3))
    add(Case("location", "--index inside a regular file",
        ["index", DOC, "--index", "{tmp}/f.txt/sub"], 3, _write("f.txt", "x")))
    add(Case("location", "--index is a regular file", ["index", DOC, "--index", "{tmp}/f.txt"], 3,
        _write("f.txt", "x")))
    add(Case("location", "--index /dev/null", ["search", "x", "--index", "/dev/null"], 3))
    add(Case("location", "search a missing index", ["search", "x", "--index", "{tmp}/none"], 3))
    add(Case("location", "search an empty folder", ["search", "x", "--index", "{tmp}/d"], 3,
        _write("d/.keep", "")))
    add(Case("location", "search a folder of other files", ["search", "x", "--index", "{tmp}/d"], 3,
        _write("d/notes.txt", "x")))
    # --- damaged indexes: refused, never rewritten
    lost = _rm("ragsieve.json")
    add(Case("damaged", "lost manifest: index", ["index", DOC, *I], 3, lost, fragment="repair",
        intact=False))
    add(Case("damaged", "lost manifest: rm", ["rm", DOC, *I], 3, lost, intact=False))
    add(Case("damaged", "lost manifest: search", ["search", "x", *I], 3, lost, intact=False))
    garbage = _manifest(lambda m: "{garbage")
    add(Case("damaged", "garbage manifest: index", ["index", DOC, *I], 3, garbage,
        fragment="corrupt", intact=False))
    add(Case("damaged", "garbage manifest: info", ["info", *I], 3, garbage, intact=False))
    add(Case("damaged", "manifest without n_documents: info", ["info", *I], 3,
        _manifest(lambda m: m.pop("n_documents")), fragment="n_documents", intact=False))
    add(Case("damaged", "manifest count is a string", ["info", *I], 3,
        _manifest(lambda m: m.update(n_chunks="12")), intact=False))
    add(Case("damaged", "manifest names an unknown chunker: search still reads",
        ["search", "x", *I], 0, _manifest(lambda m: m["config"].update(chunker="zzz")),
        intact=False))
    add(Case("damaged", "manifest names an unknown chunker: index a new file",
        ["index", "{tmp}/new.md", *I], 2, _chain(_manifest(lambda m: m["config"].update(
        chunker="zzz")), _write("new.md", "A new fact about space probes.")),
        fragment="unknown chunker", intact=False))
    add(Case("damaged", "manifest is a JSON list", ["info", *I], 3, _manifest(lambda m: "[1, 2]"),
        intact=False))
    add(Case("damaged", "chunks table deleted", ["search", "x", *I], 3, _rm("chunks.lance"),
        intact=False))
    add(Case("damaged", "documents table deleted: index", ["index", DOC, *I], 3,
        _rm("documents.lance"), intact=False))
    add(Case("damaged", "repair an empty folder", ["repair", "--index", "{tmp}/d"], 3,
        _write("d/.keep", "")))
    add(Case("damaged", "repair a missing path", ["repair", "--index", "{tmp}/none"], 3))
    # --- search
    add(Case("search", "empty query", ["search", "  ", *I], 2))
    add(Case("search", "--k 0", ["search", "x", *I, "--k", "0"], 2))
    add(Case("search", "--k -1", ["search", "x", *I, "--k", "-1"], 2))
    add(Case("search", "--k 100000", ["search", "x", *I, "--k", "100000"], 2))
    add(Case("search", "--retriever colbert", ["search", "x", *I, "--retriever", "colbert"], 2))
    add(Case("search", "--reranker bogus", ["search", "x", *I, "--reranker", "bogus"], 2))
    add(Case("search", "query of 100,000 characters", ["search", "bees " * 20000, *I, "--k", "2"],
        0))
    add(Case("search", "query of control characters",
        ["search", "\x1b[31m\x07 bees", *I, "--k", "2"], 0))
    add(Case("search", "query of punctuation only (bm25)",
        ["search", "?!.,;", *I, "--retriever", "bm25"], 0))
    # --- ask / explain
    add(Case("ask", "--method magic", ["ask", Q, *I, "--method", "magic"], 2))
    add(Case("ask", "--method 'sage[min_k=abc]'", ["ask", Q, *I, "--method", "sage[min_k=abc]"], 2))
    add(Case("ask", "--method 'sage[nope=1]'", ["ask", Q, *I, "--method", "sage[nope=1]"], 2))
    add(Case("ask", "--method 'carrot['", ["ask", Q, *I, "--method", "carrot["], 2))
    add(Case("ask", "--llm gpt-9000", ["ask", Q, *I, "--llm", "gpt-9000"], 2))
    add(Case("ask", "--llm local:missing.gguf", ["ask", Q, *I, "--llm", "local:{tmp}/none.gguf"],
        2))
    add(Case("ask", "--llm local:<text file>.gguf", ["ask", Q, *I, "--llm", "local:{tmp}/m.gguf"],
        2, _write("m.gguf", "not a model")))
    add(Case("ask", "--llm openai:m@ftp://x", ["ask", Q, *I, "--llm", "openai:m@ftp://x"], 2))
    add(Case("ask", "--llm openai with no model", ["ask", Q, *I, "--llm", "openai:"], 2))
    add(Case("ask", "--max-tokens 0", ["ask", Q, *I, "--max-tokens", "0"], 2))
    add(Case("ask", "--budget 0", ["ask", Q, *I, "--budget", "0"], 2))
    add(Case("ask", "--llm-timeout 0", ["ask", Q, *I, "--llm-timeout", "0"], 2))
    add(Case("ask", "--llm-timeout with the local LLM", ["ask", Q, *I, "--llm-timeout", "5"], 2))
    add(Case("ask", "--llm-retries 99", ["ask", Q, *I, "--llm-retries", "99"], 2))
    fast = ["--llm-retries", "0", "--llm-timeout", "2", "--k", "1"]
    add(Case("llm", "endpoint refuses connections",
        ["ask", Q, *I, "--llm", f"openai:m@http://127.0.0.1:{_closed_port()}/v1", *fast], 4,
        fragment="unreachable"))
    add(Case("llm", "endpoint hangs (--llm-timeout 2)", ["ask", Q, *I, "--llm", llm["hang"], *fast],
        4, fragment="timed out"))
    add(Case("llm", "endpoint answers non-JSON with NUL bytes",
        ["ask", Q, *I, "--llm", llm["garbage"], *fast], 4, fragment="\\x00"))
    add(Case("llm", "endpoint answers JSON without choices",
        ["ask", Q, *I, "--llm", llm["nochoices"], *fast], 4))
    add(Case("llm", "endpoint answers a number as content",
        ["ask", Q, *I, "--llm", llm["badcontent"], *fast], 4))
    add(Case("llm", "endpoint says 401", ["ask", Q, *I, "--llm", llm["401"], *fast], 4,
        fragment="rejected"))
    add(Case("llm", "endpoint says 500", ["ask", Q, *I, "--llm", llm["500"], *fast], 4))
    add(Case("explain", "--plot not .png", ["explain", Q, *I, "--plot", "{tmp}/p.txt"], 2))
    add(Case("explain", "--plot under /proc", ["explain", Q, *I, "--plot", "/proc/x/p.png"], 2))
    add(Case("explain", "--plot names a folder", ["explain", Q, *I, "--plot", "{tmp}/d.png"], 2,
        _write("d.png/.keep", "")))
    add(Case("explain", "--plot inside a regular file",
        ["explain", Q, *I, "--plot", "{tmp}/f/p.png"], 2, _write("f", "x")))
    # --- eval
    add(Case("eval", "--dataset nope", ["eval", "--dataset", "nope", "--no-llm"], 2))
    add(Case("eval", "--data missing", ["eval", "--data", "{tmp}/none.jsonl", "--no-llm"], 2))
    add(Case("eval", "--data malformed", ["eval", "--data", "{tmp}/q.jsonl", "--no-llm"], 2,
        _write("q.jsonl", "{oops\n")))
    add(Case("eval", "--data empty", ["eval", "--data", "{tmp}/q.jsonl", "--no-llm"], 2,
        _write("q.jsonl", "")))
    add(Case("eval", "--data rows without a question",
        ["eval", "--data", "{tmp}/q.jsonl", "--no-llm"], 2,
        _write("q.jsonl", _jsonl([{"answers": ["a"]}]))))
    add(Case("eval", "--out inside a regular file",
        ["eval", "--data", "{tmp}/q.jsonl", "--no-llm", "--out", "{tmp}/f/out"], 2,
        _chain(_write("q.jsonl", _jsonl([qrow])), _write("f", "x"))))
    add(Case("eval", "--out under /proc",
        ["eval", "--data", "{tmp}/q.jsonl", "--no-llm", "--out", "/proc/x"], 2,
        _write("q.jsonl", _jsonl([qrow]))))
    add(Case("eval", "--methods bogus",
        ["eval", "--data", "{tmp}/q.jsonl", "--no-llm", "--methods", "bogus"], 2,
        _write("q.jsonl", _jsonl([qrow]))))
    add(Case("eval", "--limit 0", ["eval", "--dataset", "squad", "--limit", "0", "--no-llm"], 2))
    add(Case("eval", "--data-dir missing",
        ["eval", "--dataset", "squad", "--no-llm", "--data-dir", "{tmp}/none"], 2))
    # --- rm / info / serve / misc
    # Issue 33: an rm that matches nothing is done (exit 0, "not in the index" on stderr), as rm -f.
    add(Case("rm", "unknown document", ["rm", "nope.md", *I], 0))
    add(Case("rm", "missing index", ["rm", "nope.md", "--index", "{tmp}/none"], 3))
    add(Case("rm", "no document named", ["rm", *I], 2))
    add(Case("info", "missing index", ["info", "--index", "{tmp}/none"], 3))
    add(Case("info", "a regular file", ["info", "--index", "{tmp}/f"], 3, _write("f", "x")))
    add(Case("serve", "--port 99999", ["serve", *I, "--port", "99999"], 2))
    add(Case("serve", "--port in use", ["serve", *I, "--port", "{busy}"], 2))
    add(Case("serve", "missing index",
        ["serve", "--index", "{tmp}/none", "--port", str(_closed_port())], 3))
    add(Case("serve", "--log-level loud", ["serve", *I, "--log-level", "loud"], 2))
    add(Case("misc", "unknown command", ["frobnicate"], 2))
    add(Case("misc", "unknown option before the command", ["--frob", "info"], 2))
    return c
# fmt: on


# ----------------------------------------------------------------------------- issue 32
def _named(name: bytes, text: str = "A note about zebras and their stripes.\n") -> Setup:
    """A file with a raw (possibly non-UTF-8) byte name under {tmp}/d, beside a normal one."""

    def f(tmp: Path, idx: Path) -> None:
        d = os.fsencode(tmp / "d")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "w") as fh:
            fh.write(text)
        (tmp / "d" / "ok.md").write_text("# OK\nGiraffes are tall.\n")

    return f


def _deep(levels: int, hidden_at: int | None = None) -> Setup:
    """{tmp}/deep with a file at the top and one ``levels`` folders down (made iteratively)."""

    def f(tmp: Path, idx: Path) -> None:
        top = tmp / "deep"
        top.mkdir()
        (top / "top.md").write_text("The top note mentions otters.\n")
        cur = os.open(top, os.O_RDONLY)
        for i in range(levels):
            name = ".h" if hidden_at == i else "d"
            os.mkdir(name, dir_fd=cur)
            nxt = os.open(name, os.O_RDONLY, dir_fd=cur)
            os.close(cur)
            cur = nxt
        fd = os.open("x.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=cur)
        os.write(fd, b"A deep note.\n")
        os.close(fd)
        os.close(cur)

    return f


def _other_tables(tmp: Path, idx: Path) -> None:
    """A valid manifest over another tool's Lance table (other columns) named chunks."""
    import lance
    import pyarrow as pa

    shutil.rmtree(idx / "chunks.lance")
    lance.write_dataset(pa.table({"a": [1, 2], "b": ["x", "y"]}), str(idx / "chunks.lance"))
    m = json.loads((idx / "ragsieve.json").read_text())
    m["tables"]["chunks"] = 1
    (idx / "ragsieve.json").write_text(json.dumps(m))


def _manifest_fifo(tmp: Path, idx: Path) -> None:
    (idx / "ragsieve.json").unlink()
    os.mkfifo(idx / "ragsieve.json")


def _manifest_dir(tmp: Path, idx: Path) -> None:
    (idx / "ragsieve.json").unlink()
    (idx / "ragsieve.json").mkdir()


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    """A manifest edit: ``a.b`` = value (``...`` deletes the key)."""

    def edit(m: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        d = m
        for p in parents:
            d = d[p]
        if value is ...:
            del d[last]
        else:
            d[last] = value

    return edit


# fmt: off
def issue32_cases() -> list[Case]:
    """Issue 32's probe, and cases of the same families: names, whitespace, depth, JSONL
    bounds, queries, specs, LLM URLs, plot names, object stores, manifests, --force, and
    what used to be silently accepted."""
    I = ["--index", "{idx}"]  # noqa: E741
    c: list[Case] = []
    add = c.append
    # --- file names: indexed under an escaped id, never aborting the folder
    for label, name in [
        ("\\xff byte", b"bad\xffname.md"),
        ("truncated UTF-8", b"caf\xc3.md"),
        ("overlong UTF-8", b"\xc0\xafslash.md"),
        ("lone surrogate bytes", b"\xed\xa0\x80.md"),
        ("Latin-1 accents", b"r\xe9sum\xe9.txt"),
        ("newline in name", b"two\nlines.md"),
        ("255-byte name", b"n" * 252 + b".md"),
        ("hash in name", b"a#1.md"),
        ("leading dash", b"-rf.md"),
        ("emoji", "\U0001f980 crab.md".encode()),
        ("NFD accents", "cafe\u0301.md".encode()),
        ("control char", b"bell\x07.md"),
    ]:
        add(Case("names", f"folder with a {label} file name", ["index", "{tmp}/d", *I], 0,
            _named(name)))
    add(Case("names", "non-UTF-8 name given explicitly",
        ["index", os.fsdecode(b"{tmp}/d/x\xff.md"), *I], 0, _named(b"x\xff.md")))
    add(Case("names", "non-UTF-8 .jsonl name", ["index", "{tmp}/d", *I], 0,
        _named(b"r\xff.jsonl", '{"text": "A record about owls."}\n')))
    # --- whitespace runs: cut before tokenising
    for label, ch, n in [
        ("1,000,000 spaces", " ", 1_000_000),
        ("1,000,000 newlines", "\n", 1_000_000),
        ("1,000,000 tabs", "\t", 1_000_000),
        ("500,000 CRLF", "\r\n", 500_000),
        ("1,000,000 no-break spaces", "\u00a0", 1_000_000),
        ("300,000 ideographic spaces", "\u3000", 300_000),
        ("mixed 1 MB of space, tab, newline", " \t\n", 333_333),
        ("1,000,000 form feeds", "\f", 1_000_000),
    ]:
        text = "Start of the note. " + ch * n + " End of the note about herons."
        add(Case("whitespace", label, ["index", "{tmp}/w.txt", *I], 0, _write("w.txt", text), 300))
    add(Case("whitespace", "JSONL text of 1,000,000 spaces", ["index", "{tmp}/w.jsonl", *I], 0,
        _write("w.jsonl", json.dumps({"text": "a" + " " * 1_000_000 + "b"}) + "\n"), 300))
    add(Case("whitespace", "query of 100,000 spaces around a word",
        ["search", " " * 50_000 + "lens" + " " * 50_000, *I], 0))
    # --- folder depth and access
    for levels in (70, 500, 1500):
        add(Case("depth", f"folder nested {levels} deep", ["index", "{tmp}/deep", *I], 0,
            _deep(levels), 300))
    add(Case("depth", "hidden folder deep down", ["index", "{tmp}/deep", *I], 0, _deep(20, 10)))

    def sym_loop_dir(tmp: Path, idx: Path) -> None:
        (tmp / "d").mkdir()
        (tmp / "d" / "a.md").write_text("A note about moles.\n")
        (tmp / "d" / "self").symlink_to(tmp / "d")

    add(Case("depth", "folder linking to itself", ["index", "{tmp}/d", *I], 0, sym_loop_dir))

    def mode000(tmp: Path, idx: Path) -> None:
        (tmp / "d" / "locked").mkdir(parents=True)
        (tmp / "d" / "a.md").write_text("A note about voles.\n")
        (tmp / "d" / "locked" / "b.md").write_text("Hidden.\n")
        os.chmod(tmp / "d" / "locked", 0)

    add(Case("depth", "mode-000 subfolder (skipped)", ["index", "{tmp}/d", *I], 0, mode000))
    # --- JSONL bounds
    deep = '{"text": "a", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    for label, row in [
        ("nested 100,000 deep", deep),
        ("nested 1,000 deep", '{"text": "a", "x": ' + "[" * 1000 + "]" * 1000 + "}"),
        ("5,000-digit number", '{"text": "a", "n": ' + "9" * 5000 + "}"),
        ("5,000-digit id", '{"text": "a", "id": ' + "9" * 5000 + "}"),
        ("lone \\ud800 in text", '{"text": "a \\ud800 b"}'),
        ("lone \\udfff in title", '{"text": "a", "title": "\\udfff"}'),
        ("lone surrogate in id", '{"text": "a", "id": "\\ud834"}'),
        ("id as float", '{"text": "a", "id": 1.5}'),
        ("id as list", '{"text": "a", "id": [1]}'),
        ("id as object", '{"text": "a", "id": {"a": 1}}'),
        ("text as list", '{"text": ["a"]}'),
        ("title as number", '{"text": "a", "title": 5}'),
        ("null record", "null"),
        ("string record", '"just text"'),
        ("trailing garbage", '{"text": "a"} x'),
    ]:
        add(Case("jsonl", label, ["index", "{tmp}/r.jsonl", *I], 2, _write("r.jsonl", row + "\n")))
    for label, rows, code in [
        ("10,000 records without ids",
            [{"text": f"Record {i} about item {i}."} for i in range(10_000)], 0),
        ("BOM then records", None, 0),
        ("id equal to an indexed path", [{"id": DOC, "text": "Not the stone."}], 0),
        ("blank lines only", [""], 2),
        # Valid JSON: fields other than id, title and text are ignored, a \u0000 is text.
        ("1e999 in an ignored field", ['{"text": "a", "n": 1e999}'], 0),
        ("NaN in an ignored field", ['{"text": "a", "n": NaN}'], 0),
        ("NUL escape in text", ['{"text": "a\\u0000b"}'], 0),
    ]:
        data = "\ufeff" + _jsonl([{"text": "a"}]) if rows is None else _jsonl(rows)
        add(Case("jsonl", label, ["index", "{tmp}/r.jsonl", *I], code, _write("r.jsonl", data),
            600))
    # --- queries
    bad_q = os.fsdecode(b"caf\xe9 \xff\xfe")
    for cmd in ("search", "ask", "explain"):
        add(Case("query", f"non-UTF-8 {cmd} query", [cmd, bad_q, *I], 2, fragment="UTF-8"))
    add(Case("query", "query with a lone surrogate escape",
        ["search", os.fsdecode(b"\xed\xa0\x80"), *I], 2))
    add(Case("query", "whitespace-only query", ["search", " \t ", *I], 2))
    # One argument may hold at most 128 KiB on Linux (MAX_ARG_STRLEN).
    add(Case("query", "96,000-character query", ["search", "stone " * 16_000, *I], 0))
    add(Case("query", "control characters", ["search", "stone\x1b[31m\x07", *I], 0))
    # --- method specs
    for spec in [
        "naive[k=99999999999999999999]", "naive[k=-1]", "naive[k=0]", "naive[k=1e309]",
        "naive[k=nan]", "naive[k=inf]", "naive[budget=-5]", "naive[budget=99999999999999999999]",
        "naive[k=1,k=2]", "naive[k=1,K=2,k=3]", "pareto[depth=-1]", "pareto[depth=0]",
        "carrot[iterations=99999999999999999999]", "carrot[N=-3]",
        "sage[feedback_max_tokens=99999999999999999999]", "sage[n=1e400]", "naive[k=2",
        "naive]k=2[", "naive[[k=2]]", "naive[k]", "naive[=2]", "naive[nosuch=1]", "nosuch",
        "naive[" + "k=1," * 3000 + "]", "",
    ]:
        add(Case("spec", f"--method {spec[:40]!r}", ["search", "stone", *I, "--method", spec], 2))
    # --- LLM specs and URLs
    for spec in [
        "openai:m@http://[::1", "openai:m@http://[::1]:99999/v1", "openai:m@http://host:abc/v1",
        "openai:m@http://:80/v1", "openai:m@http:///v1", "openai:@http://127.0.0.1:9/v1",
        "openai:m@ftp://127.0.0.1/v1", "openai:m@", "local:/no/such/model.gguf",
        "local:" + "x" * 5000, "nosuch:model",
    ]:
        add(Case("llm", f"--llm {spec[:40]!r}", ["ask", Q, *I, "--llm", spec], 2, timeout=60))
    # --- --plot names
    for label, name in [
        ("300-character name", "a" * 300 + ".png"),
        ("a folder named x.png", "isdir.png"),
        ("under /proc", "/proc/x.png"),
        ("under a regular file", "file/x.png"),
        ("not .png", "x.jpg"),
    ]:

        def setup(tmp: Path, idx: Path) -> None:
            (tmp / "isdir.png").mkdir()
            (tmp / "file").write_text("x")

        target = name if name.startswith("/") else "{tmp}/" + name
        add(Case("plot", label, ["explain", Q, *I, "--plot", target], 2, setup))
    # The longest name a file system takes is fine.
    add(Case("plot", "255-character name",
        ["explain", Q, *I, "--plot", "{tmp}/" + "a" * 251 + ".png"], 0))
    # --- object stores and URLs with no network
    for url in [
        "s3://ragsieve-no-such-bucket/idx", "gs://ragsieve-no-such-bucket/idx",
        "ftp://example.invalid/idx", "az://container/idx", "hdfs://namenode/idx",
        "http://example.invalid/idx", "s3://", "file:///nonexistent/ragsieve/idx",
        "bogus+scheme://x/y",
    ]:
        add(Case("url", f"info {url}", ["info", "--index", url], 3, timeout=60))
        add(Case("url", f"search {url}", ["search", "x", "--index", url], 3, timeout=60))
    # --- manifests: one line naming the bad key, nothing changed
    for label, edit in [
        ("tables as a list", _set("tables", [1, 2])),
        ("tables.chunks true", _set("tables.chunks", True)),
        ("tables.chunks a string", _set("tables.chunks", "3")),
        ("tables.chunks negative", _set("tables.chunks", -1)),
        ("tables.chunks missing", _set("tables.chunks", ...)),
        ("unknown table", _set("tables.extra", 1)),
        ("numeric embedder", _set("config.embedder", 5)),
        ("null chunker", _set("config.chunker", None)),
        ("chunk_tokens a string", _set("config.chunk_tokens", "200")),
        ("chunk_tokens 10^12", _set("config.chunk_tokens", 10**12)),
        ("unknown config key", _set("config.colour", "red")),
        ("dim 0", _set("dim", 0)),
        ("dim a string", _set("dim", "384")),
        ("ann a string", _set("ann", "bogus")),
        ("ann empty object", _set("ann", {})),
        ("ann with another index type", _set("ann", {"index_type": "IVF_PQ"})),
        ("n_documents negative", _set("n_documents", -1)),
        ("updated a string", _set("updated", "yesterday")),
        ("format_version 0", _set("format_version", 0)),
        ("format_version a string", _set("format_version", "1")),
        ("config a list", _set("config", [])),
    ]:
        for cmd in (["info"], ["search", "stone"]):
            add(Case("manifest", f"{cmd[0]}: {label}", [*cmd, *I], 3, _manifest(edit),
                intact=False))
    add(Case("manifest", "manifest is a FIFO", ["info", *I], 3, _manifest_fifo, 30, intact=False))
    add(Case("manifest", "manifest is a folder", ["info", *I], 3, _manifest_dir, intact=False))
    add(Case("manifest", "valid manifest over another tool's table", ["search", "x", *I], 3,
        _other_tables, intact=False))
    add(Case("manifest", "info over another tool's table", ["info", *I], 3, _other_tables,
        intact=False))
    add(Case("manifest", "manifest JSON null", ["info", *I], 3, _manifest(lambda m: "null"),
        intact=False))
    add(Case("manifest", "manifest 1 MB of digits", ["info", *I], 3,
        _manifest(lambda m: "9" * 1_000_000), intact=False))
    add(Case("manifest", "manifest nested 100,000 deep", ["info", *I], 3,
        _manifest(lambda m: "[" * 100_000), intact=False))
    # --- --force: the old index answers after any failure
    for label, extra in [
        ("bad embedder path", ["--embedder", "st:/no/such/model"]),
        ("unknown embedder", ["--embedder", "nosuch"]),
        ("bad chunker", ["--chunker", "nosuch"]),
        ("chunk tokens 0", ["--chunk-tokens", "0"]),
        ("bad pareto context", ["--sentences", "--pareto-context", "nosuch"]),
        ("missing input", []),
    ]:
        src = "{tmp}/none.md" if label == "missing input" else DOC
        add(Case("force", f"--force with {label}", ["index", src, *I, "--force", *extra], 2,
            timeout=120))
    # --- what used to be accepted silently
    add(Case("silent", "NUL byte after the first 8 KB", ["index", "{tmp}/n.txt", *I], 2,
        _write("n.txt", "a" * 9000 + "\x00b")))
    add(Case("silent", "NUL byte at 1 MB in a folder (skipped)", ["index", "{tmp}/d", *I], 0,
        _chain(_write("d/n.txt", "a " * 500_000 + "\x00"), _write("d/ok.md", "Fine.\n"))))
    add(Case("silent", "--chunk-tokens 10^12",
        ["index", DOC, *I, "--chunk-tokens", "1000000000000"], 2))
    add(Case("silent", "--chunk-tokens 100001",
        ["index", DOC, "--index", "{tmp}/new", "--chunk-tokens", "100001"], 2))
    add(Case("silent", "eval --chunk-tokens 10^12",
        ["eval", "--dataset", "squad", "--no-llm", "--chunk-tokens", "1000000000000"], 2))
    add(Case("silent", "prune on an empty file", ["prune", "q?", "{tmp}/e.txt"], 2,
        _write("e.txt", "")))
    add(Case("silent", "prune on a whitespace file", ["prune", "q?", "{tmp}/e.txt"], 2,
        _write("e.txt", " \n\n ")))
    return c
# fmt: on


# ----------------------------------------------------------------------------- running
def _snapshot(idx: Path) -> dict[str, str]:
    if not idx.exists():
        return {}
    out = {}
    for f in sorted(idx.rglob("*")):
        if f.is_file() and f.name != ".ragsieve.lock":
            out[str(f.relative_to(idx))] = hashlib.sha1(f.read_bytes()).hexdigest()
    return out


_PY_WRAPPER = """
import sys
from ragsieve.errors import RagsieveError
try:
{body}
except RagsieveError as e:
    print(f"error: {{e}}", file=sys.stderr)
    sys.exit(e.exit_code)
"""


def _python_argv(code: str) -> list[str]:
    body = "\n".join("    " + ln for ln in code.strip("\n").splitlines())
    return ["-c", _PY_WRAPPER.format(body=body)]


def _run(argv: list[str], timeout: float) -> tuple[int | None, str, str, float]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            [sys.executable, *argv],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return None, "", "", time.perf_counter() - t0
    return p.returncode, p.stdout, p.stderr, time.perf_counter() - t0


def cli_json(*args: str, timeout: float = 120) -> tuple[Any, str]:
    """``ragsieve ARGS --json`` in a subprocess: (its parsed stdout, or None when it failed;
    its stderr), for a check that reads what the CLI reports."""
    code, out, err, _ = _run(["-m", "ragsieve.cli", *args, "--json"], timeout)
    return (json.loads(out) if code == 0 else None), err


def _cli(args: list[str], timeout: float) -> tuple[int | None, str, float]:
    code, _, err, secs = _run(["-m", "ragsieve.cli", *args], timeout)
    return code, err, secs


def run_case(case: Case, base: Path, busy: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragsieve-sweep-") as t:
        tmp = Path(t)
        idx = tmp / "idx"
        shutil.copytree(base, idx)
        if case.setup:
            case.setup(tmp, idx)
        before = _snapshot(idx)
        if case.python:
            argv = _python_argv(case.python.replace("{idx}", str(idx)).replace("{tmp}", str(tmp)))
        else:
            args = [a.format(idx=idx, tmp=tmp, busy=busy) for a in case.args]
            argv = ["-m", "ragsieve.cli", *args]
        code, out, err, secs = _run(argv, case.timeout)
        problem = case.check(tmp, idx, out) if case.check and code is not None else ""
        after = _snapshot(idx)
        lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("warning:")]
        errors = [ln for ln in lines if ln.startswith("error: ")]
        harmed = code != 0 and before != after
        if case.intact and not harmed:
            ok_info, _, _ = _cli(["info", "--index", str(idx)], 60)
            harmed = ok_info != 0
        one = code == 0 or (len(errors) == 1 and case.fragment in errors[0])
        row = {
            "area": case.area,
            "case": case.name,
            "expect": case.expect,
            "exit": code,
            "seconds": round(secs, 1),
            "traceback": "Traceback" in err,
            "hang": code is None,
            "one_line": one,
            "harmed": harmed,
            "message": (problem or (errors[0][7:] if errors else ""))[:110],
            "problem": problem,
        }
        row["pass"] = (
            code == case.expect and one and not row["traceback"] and not harmed and not problem
        )
        return row


def issue45_cases() -> list[Case]:
    """Issue 45's families, one module each beside this file (they import Case from here)."""
    sys.modules.setdefault("bad_input_sweep", sys.modules[__name__])
    import sweep_api
    import sweep_readers
    import sweep_rm
    import sweep_serve

    return [*sweep_rm.cases(), *sweep_readers.cases(), *sweep_api.cases(), *sweep_serve.cases()]


def issue58_cases() -> list[Case]:
    """Issue 58's families (documents are data): links out of the folder, control tokens in
    documents and questions, silent reads (``sweep_documents.py``)."""
    sys.modules.setdefault("bad_input_sweep", sys.modules[__name__])
    import sweep_documents

    return sweep_documents.cases()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="Run only cases whose area or name has this.")
    ap.add_argument("--json", type=Path, default=None, help="Also write the rows here.")
    ap.add_argument("--issue32", action="store_true", help="Only issue 32's cases (181).")
    ap.add_argument("--issue45", action="store_true", help="Only issue 45's cases.")
    ap.add_argument("--issue58", action="store_true", help="Only issue 58's cases.")
    ap.add_argument("--start", type=int, default=1, help="Resume at case number N.")
    args = ap.parse_args()
    # shutil.rmtree recurses once per folder level (Python 3.11): the 1,500-deep cases need room.
    sys.setrecursionlimit(10_000)
    llm = {k: _llm_server(k) for k in ("garbage", "nochoices", "401", "500", "hang", "badcontent")}
    busy_sock = socket.socket()
    busy_sock.bind(("127.0.0.1", 0))
    busy_sock.listen()
    busy = busy_sock.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="ragsieve-sweep-base-") as b:
        base = Path(b) / "idx"
        code, err, _ = _cli(
            ["index", str(CORPUS), "--index", str(base), "--embedder", "minilm-onnx"], 300
        )
        if code != 0:
            sys.exit(f"could not build the base index: {err}")
        only = args.issue32 or args.issue45 or args.issue58
        every = (
            ([] if only else cases(llm))
            + (issue32_cases() if args.issue32 or not only else [])
            + (issue45_cases() if args.issue45 or not only else [])
            + (issue58_cases() if args.issue58 or not only else [])
        )
        all_cases = [c for c in every if args.only in c.area or args.only in c.name]
        rows = []
        print(
            "| # | area | case | expect | exit | one line | traceback | hang | harmed | s "
            "| message |"
        )
        print("|---:|---|---|---:|---:|---|---|---|---|---:|---|")
        for i, case in enumerate(all_cases, 1):
            if i < args.start:
                continue
            r = run_case(case, base, busy)
            rows.append(r)
            yn = {True: "yes", False: "no"}
            mark = "" if r["pass"] else " **FAIL**"
            msg = r["message"].replace("|", "\\|")
            print(
                f"| {i} | {r['area']} | {r['case']}{mark} | {r['expect']} | {r['exit']} | "
                f"{yn[r['one_line']]} | {yn[r['traceback']]} | {yn[r['hang']]} | "
                f"{yn[r['harmed']]} | {r['seconds']} | {msg} |",
                flush=True,
            )
    n = len(rows)
    print(
        f"\n{n} cases: {sum(r['pass'] for r in rows)} pass; "
        f"{sum(r['traceback'] for r in rows)} tracebacks, {sum(r['hang'] for r in rows)} hangs, "
        f"{sum(r['harmed'] for r in rows)} harmed, "
        f"{sum(r['exit'] != r['expect'] for r in rows)} unexpected exit codes, "
        f"{sum(not r['one_line'] for r in rows)} not one line"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
