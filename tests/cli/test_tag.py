"""The tagger from the shell: the README's own question answered by ``full``, ``explain``'s
shaded passages, ``prune`` on files, and ``train-tagger``'s one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

pytestmark = pytest.mark.integration

QUESTION = "In which year did Champollion announce the decipherment of hieroglyphs?"


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path) -> Path:
    """The issue's steps as a new user types them: the sample corpus with ``--sentences``."""
    path = tmp_path_factory.mktemp("demo") / "demo"
    p = run("index", str(corpus_dir), "--index", str(path), "--sentences")
    assert p.returncode == 0, p.stderr
    return path


def test_full_answers_1822_with_the_local_llm(demo_index: Path) -> None:
    """``full`` hands the local reader the sentence that answers, and its span is the answer.
    The 135M reader's own reply is not asserted: from exactly these two sentences it once
    replied "1992" (stop 51); reader quality is measured by ``reader_eval``, not one case."""
    p = run("ask", QUESTION, "--index", str(demo_index), "--method", "full", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["answer"].strip() and out["tokens"]["prompt"] > 0  # the LLM was asked
    assert out["trace"]["scorer"] == "tagger"
    assert any("In 1822 he announced" in c["text"] for c in out["context"])
    assert out["span"]["text"] == "1822" and out["span"]["in_context"]
    p = run("ask", QUESTION, "--index", str(demo_index), "--method", "full", "--llm", "none")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].strip() == "1822"  # --llm none: the span is the answer


def test_explain_shades_each_passage_by_keep_probability(demo_index: Path) -> None:
    p = run("explain", QUESTION, "--index", str(demo_index), "--method", "full", "--json")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    passages = rep["passages"]
    assert passages and [x["relevance"] for x in passages] == sorted(
        (x["relevance"] for x in passages), reverse=True
    )
    chosen = {s["chunk_id"] for x in passages for s in x["sentences"] if s["selected"]}
    assert chosen == set(rep["selected"])
    year = next(s for x in passages for s in x["sentences"] if "In 1822 he" in s["text"])
    assert year["selected"] and 0 < year["keep"] <= 1
    text = run("explain", QUESTION, "--index", str(demo_index), "--method", "full")
    assert text.returncode == 0, text.stderr
    line = next(x for x in text.stdout.splitlines() if "In 1822 he announced" in x)
    assert line.lstrip().startswith("*")  # kept, and shaded by its probability


def test_prune_command_on_files(tmp_path: Path, corpus_dir: Path) -> None:
    files = [corpus_dir / "rosetta-stone.md", corpus_dir / "honey-bees.md"]
    p = run("prune", QUESTION, *map(str, files), "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert rows and rows[0]["passage"].endswith("rosetta-stone.md")
    assert any("1822" in r["text"] for r in rows)
    assert all(0 <= r["prob"] <= 1 for r in rows)
    spans = [(r["text"], r["span"]) for r in rows if "span" in r]  # on the one row holding it
    assert len(spans) == 1 and spans[0][1]["text"] == "1822", rows
    sentence, span = spans[0]
    assert sentence[span["start"] : span["end"]] == "1822" and 0 < span["score"] <= 1
    text = run("prune", QUESTION, *map(str, files))
    assert text.returncode == 0, text.stderr
    assert 'span: "1822"' in text.stdout.splitlines()[-1]  # the answer, under the kept lines
    missing = run("prune", QUESTION, str(tmp_path / "nope.txt"))
    assert_one_line_error(missing, 2, "not a file")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Champollion annon\u00e7a en 1822.".encode("latin-1"))
    assert_one_line_error(run("prune", QUESTION, str(latin1)), 2, "not valid UTF-8")
    assert latin1.read_bytes() == "Champollion annon\u00e7a en 1822.".encode("latin-1")


def test_prune_links_by_default_and_no_link_turns_it_off(tmp_path: Path) -> None:
    """A file titled by its name ("Michael_Curtiz.txt") is opened by the kept sentence that
    names it; ``--no-link`` leaves it shut."""
    (tmp_path / "Casablanca.txt").write_text(
        "Casablanca is a 1942 American romantic drama directed by Michael Curtiz. "
        "It stars Humphrey Bogart and Ingrid Bergman.\n"
    )
    (tmp_path / "Michael_Curtiz.txt").write_text(
        "Michael Curtiz was a Hungarian-American film director. He was born in Budapest in "
        "1886. He directed over 170 films.\n"
    )
    files = [str(tmp_path / "Casablanca.txt"), str(tmp_path / "Michael_Curtiz.txt")]
    q = "In which city was the director of Casablanca born?"
    linked = run("prune", q, *files, "--json")
    shut = run("prune", q, *files, "--json", "--no-link")
    assert linked.returncode == shut.returncode == 0, linked.stderr + shut.stderr
    rows, rows_shut = json.loads(linked.stdout), json.loads(shut.stdout)
    assert any(r["passage"] == files[1] and "Budapest" in r["text"] for r in rows)
    assert not any(r["passage"] == files[1] for r in rows_shut)


def test_prune_reads_pdf_html_and_docx_as_index_does(tmp_path: Path) -> None:
    """Real PDF, HTML and DOCX files (reportlab, python-docx) pruned from the command line: each
    read by index's reader (no "not valid UTF-8"), the fact kept from the file that holds it,
    a .jsonl file one passage per record; a PDF with no text layer is a one-line error."""
    from rich_docs import FACT, write_docx, write_folder, write_html, write_scanned_pdf

    folder = write_folder(tmp_path / "docs")
    files = [folder / n for n in ("harbour-report.pdf", "bread.html", "beekeeping.docx")]
    p = run("prune", "When was the dredger Albatross commissioned?", *map(str, files), "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    assert any(r["text"] == FACT and r["passage"] == str(files[0]) for r in rows), rows
    html = write_html(tmp_path / "hives.htm", "Hives", "Size", ["A hive holds 50000 bees."])
    docx = write_docx(tmp_path / "dough.docx", "Bread", [("Starter", ["Rye starter is sour."])])
    records = tmp_path / "notes.jsonl"
    records.write_text(
        json.dumps({"id": "a", "title": "Moths", "text": "Moths fly at night."})
        + "\n"
        + json.dumps({"id": "b", "title": "Storks", "text": "Storks winter in Africa."})
        + "\n",
        "utf-8",
    )
    p = run("prune", "Where do storks spend the winter?", str(html), str(docx), str(records))
    assert p.returncode == 0, p.stderr
    assert "[notes.jsonl#b] Storks winter in Africa." in p.stdout, p.stdout
    p = run("prune", "How many bees does a hive hold?", str(docx), str(html), "--json")
    assert p.returncode == 0, p.stderr
    assert [r["passage"] for r in json.loads(p.stdout)][:1] == [str(html)], p.stdout
    p = run("prune", "Which starter is sour?", str(html), str(docx))
    assert p.returncode == 0, p.stderr
    assert "[dough.docx] Rye starter is sour." in p.stdout, p.stdout
    scan = write_scanned_pdf(tmp_path / "scan.pdf")
    assert_one_line_error(run("prune", QUESTION, str(scan)), 2, "no text layer")


def test_train_tagger_bad_options_are_one_line(tmp_path: Path) -> None:
    from ragsieve.tag.fit.data import SOURCES

    p = run("train-tagger", "--out", str(tmp_path / "t"), "--leave-out", "qed,squad")
    assert_one_line_error(p, 2, "unknown source 'squad'")  # SQuAD dev is no longer read
    assert "squad_train" in p.stderr
    helped = run("train-tagger", "--help")
    assert helped.returncode == 0
    for option in ("--seed", "--device", "--time-limit", "--threads", "--data"):
        assert option in helped.stdout
    listed = " ".join(helped.stdout.replace("│", " ").split())
    assert all(name in listed for name in SOURCES)
    p = run("train-tagger", "--out", str(tmp_path / "t"), "--data", str(tmp_path / "none"))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()  # nothing written before the inputs are checked
    p = run("train-tagger", "--out", str(tmp_path / "t"), "--teacher", "cross-encoder")
    assert_one_line_error(p, 2, "teacher must be reranker or none")
    assert not (tmp_path / "t").exists()
    assert "--teacher" in helped.stdout


def test_a_bad_passage_threshold_is_one_line_and_harms_nothing(demo_index: Path) -> None:
    manifest = demo_index / "ragsieve.json"
    before = manifest.read_bytes()
    for spec in ("tagger[pth=1.5]", "full[passage_threshold=-0.1]", "tagger[pth=x]"):
        p = run("search", QUESTION, "--index", str(demo_index), "--method", spec)
        assert_one_line_error(p, 2, "passage_threshold")
    p = run("prune", QUESTION, str(demo_index.parent / "missing.md"), "--passage-threshold", "2")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert manifest.read_bytes() == before
    assert (
        run("search", QUESTION, "--index", str(demo_index), "--method", "tagger[pth=0]").returncode
        == 0
    )


def test_a_bad_stack_option_is_one_line_and_harms_nothing(demo_index: Path) -> None:
    manifest = demo_index / "ragsieve.json"
    before = manifest.read_bytes()
    for spec, name in (
        ("tagger[stack=maybe]", "stack"),
        ("full[stack=2]", "stack"),
        ("tagger[open=yes]", "open_point"),
        ("full[open_point=1]", "open_point"),
    ):
        p = run("search", QUESTION, "--index", str(demo_index), "--method", spec)
        assert_one_line_error(p, 2, name)
    assert manifest.read_bytes() == before
    p = run("search", QUESTION, "--index", str(demo_index), "--method", "tagger[stack=false]")
    assert p.returncode == 0, p.stderr
    # the open point keeps at least what the default keeps
    default = run("search", QUESTION, "--index", str(demo_index), "--method", "tagger", "--json")
    wide = run(
        "search", QUESTION, "--index", str(demo_index), "--method", "tagger[open=true]", "--json"
    )
    assert default.returncode == 0 and wide.returncode == 0, wide.stderr
    assert len(json.loads(wide.stdout)["results"]) >= len(json.loads(default.stdout)["results"])
