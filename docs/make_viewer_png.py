"""Regenerate docs/viewer.png: the evidence viewer answering a real question.

Indexes examples/corpus (with the sentence table, so every method in the picker works), starts
``ragsieve serve`` on a free port with the default local LLM, asks the question in the page
with Debian's Chromium (``make browser``) driven by Playwright, and saves a 1400x1000
screenshot. Nothing is downloaded.

    .venv/bin/python docs/make_viewer_png.py [--method full] [--question "..."] [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from server_helpers import CHROMIUM_ARGS  # noqa: E402  (the browser tests' flags)

CHROMIUM = "/usr/bin/chromium"
QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


def ragsieve(*args: str) -> list[str]:
    return [sys.executable, "-m", "ragsieve.cli", *args]


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"ragsieve serve exited with {proc.returncode}")
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    raise SystemExit(f"ragsieve serve not healthy after {timeout:.0f}s")


def screenshot(url: str, question: str, method: str, out: Path) -> str:
    """Ask ``question`` with ``method`` in the page at ``url``; save the view; return the
    answer text."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(300_000)
        page.goto(url + "/")
        page.fill("#question", question)
        page.select_option("#method", method)
        page.click("#ask")
        page.wait_for_function("() => document.body.dataset.state !== 'busy'")
        if page.evaluate("document.body.dataset.state") != "done":
            raise SystemExit(f"the page shows an error: {page.text_content('#status')}")
        answer = page.text_content("#answer-text") or ""
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out))
        browser.close()
    return answer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--question", default=QUESTION)
    ap.add_argument("--method", default="full", help="a method in the page's picker")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "viewer.png")
    args = ap.parse_args()
    if not os.access(CHROMIUM, os.X_OK):
        raise SystemExit(f"{CHROMIUM} not found: run `make browser`")
    from ragsieve.llm.server import free_port

    with tempfile.TemporaryDirectory(prefix="ragsieve-viewer-") as tmp:
        index = Path(tmp) / "index"
        cmd = ragsieve("index", str(REPO / "examples" / "corpus"), "--index", str(index))
        subprocess.run([*cmd, "--sentences"], check=True)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        serve = ragsieve("serve", "--index", str(index), "--port", str(port), "--no-access-log")
        proc = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_healthy(url, proc)
            answer = screenshot(url, args.question, args.method, args.out)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"{args.out}: {args.method} answered {answer!r}")


if __name__ == "__main__":
    main()
