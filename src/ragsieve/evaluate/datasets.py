"""Built-in benchmark loaders: each file in ``shared/data`` mapped onto the common schema.

=================  ========================================================================
name               what it becomes
=================  ========================================================================
``squad``          SQuAD v1.1 dev: each of the 48 articles is one long document (paragraphs
                   joined by blank lines); 10,570 questions; evidence = the sentence(s) that
                   contain the first (question writer's) answer span
``hotpotqa``       IRCoT's 500 HotpotQA dev questions, each with its own pool of (usually) 10
                   paragraphs; evidence = the 2 supporting paragraphs
``hotpotqa-sent``  AMOR's 100 HotpotQA dev questions, 10 paragraphs each; evidence = the
                   supporting sentences (``supporting_facts``)
``qasper``         official QASPER v0.3 test: 416 papers (one document each: title, abstract,
                   ``##`` section headers, paragraphs), 1,451 questions; evidence = the union of
                   the annotators' textual evidence paragraphs (figure/table evidence and bare
                   section titles dropped; 141 questions have none)
``quality``        L-Eval's QuALITY: 15 stories, 202 multiple-choice questions; no evidence
``msmarco``        6,980 MS MARCO dev-small queries; shared corpus = all their positive
                   passages; evidence = the query's positive passage; no answers
``techdocs``       technical manuals (Debian packages' PDF, HTML and Markdown docs) as one
                   shared corpus, read by ragsieve's own readers; 148 dev questions written
                   against pages and sections; evidence = gold sentences; two-part, list and
                   how-to questions carry ``meta.parts``, unanswerable ones no answers and no
                   evidence (``techdocs-test``: the 80 test questions). Built by
                   ``benchmarks/techdocs/fetch.py``, not shared/data
=================  ========================================================================

Datasets with one document per question (squad, qasper, quality) are the long-document setting
(retrieve inside the right document); :meth:`EvalDataset.pooled` gives the open-corpus setting.
The data folder is found from ``RAGSIEVE_DATA``, else ``shared/data`` next to the repository
(searched upwards from the working directory and from this package).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsieve.data import find_data_dir, find_upwards, fix_mojibake
from ragsieve.errors import ConfigError, InputError
from ragsieve.evaluate.schema import EvalDataset, EvalDocument, EvalQuestion, load_generic


def _file(data_dir: Path, rel: str) -> Path:
    path = data_dir / rel
    if not path.is_file():
        raise InputError(f"{path} not found: the data folder {data_dir} lacks {rel}")
    return path


def _read_json(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}: invalid JSON ({e.msg})") from e


def _read_jsonl(path: Path, limit: int | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a JSONL file; stops early at ``limit`` rows so a small run reads little."""
    with path.open(encoding="utf-8") as fh:
        count = 0
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            if limit is not None and count >= limit:
                return
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{path}:{n}: invalid JSON ({e.msg})") from e
            count += 1


# --------------------------------------------------------------------------- helpers


class _DocIds:
    """Stable document ids from titles across a dataset.

    HotpotQA pools reuse Wikipedia paragraphs across questions under their title; using the title
    as id lets :meth:`EvalDataset.pooled` de-duplicate them. A title seen with a different text
    gets ``title#<hash>`` so that two different paragraphs never share an id.
    """

    def __init__(self) -> None:
        self._text_of: dict[str, str] = {}

    def __call__(self, title: str, text: str) -> str:
        prev = self._text_of.setdefault(title, text)
        if prev == text:
            return title
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
        return f"{title}#{digest}"


def _dedup(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _join_sentences(sentences: list[str]) -> str:
    """HotpotQA stores a paragraph as sentences that mostly carry their leading space; join them
    back into the original text, adding a space only where one is missing."""
    out = ""
    for s in sentences:
        if out and not out[-1].isspace() and s and not s[0].isspace():
            out += " "
        out += s
    return out.strip()


# Sentence bounds for SQuAD's evidence. A fixed rule (not ragsieve.text.split_sentences, which is
# being tuned) so that the gold evidence does not change when the system's splitter does; a
# boundary is sentence punctuation + whitespace + a capital, digit or opening quote, except after
# an initial ("C. J. Anderson"), a dotted abbreviation ("U.S.") or a common title/abbreviation.
_BOUNDARY = re.compile(r"[.!?]+[\"'”’)\]]*\s+(?=[\"'“‘(\[]*[A-Z0-9])")
# fmt: off
_ABBREVIATIONS = frozenset((
    "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "no", "nos", "gen", "col",
    "lt", "sgt", "capt", "cmdr", "adm", "rev", "inc", "co", "corp", "ltd", "mt", "ft", "sen",
    "rep", "gov", "pres", "fig", "eq", "approx", "dept", "univ", "est", "ca", "op", "vol", "ed",
    "eds", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
))
# fmt: on
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        if text[m.start()] == ".":
            w = _WORD_BEFORE.search(text, 0, m.start())
            if w:
                word = w.group(1)
                if (
                    (len(word) == 1 and word.isupper())
                    or "." in word
                    or word.lower() in _ABBREVIATIONS
                ):
                    continue
        end = m.end()
        spans.append((start, end))
        start = end
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _sentences_covering(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> list[str]:
    return [text[s:e].strip() for s, e in spans if s < max(end, start + 1) and e > start]


# --------------------------------------------------------------------------- loaders


def _load_squad(data_dir: Path, limit: int | None) -> EvalDataset:
    data = _read_json(_file(data_dir, "squad/dev-v1.1.json"))
    questions: list[EvalQuestion] = []
    for article in data["data"]:
        raw_title = article["title"]
        title = raw_title.replace("_", " ")
        paragraphs = article["paragraphs"]
        doc = EvalDocument(
            id=raw_title, title=title, text="\n\n".join(p["context"].strip() for p in paragraphs)
        )
        for pi, para in enumerate(paragraphs):
            context = para["context"]
            spans: list[tuple[int, int]] | None = None
            for qa in para["qas"]:
                if limit is not None and len(questions) >= limit:
                    return EvalDataset("squad", tuple(questions))
                first = qa["answers"][0]
                if spans is None:
                    spans = _sentence_spans(context)
                start = first["answer_start"]
                evidence = _sentences_covering(context, start, start + len(first["text"]), spans)
                questions.append(
                    EvalQuestion(
                        id=qa["id"],
                        question=qa["question"].strip(),
                        answers=_dedup([a["text"] for a in qa["answers"]]),
                        evidence=tuple(evidence),
                        documents=(doc,),
                        evidence_level="sentence",
                        meta={"paragraph": pi},
                    )
                )
    return EvalDataset("squad", tuple(questions))


def _hotpot_answers(obj: dict[str, Any]) -> tuple[str, ...]:
    out: list[str] = []
    for a in obj.get("answers_objects", []):
        out.extend(s for s in a.get("spans", []) if s)
        if not a.get("spans"):
            if a.get("number"):
                out.append(str(a["number"]))
            date = a.get("date") or {}
            parts = [date.get(k, "") for k in ("day", "month", "year")]
            if any(parts):
                out.append(" ".join(p for p in parts if p))
    return _dedup(out)


def _load_hotpotqa(data_dir: Path, limit: int | None) -> EvalDataset:
    path = _file(data_dir, "hotpotqa/hotpot_dev_subsampled500_ircot.jsonl")
    ids = _DocIds()
    questions: list[EvalQuestion] = []
    for _, obj in _read_jsonl(path, limit):
        docs: list[EvalDocument] = []
        evidence: list[str] = []
        for c in obj["contexts"]:
            text = c["paragraph_text"].strip()
            docs.append(EvalDocument(id=ids(c["title"], text), title=c["title"], text=text))
            if c.get("is_supporting"):
                evidence.append(text)
        questions.append(
            EvalQuestion(
                id=obj["question_id"],
                question=obj["question_text"].strip(),
                answers=_hotpot_answers(obj),
                evidence=tuple(evidence),
                documents=tuple(docs),
                evidence_level="paragraph",
            )
        )
    return EvalDataset("hotpotqa", tuple(questions))


def _load_hotpotqa_sent(data_dir: Path, limit: int | None) -> EvalDataset:
    path = _file(data_dir, "hotpotqa/hotpot_dev_sample100_amor_withretrieval.jsonl")
    return hotpot_sentence_dataset(path, "hotpotqa-sent", _read_jsonl(path, limit))


def hotpot_sentence_dataset(
    path: Path, name: str, records: Iterable[tuple[int, dict[str, Any]]]
) -> EvalDataset:
    """HotpotQA records in the distractor format (``context`` as ``[title, sentences]``,
    ``supporting_facts`` as ``[title, sentence index or indexes]``) with sentence-level gold:
    the AMOR evaluation file, or the ``train_extra`` train questions used as a development
    split.
    ``records`` are ``(line, object)`` pairs; ``path`` names the file in errors."""
    ids = _DocIds()
    questions: list[EvalQuestion] = []
    for line, obj in records:
        sentences_of: dict[str, list[str]] = {}
        docs: list[EvalDocument] = []
        for title, sentences in obj["context"]:
            sentences_of[title] = sentences
            text = _join_sentences(sentences)
            docs.append(EvalDocument(id=ids(title, text), title=title, text=text))
        evidence: list[str] = []
        for fact in obj["supporting_facts"]:
            # The AMOR file lists a title's sentence indexes; HotpotQA's own files give one.
            title = fact[0]
            sent_ids = fact[1] if isinstance(fact[1], list) else [fact[1]]
            sentences = sentences_of.get(title)
            if sentences is None:
                raise InputError(f"{path}:{line}: supporting fact for unknown title {title!r}")
            evidence.extend(sentences[i].strip() for i in sent_ids if 0 <= i < len(sentences))
        questions.append(
            EvalQuestion(
                id=obj["_id"],
                question=obj["question"].strip(),
                answers=(obj["answer"],),
                evidence=_dedup([e for e in evidence if e]),
                documents=tuple(docs),
                evidence_level="sentence",
                meta={"type": obj.get("type", ""), "level": obj.get("level", "")},
            )
        )
    return EvalDataset(name, tuple(questions))


def _qasper_answer(answer: dict[str, Any]) -> tuple[str, str]:
    """(answer string, type) exactly as QASPER's official evaluator builds its references."""
    if answer.get("unanswerable"):
        return "Unanswerable", "none"
    if answer.get("extractive_spans"):
        return ", ".join(answer["extractive_spans"]), "extractive"
    if answer.get("free_form_answer"):
        return answer["free_form_answer"], "abstractive"
    if answer.get("yes_no"):
        return "Yes", "boolean"
    if answer.get("yes_no") is not None:
        return "No", "boolean"
    return "", "none"


def _load_qasper(data_dir: Path, limit: int | None) -> EvalDataset:
    data = _read_json(_file(data_dir, "qasper/qasper-test-v0.3.json"))
    questions: list[EvalQuestion] = []
    for paper_id, paper in data.items():
        title = paper["title"].strip()
        abstract = (paper.get("abstract") or "").strip()
        parts = [f"# {title}"]
        if abstract:
            parts += ["## Abstract", abstract]
        paragraphs: set[str] = {abstract} if abstract else set()
        sections: set[str] = set()
        for section in paper["full_text"]:
            name = (section.get("section_name") or "").strip()
            if name:
                parts.append(f"## {name}")
                sections.add(name)
            for para in section["paragraphs"]:
                para = para.strip()
                if para:
                    parts.append(para)
                    paragraphs.add(para)
        doc = EvalDocument(id=paper_id, title=title, text="\n\n".join(parts))
        for qa in paper["qas"]:
            if limit is not None and len(questions) >= limit:
                return EvalDataset("qasper", tuple(questions))
            answers: list[str] = []
            types: list[str] = []
            spans: list[str] = []
            evidence: list[str] = []
            for ann in qa["answers"]:
                a = ann["answer"]
                text, kind = _qasper_answer(a)
                if text:
                    answers.append(text)
                    types.append(kind)
                spans.extend(s.strip() for s in a.get("extractive_spans") or [] if s.strip())
                for ev in a.get("evidence") or []:
                    ev = ev.strip()
                    # Figure/table evidence has no text in the document; a bare section title
                    # is a pointer, not information a reader could use.
                    if (
                        not ev
                        or "FLOAT SELECTED" in ev
                        or (ev in sections and ev not in paragraphs)
                    ):
                        continue
                    evidence.append(ev)
            ev_tuple = _dedup(evidence)
            questions.append(
                EvalQuestion(
                    id=qa["question_id"],
                    question=qa["question"].strip(),
                    answers=_dedup(answers),
                    evidence=ev_tuple,
                    documents=(doc,),
                    evidence_level="paragraph" if ev_tuple else "none",
                    meta={
                        "paper_id": paper_id,
                        "answer_types": _dedup(types),
                        "answer_spans": _dedup(spans),
                    },
                )
            )
    return EvalDataset("qasper", tuple(questions))


_OPTION = re.compile(r"\n\s*\(([A-Z])\)[ \t]*")
_CHOSEN = re.compile(r"^\s*\(([A-Z])\)\s*")


def _parse_mc(instruction: str) -> tuple[str, tuple[str, ...]]:
    parts = _OPTION.split(instruction)
    question = parts[0].strip()
    letters = parts[1::2]
    texts = [t.strip() for t in parts[2::2]]
    if not letters or letters != [chr(65 + i) for i in range(len(letters))]:
        raise InputError(f"cannot parse multiple-choice options of: {question[:80]!r}")
    return question, tuple(texts)


def _unwrap(text: str) -> str:
    """QuALITY stories are hard-wrapped with indented lines; keep blank-line paragraph breaks and
    join the wrapped lines, so that a paragraph splitter sees paragraphs, not 70-column lines."""
    paras = (" ".join(p.split()) for p in re.split(r"\n\s*\n", text))
    # One story starts with a Project Gutenberg "<!-- $Id: ... -->" header: markup, not text.
    return "\n\n".join(p for p in paras if p and not (p.startswith("<!--") and p.endswith("-->")))


def _story_title(text: str) -> str:
    """The first paragraph when it is short enough to be a title; some stories (Slate articles)
    open straight with body text, and then there is no title."""
    first = text.split("\n\n", 1)[0]
    return first if len(first) <= 80 else ""


def _load_quality(data_dir: Path, limit: int | None) -> EvalDataset:
    path = _file(data_dir, "quality/leval_quality.jsonl")
    questions: list[EvalQuestion] = []
    for story, (line, obj) in enumerate(_read_jsonl(path)):
        text = _unwrap(obj["input"])
        title = _story_title(text)
        doc = EvalDocument(id=f"quality-{story}", title=title, text=text)
        for qi, (instruction, output) in enumerate(
            zip(obj["instructions"], obj["outputs"], strict=True)
        ):
            if limit is not None and len(questions) >= limit:
                return EvalDataset("quality", tuple(questions))
            question, options = _parse_mc(instruction)
            m = _CHOSEN.match(output)
            if not m or not 0 <= ord(m.group(1)) - 65 < len(options):
                raise InputError(f"{path}:{line}: cannot parse the answer {output[:40]!r}")
            label = ord(m.group(1)) - 65
            questions.append(
                EvalQuestion(
                    id=f"quality-{story}-{qi}",
                    question=question,
                    answers=(options[label],),
                    documents=(doc,),
                    options=options,
                    label=label,
                    meta={"story": story},
                )
            )
    return EvalDataset("quality", tuple(questions))


def _load_msmarco(data_dir: Path, limit: int | None) -> EvalDataset:
    rows = _read_json(_file(data_dir, "msmarco/msmarco_dev_small_eng_query_positive.json"))
    corpus: dict[str, EvalDocument] = {}
    questions: list[EvalQuestion] = []
    for row in rows:
        evidence: list[str] = []
        for passage in row["positive"]:
            text = fix_mojibake(passage).strip()
            if text not in corpus:
                corpus[text] = EvalDocument(id=f"msmarco-p{len(corpus)}", title="", text=text)
            evidence.append(text)
        if limit is None or len(questions) < limit:
            questions.append(
                EvalQuestion(
                    id=str(row["id"]),
                    question=row["query"].strip(),
                    evidence=_dedup(evidence),
                    evidence_level="paragraph",
                )
            )
    # The corpus stays whole under ``limit``: every positive is a distractor for the others.
    return EvalDataset("msmarco", tuple(questions), corpus=tuple(corpus.values()))


# --------------------------------------------------------------------------- registry


#: Where ``benchmarks/techdocs/fetch.py`` writes the technical-documents set (under the
#: repository); ``RAGSIEVE_TECHDOCS`` names another folder holding the same files.
TECHDOCS_CACHE = Path("benchmarks") / "techdocs" / "cache"


def techdocs_dir() -> Path:
    """The folder with the technical-documents set's ``corpus.jsonl``, ``dev.jsonl`` and
    ``test.jsonl``: ``RAGSIEVE_TECHDOCS``, else ``benchmarks/techdocs/cache`` searched upwards
    from the working directory and from this package."""
    import os

    env = os.environ.get("RAGSIEVE_TECHDOCS")
    if env:
        return Path(env)
    found = find_upwards(TECHDOCS_CACHE, "corpus.jsonl")
    if found is not None:
        return found
    raise InputError(
        "techdocs: no benchmarks/techdocs/cache/corpus.jsonl found: build it with "
        "`python benchmarks/techdocs/fetch.py` (or set RAGSIEVE_TECHDOCS)"
    )


def _techdocs(split: str) -> Callable[[Path, int | None], EvalDataset]:
    """A loader for one split of the technical-documents set (the data folder is unused)."""

    def load(_data_dir: Path, limit: int | None) -> EvalDataset:
        folder = techdocs_dir()
        questions = _file(folder, f"{split}.jsonl")
        return load_generic(
            questions, _file(folder, "corpus.jsonl"), name=f"techdocs-{split}", limit=limit
        )

    return load


@dataclass(frozen=True)
class DatasetSpec:
    """A built-in dataset: its loader, the files it reads (relative to the data folder) and a
    one-line description for ``--help`` and reports."""

    name: str
    files: tuple[str, ...]
    description: str
    loader: Callable[[Path, int | None], EvalDataset]


DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec(
            "squad",
            ("squad/dev-v1.1.json",),
            "SQuAD v1.1 dev: 48 articles as long documents, 10,570 questions, sentence evidence",
            _load_squad,
        ),
        DatasetSpec(
            "hotpotqa",
            ("hotpotqa/hotpot_dev_subsampled500_ircot.jsonl",),
            "HotpotQA dev (IRCoT 500): 10-paragraph pools, paragraph evidence",
            _load_hotpotqa,
        ),
        DatasetSpec(
            "hotpotqa-sent",
            ("hotpotqa/hotpot_dev_sample100_amor_withretrieval.jsonl",),
            "HotpotQA dev (AMOR 100): 10-paragraph pools, sentence evidence",
            _load_hotpotqa_sent,
        ),
        DatasetSpec(
            "qasper",
            ("qasper/qasper-test-v0.3.json",),
            "QASPER test: 416 papers, 1,451 questions, paragraph evidence",
            _load_qasper,
        ),
        DatasetSpec(
            "quality",
            ("quality/leval_quality.jsonl",),
            "QuALITY (L-Eval): 15 stories, 202 multiple-choice questions",
            _load_quality,
        ),
        DatasetSpec(
            "msmarco",
            ("msmarco/msmarco_dev_small_eng_query_positive.json",),
            "MS MARCO dev-small: 6,980 queries, corpus of their positive passages",
            _load_msmarco,
        ),
        DatasetSpec(
            "techdocs",
            (),
            "Technical manuals (Debian PDF/HTML/Markdown docs): dev split, sentence evidence",
            _techdocs("dev"),
        ),
        DatasetSpec(
            "techdocs-test",
            (),
            "Technical manuals (Debian PDF/HTML/Markdown docs): test split, sentence evidence",
            _techdocs("test"),
        ),
    )
}


def dataset_names() -> list[str]:
    """The built-in dataset names."""
    return list(DATASETS)


def load_dataset(
    name: str, data_dir: str | Path | None = None, limit: int | None = None
) -> EvalDataset:
    """Load a built-in dataset by name (see :data:`DATASETS`), or a generic questions JSONL file
    when ``name`` is the path of an existing file.

    ``limit`` keeps the first N questions in file order (deterministic), reading no further than
    needed where the format allows. Unknown names raise :class:`ConfigError`; a missing data folder
    or file raises :class:`InputError`.
    """
    if limit is not None and limit < 0:
        raise ConfigError("limit must be >= 0")
    spec = DATASETS.get(name)
    if spec is None:
        path = Path(name)
        if path.is_file():
            return load_generic(path, limit=limit)
        raise ConfigError(
            f"unknown dataset {name!r}: choose one of {', '.join(DATASETS)} "
            "or give the path of a questions JSONL file"
        )
    if not spec.files:  # built by its own script, outside the shared data folder
        return spec.loader(Path(data_dir or "."), limit)
    return spec.loader(find_data_dir(data_dir), limit)
