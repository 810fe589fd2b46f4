"""A large file is announced before it is embedded: about how many chunks, at what rate, and
how long that makes; a small or unchanged file is not. The real chunker, embedder and CLI."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ragsieve.embed import index_embedder
from ragsieve.errors import ConfigError
from ragsieve.index.estimate import LARGE_FILE_ENV, large_file_chars, large_files
from ragsieve.index.tables import sha256_text
from ragsieve.segment import get_segmenter
from ragsieve.types import Document

pytestmark = pytest.mark.integration

WORDS = ["river", "stone", "tower", "light", "city", "engine", "garden", "market"]


def _text(n_words: int) -> str:
    rng = random.Random(0)
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def test_large_files_counts_chunks_with_the_index_chunker() -> None:
    big = Document("/data/big.txt", _text(6000), "big", "/data/big.txt")
    small = Document("/data/small.txt", "A small note.", "small", "/data/small.txt")
    cut = get_segmenter("fixed", chunk_tokens=200)
    (est,) = large_files([big, small], {}, cut, index_embedder("minilm"), threshold=10_000)
    assert est.file == "/data/big.txt" and est.chars == len(big.text)
    real = len(cut.segment([big])[0])
    assert abs(est.chunks - real) <= max(2, real // 20), (est.chunks, real)
    assert est.chunks_per_second > 0 and est.seconds > 0
    assert re.fullmatch(
        r"/data/big\.txt holds 0\.0 MB of text: about [\d,]+ chunks to embed at about [\d,]+ "
        r"chunks/s \(timed on 16 of them\), about .+; Ctrl-C stops it and leaves the index as "
        r"it was",
        est.line(),
    ), est.line()
    # Unchanged (the index holds the same text): nothing to embed, nothing to say.
    known = {big.id: sha256_text(big.text)}
    assert large_files([big], known, cut, index_embedder("minilm"), threshold=10_000) == []


def test_the_threshold_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LARGE_FILE_ENV, raising=False)
    assert large_file_chars() == 5_000_000
    monkeypatch.setenv(LARGE_FILE_ENV, "1234")
    assert large_file_chars() == 1234
    for bad in ("0", "-5", "many"):
        monkeypatch.setenv(LARGE_FILE_ENV, bad)
        with pytest.raises(ConfigError, match=LARGE_FILE_ENV):
            large_file_chars()


def test_index_says_up_front_how_long_a_large_file_takes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "big.txt").write_text(_text(6000))
    (docs / "small.md").write_text("# Small\n\nA small note.\n")
    env = {**os.environ, LARGE_FILE_ENV: "20000"}
    cmd = [sys.executable, "-m", "ragsieve.cli", "index", str(docs), "--index"]
    p = subprocess.run(
        [*cmd, str(tmp_path / "ix"), "--json"], capture_output=True, text=True, env=env, timeout=600
    )
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1 and f"{docs / 'big.txt'} holds" in notes[0], p.stderr
    said = int(re.search(r"about ([\d,]+) chunks", notes[0]).group(1).replace(",", ""))
    written = json.loads(p.stdout)["chunks_written"]
    assert abs(said - (written - 1)) <= max(2, written // 20), (said, written)
    # The note comes before the embedding starts.
    assert p.stderr.index("note:") < p.stderr.index("embed chunks")
