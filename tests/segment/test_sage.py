"""SAGE semantic segmentation with the shipped head and the packaged MiniLM (int8 ONNX)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragsieve.errors import ConfigError
from ragsieve.segment import get_segmenter, sentences_of
from ragsieve.segment.model import FEATURE_SETS, SegmenterHead, load_head, pair_features
from ragsieve.segment.pairs import build_pairs, detokenize_wikitext, doc_pairs
from ragsieve.segment.sage import SageSegmenter
from ragsieve.text import count_tokens
from ragsieve.types import Document

pytestmark = pytest.mark.integration

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "corpus"


def _body(name: str) -> str:
    """The prose paragraphs of a sample document (headings dropped), joined by blank lines."""
    text = (CORPUS / name).read_text(encoding="utf-8")
    return "\n\n".join(p for p in re.split(r"\n\s*\n", text) if not p.startswith("#"))


# --------------------------------------------------------------------------- pairs


def test_doc_pairs_label_inside_and_across_paragraphs() -> None:
    doc = [["A one.", "A two.", "A three."], ["B one."], ["C one.", "C two."]]
    assert list(doc_pairs(doc)) == [
        ("A one.", "A two.", 1),
        ("A two.", "A three.", 1),
        ("A three.", "B one.", 0),
        ("B one.", "C one.", 0),
        ("C one.", "C two.", 1),
    ]
    ps = build_pairs({"x": [doc, [["A one.", "Z."]]]})
    assert len(ps.sentences) == len(set(ps.sentences)) == 7  # each sentence stored once
    assert ps.labels == [1, 1, 0, 0, 1, 1]


def test_wikitext_detokenisation() -> None:
    raw = ' The 2 @,@ 000 @-@ seat arena , built in 1998 ( renovated ) , is " big " . '
    assert detokenize_wikitext(raw) == 'The 2,000-seat arena, built in 1998 (renovated), is "big".'


# --------------------------------------------------------------------------- model


def test_shipped_head_uses_all_four_features() -> None:
    head = load_head()
    assert head.features == FEATURE_SETS["all"]
    assert head.weights[0].shape[0] == 4 * 384
    x = np.random.default_rng(0).normal(size=(5, 384)).astype(np.float32)
    s = head.score(x, x[::-1])
    assert s.shape == (5,) and np.all((s >= 0) & (s <= 1))
    # The features are exactly [x1, x2, x1 - x2, x1 * x2].
    f = pair_features(x[:2], x[2:4], head.features)
    np.testing.assert_allclose(f[:, 768:1152], x[:2] - x[2:4])
    np.testing.assert_allclose(f[:, 1152:], x[:2] * x[2:4])


def test_head_round_trips_through_save_and_load(tmp_path: Path) -> None:
    head = load_head()
    head.save(tmp_path / "copy")
    again = SegmenterHead.load(tmp_path / "copy")
    x = np.random.default_rng(1).normal(size=(3, 384)).astype(np.float32)
    np.testing.assert_allclose(again.score(x, x + 0.1), head.score(x, x + 0.1), rtol=1e-6)


# --------------------------------------------------------------------------- segmenter


@pytest.fixture(scope="module")
def sage() -> SageSegmenter:
    return SageSegmenter()


def test_topic_shift_scores_low_and_is_cut_below_ss(sage: SageSegmenter) -> None:
    """Two unrelated documents glued together: the pair across the seam scores far below the
    pairs inside each topic, and a threshold above it cuts there."""
    bees, voyager = _body("honey-bees.md"), _body("voyager.md")
    doc = Document("glued", bees + "\n\n" + voyager, "glued")
    sents = sentences_of(doc)
    (scores,) = sage.pair_scores([sents])
    assert scores.shape == (len(sents) - 1,)
    k = next(i for i, s in enumerate(sents) if s.start >= len(bees)) - 1
    assert scores[k] < float(np.median(scores)) - 0.25
    ss = float(scores[k]) + 0.01
    (chunks,) = SageSegmenter(ss=ss, min_tokens=0).segment([doc])
    assert any(c.sent_start == k + 1 for c in chunks)  # a chunk starts right after the seam
    # every cut inside a coarse chunk is a pair scored below ss
    coarse_ends = {c.sent_end for c in get_segmenter("fixed", chunk_tokens=400).segment([doc])[0]}
    for c in chunks[1:]:
        assert c.sent_start in coarse_ends or scores[c.sent_start - 1] < ss


def test_chunks_tile_the_document_and_respect_sizes(sage: SageSegmenter) -> None:
    docs = [Document(p.stem, p.read_text(encoding="utf-8"), p.stem) for p in CORPUS.glob("*.md")]
    for doc, chunks in zip(docs, sage.segment(docs), strict=True):
        assert chunks, doc.id
        assert [c.index for c in chunks] == list(range(len(chunks)))
        for a, b in itertools.pairwise(chunks):
            assert a.sent_end == b.sent_start  # contiguous sentence ranges, nothing lost
            assert doc.text[a.end : b.start].strip() == ""
        assert chunks[0].sent_start == 0 and chunks[-1].sent_end == len(sentences_of(doc))
        for c in chunks:
            assert c.text == doc.text[c.start : c.end]
            assert c.n_tokens == count_tokens(c.text) <= sage.config.l
        if len(chunks) > 1:
            assert all(c.n_tokens >= sage.config.min_tokens for c in chunks)


def test_max_and_min_sizes(sage: SageSegmenter) -> None:
    text = " ".join(f"Sentence number {i} says something about pears." for i in range(80))
    doc = Document("long", text, "long")
    (small,) = SageSegmenter(chunk_tokens=60).segment([doc])
    assert all(c.n_tokens <= 60 for c in small) and len(small) >= 10
    (merged,) = SageSegmenter(ss=1.0, min_tokens=30).segment([doc])  # ss=1: cut every pair
    assert all(c.n_tokens >= 30 for c in merged)
    (unmerged,) = SageSegmenter(ss=1.0, min_tokens=0).segment([doc])
    assert len(unmerged) == 80  # one sentence per chunk when nothing merges


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="ss must be"):
        SageSegmenter(ss=1.5)
    with pytest.raises(ConfigError, match="min_tokens"):
        SageSegmenter(chunk_tokens=20, min_tokens=20)
    with pytest.raises(ConfigError, match="segmentation model missing"):
        SageSegmenter(model_dir="/nonexistent/segmenter")
    assert isinstance(get_segmenter("sage", chunk_tokens=400), SageSegmenter)


def test_segment_cli_json_and_errors(tmp_path: Path) -> None:
    f = tmp_path / "doc.md"
    f.write_text(_body("honey-bees.md") + "\n\n" + _body("lighthouses.md"), encoding="utf-8")
    run = [sys.executable, "-m", "ragsieve.cli", "segment", str(f), "--json"]
    out = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    text = f.read_text(encoding="utf-8")
    assert len(rows) >= 2
    for r in rows:
        assert {"text", "start", "end"} <= set(r) and text[r["start"] : r["end"]] == r["text"]
    fixed = subprocess.run([*run, "--segmenter", "fixed"], capture_output=True, text=True)
    assert fixed.returncode == 0 and json.loads(fixed.stdout)
    bad = subprocess.run(
        [sys.executable, "-m", "ragsieve.cli", "segment", str(tmp_path / "missing.md")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error:")
    assert len(bad.stderr.strip().splitlines()) == 1
