"""The ``sentences`` table: written with the chunks under the manifest, read back after a reopen,
rolled back when a writer dies, and absent (but harmless) in older indexes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ragsieve.errors import ConfigError
from ragsieve.index import Index, IndexConfig
from ragsieve.index.sentences import SENTENCES
from ragsieve.index.store import MANIFEST
from ragsieve.segment.base import sentences_of
from ragsieve.segment.paragraph import group_by_paragraph
from ragsieve.types import Document

pytestmark = pytest.mark.integration


def _vec(table, col: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    return np.asarray(table.column(col).to_pylist(), dtype=np.float32)


def test_sentence_rows_are_committed_and_survive_a_reopen(sentence_index_dir: Path) -> None:
    manifest = json.loads((sentence_index_dir / MANIFEST).read_text())
    assert SENTENCES in manifest["tables"]
    assert manifest["config"]["sentences"] is True
    idx = Index.open(sentence_index_dir)
    assert idx.has_sentences
    rows = idx.sentence_rows(None).to_pylist()
    assert len(rows) == manifest["n_sentences"] == idx.stats()["sentence_rows"] > 50
    for doc_id in {r["doc_id"] for r in rows}:
        doc = idx.get_document(doc_id)
        assert doc is not None
        mine = sorted((r for r in rows if r["doc_id"] == doc_id), key=lambda r: r["idx"])
        assert [r["idx"] for r in mine] == list(range(len(mine)))
        # Offsets point into the source, passages are the blank-line paragraphs (auto).
        groups = group_by_paragraph(doc, sentences_of(doc))
        want = [p for p, g in enumerate(groups) for _ in g]
        assert [r["passage"] for r in mine] == want
        for r in mine:
            assert doc.text[r["start"] : r["end"]] == r["text"]
            assert r["n_tokens"] > 0
            # Eq. 4: top-T links of the same document, strongest first, within the distance.
            assert len(r["link_idx"]) == len(r["link_w"]) <= 8
            assert r["idx"] not in r["link_idx"]
            assert all(abs(j - r["idx"]) <= 4 and 0 <= j < len(mine) for j in r["link_idx"])
            assert r["link_w"] == sorted(r["link_w"], reverse=True)
            if len(mine) > 1:
                assert r["link_idx"], r


def test_pareto_vector_is_exactly_0_8_core_plus_0_2_context(sentence_index_dir: Path) -> None:
    idx = Index.open(sentence_index_dir)
    t = idx.sentence_rows(None, vectors=["vector", "context", "pareto"])
    core, ctx, par = _vec(t, "vector"), _vec(t, "context"), _vec(t, "pareto")
    has = np.any(ctx != 0, axis=1)
    assert has.any()
    np.testing.assert_allclose(par[has], 0.8 * core[has] + 0.2 * ctx[has], atol=1e-6)
    np.testing.assert_array_equal(par[~has], core[~has])
    # The cheap ("mean") context: the re-normalised mean of the passage's other core vectors.
    docs, passages = t.column("doc_id").to_pylist(), t.column("passage").to_pylist()
    for i in np.nonzero(has)[0][:20]:
        others = [
            j
            for j in range(len(docs))
            if j != i and docs[j] == docs[i] and passages[j] == passages[i]
        ]
        mean = core[others].mean(axis=0)
        np.testing.assert_allclose(ctx[i], mean / np.linalg.norm(mean), atol=1e-5)
    for i in np.nonzero(~has)[0]:
        assert sum(docs[j] == docs[i] and passages[j] == passages[i] for j in range(len(docs))) == 1


def _reports(n: int) -> list[str]:
    """``n`` distinct sentences of about 20 word pieces (one long paragraph when joined)."""
    return [
        f"Report {i} says the sample from site {i % 7} was kept at {i % 5 + 2} degrees for "
        f"{i * 3} days, then moved."
        for i in range(n)
    ]


class _Recording:
    """The same embedder, recording the texts it is asked to embed and to read for token
    outputs (what a context form costs)."""

    def __init__(self, emb) -> None:  # type: ignore[no-untyped-def]
        self.emb, self.name, self.dim = emb, emb.name, emb.dim
        self.token_lengths, self.max_text_tokens = emb.token_lengths, emb.max_text_tokens
        self.embedded: list[str] = []
        self.read: list[str] = []

    def embed(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        self.embedded.extend(texts)
        return self.emb.embed(texts, batch_size=batch_size)

    def token_states(self, texts: list[str], *, batch_size: int = 64) -> list:  # type: ignore[type-arg]
        self.read.extend(texts)
        return self.emb.token_states(texts, batch_size=batch_size)


def _three_passages(where: Path, form: str):  # type: ignore[no-untyped-def]
    """An index of one document with passages of 3, 1 and 2 sentences, reopened: its sentence
    rows (with vectors), their texts, and the embedder that wrote them."""
    idx = Index.create(
        where, IndexConfig(sentences=True, pareto_context=form, links=2, link_distance=2)
    )
    text = (
        "Ada wrote the first program. It ran on the Analytical Engine. Babbage designed it."
        "\n\nA one-sentence paragraph has no context."
        "\n\nTwo sentences make this paragraph. Each is the other's context."
    )
    idx.add([Document(id="ada", text=text, title="Ada")])
    reopened = Index.open(where)
    assert reopened.config.pareto_context == form
    t = reopened.sentence_rows(None, vectors=["vector", "context", "pareto"])
    sents = t.column("text").to_pylist()
    assert len(sents) == 6 and t.column("passage").to_pylist() == [0, 0, 0, 1, 2, 2]
    # the build that writes the index's vectors (int8 ONNX MiniLM)
    return t, sents, reopened.embedder


def test_exact_context_embeds_the_rest_of_the_passage(tmp_path: Path) -> None:
    t, sents, emb = _three_passages(tmp_path / "ix", "exact")
    want = emb.embed([" ".join(s for j, s in enumerate(sents[:3]) if j != i) for i in range(3)])
    ctx, core, par = _vec(t, "context"), _vec(t, "vector"), _vec(t, "pareto")
    np.testing.assert_allclose(ctx[:3], want, atol=1e-5)
    np.testing.assert_allclose(par[:3], 0.8 * core[:3] + 0.2 * want, atol=1e-5)
    # ParetoRAG: Context = NULL for a one-sentence passage, and the weighted vector is h_core.
    assert not ctx[3].any()
    np.testing.assert_array_equal(par[3], core[3])
    # Two sentences: the rest of the passage is the other sentence, embedded as itself.
    np.testing.assert_allclose(ctx[4:], emb.embed([sents[5], sents[4]]), atol=1e-5)


@pytest.mark.parametrize("build", ["minilm-onnx", "minilm"])
def test_exact_context_of_a_long_paragraph_stops_where_the_model_truncates(build: str) -> None:
    """The join stops at the sentence where the model's 254 word pieces run out: the vectors
    equal those of the whole rest of the paragraph, and the sentences past the limit share one
    context text (embedded once), for both MiniLM builds."""
    from ragsieve.embed import get_embedder, truncation_of
    from ragsieve.index.sentences import context_vectors

    emb = get_embedder(build)
    assert truncation_of(emb) is not None and truncation_of(emb)[1] == 254
    sents = _reports(40)
    core = emb.embed(sents)
    rec = _Recording(emb)
    got = context_vectors(core, [0] * 40, sents, "exact", rec)  # type: ignore[arg-type]
    whole = emb.embed([" ".join(s for j, s in enumerate(sents) if j != i) for i in range(40)])
    np.testing.assert_allclose(got, whole, atol=2e-5)
    # about 20 word pieces a sentence: ~13 sentences fill the window; the rest share a text
    assert len(rec.embedded) < 20, len(rec.embedded)


def _pooled_others(emb, sents: list[str]) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Per sentence, the re-normalised mean of the token outputs of the others, from one
    reading of the joined passage (the ``late`` context's definition)."""
    text = " ".join(sents)
    starts = np.cumsum([0] + [len(s) + 1 for s in sents[:-1]])
    ((spans, hidden),) = emb.token_states([text])
    real = spans[:, 1] > spans[:, 0]
    owner = np.searchsorted(starts, spans[:, 0], side="right") - 1
    out = []
    for i in range(len(sents)):
        v = hidden[real & (owner != i)].mean(axis=0)
        out.append(v / np.linalg.norm(v))
    return np.asarray(out)


def test_late_context_pools_the_rest_of_the_passage_read_once(tmp_path: Path) -> None:
    t, sents, emb = _three_passages(tmp_path / "ix", "late")
    ctx, core, par = _vec(t, "context"), _vec(t, "vector"), _vec(t, "pareto")
    np.testing.assert_allclose(ctx[:3], _pooled_others(emb, sents[:3]), atol=1e-5)
    np.testing.assert_allclose(ctx[4:], _pooled_others(emb, sents[4:]), atol=1e-5)
    np.testing.assert_allclose(par[:3], 0.8 * core[:3] + 0.2 * ctx[:3], atol=1e-5)
    assert not ctx[3].any()  # a one-sentence passage has no context (ParetoRAG's NULL)
    np.testing.assert_array_equal(par[3], core[3])
    # Close to the paper's exact context (the rest of the passage embedded on its own), and
    # not the sentence itself.
    exact = emb.embed([" ".join(s for j, s in enumerate(sents[:3]) if j != i) for i in range(3)])
    assert (np.sum(ctx[:3] * exact, axis=1) > 0.8).all()  # measured 0.83-0.95
    assert (np.sum(ctx[:3] * exact, axis=1) > np.sum(ctx[:3] * core[:3], axis=1)).all()


@pytest.mark.parametrize("build", ["minilm-onnx", "minilm"])
def test_late_context_reads_a_long_paragraph_once_in_pieces_the_model_keeps(
    build: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A paragraph longer than the model's 254 word pieces is read in consecutive pieces that
    fit, each once: no sentence is cut off, every one gets a context, in both MiniLM builds."""
    from ragsieve.embed import get_embedder
    from ragsieve.index import sentences
    from ragsieve.index.sentences import context_vectors

    emb = get_embedder(build)
    sents = _reports(40)
    core = emb.embed(sents)
    rec = _Recording(emb)
    got = context_vectors(core, [0] * 40, sents, "late", rec)  # type: ignore[arg-type]
    assert rec.embedded == []  # the late context embeds no text of its own
    read = rec.read
    lengths = emb.token_lengths(sents)
    assert 4 <= len(read) <= 8  # about 1,000 word pieces in pieces of at most 254
    # Every sentence read once, in consecutive runs of the paragraph.
    assert all(sum(r.count(x) for r in read) == 1 for x in sents)
    assert " ".join(sorted(read, key=lambda r: int(r.split()[1]))) == " ".join(sents)
    assert all(sum(emb.token_lengths([r])) <= 254 for r in read)
    assert sum(lengths) == sum(emb.token_lengths(read))
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    exact = emb.embed([" ".join(s for j, s in enumerate(sents) if j != i) for i in range(3)])
    assert (np.sum(got[:3] * exact, axis=1) > 0.8).all()
    # Read two pieces at a time (memory bound of a large write): the same vectors.
    monkeypatch.setattr(sentences, "LATE_PIECES", 2)
    again = context_vectors(core, [0] * 40, sents, "late", emb)
    np.testing.assert_allclose(again, got, atol=1e-4)


def test_remove_deletes_the_sentences_too(sentence_index_dir: Path, tmp_path: Path) -> None:
    dst = tmp_path / "ix"
    shutil.copytree(sentence_index_dir, dst)
    idx = Index.open(dst)
    before = idx.sentence_rows(None).to_pylist()
    victim = before[0]["doc_id"]
    assert idx.remove([victim]) == [victim]
    after = Index.open(dst).sentence_rows(None).to_pylist()
    assert victim not in {r["doc_id"] for r in after}
    assert len(after) == len(before) - sum(r["doc_id"] == victim for r in before)
    assert json.loads((dst / MANIFEST).read_text())["n_sentences"] == len(after)


def test_an_index_without_the_table_still_opens_and_says_what_to_do(
    sample_index_dir: Path,
) -> None:
    idx = Index.open(sample_index_dir)
    assert not idx.has_sentences
    assert "sentences" not in json.loads((sample_index_dir / MANIFEST).read_text())["config"]
    assert idx.config == IndexConfig()
    # The table's readers say in one line what to run (the methods build sentences from the
    # chunks they are handed instead: tests/methods).
    with pytest.raises(ConfigError, match=r"ragsieve index PATHS --index .* --sentences") as e:
        idx.sentences_table  # noqa: B018
    assert "\n" not in str(e.value)


def test_bad_sentence_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="pareto context"):
        IndexConfig(sentences=True, pareto_context="median")
    with pytest.raises(ConfigError, match="alpha"):
        IndexConfig(sentences=True, alpha=1.5)
    with pytest.raises(ConfigError, match="passage"):
        IndexConfig(sentences=True, sentence_passage="page")


def _make_corpus(folder: Path, n: int) -> None:
    folder.mkdir()
    for i in range(n):
        body = " ".join(f"Item {i} fact {j} concerns topic {i * 5 + j}." for j in range(4))
        (folder / f"doc{i:03d}.txt").write_text(body, encoding="utf-8")


def test_sigkill_after_a_sentence_commit_leaves_the_previous_index(
    sentence_index_dir: Path, tmp_path: Path
) -> None:
    dst = tmp_path / "ix"
    shutil.copytree(sentence_index_dir, dst)
    before = json.loads((dst / MANIFEST).read_text())
    n_before = Index.open(dst).sentence_rows(None).num_rows
    corpus = tmp_path / "more"
    _make_corpus(corpus, 200)  # 64 documents per flush: 4 flushes, each a sentence commit
    versions = dst / "sentences.lance" / "_versions"
    start = len(list(versions.iterdir()))
    env = {**os.environ, "RAGSIEVE_WRITE_BATCH_CHUNKS": "4"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragsieve.cli", "index", str(corpus), "--index", str(dst)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:
            if len(list(versions.iterdir())) > start:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the writer finished before it could be killed"
        assert len(list(versions.iterdir())) > start
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert json.loads((dst / MANIFEST).read_text()) == before
    idx = Index.open(dst)
    assert idx.sentence_rows(None).num_rows == n_before  # the uncommitted rows are invisible
    # The next writer rolls the table back and commits cleanly.
    report = idx.add_paths([corpus / "doc000.txt"])[0]
    assert report.added and report.sentences is not None and report.sentences.n_sentences == 4
    assert Index.open(dst).sentence_rows(None).num_rows == n_before + 4
