"""The common evaluation schema, and the generic JSONL format users evaluate their own data with.

Every built-in dataset loader (:mod:`ragsieve.evaluate.datasets`) and :func:`load_generic` produce
the same three frozen types, so that the runner and the metrics never need to know which benchmark
a question came from:

* :class:`EvalDocument` -- one retrievable source document;
* :class:`EvalQuestion` -- a question, its gold answers, its gold evidence (verbatim sentences or
  paragraphs, matched against retrieved text by :mod:`ragsieve.metrics`) and, optionally,
  its own document pool (HotpotQA's distractor setting) and multiple-choice options;
* :class:`EvalDataset` -- the questions plus an optional shared corpus, used by the questions that
  carry no documents of their own.

Generic questions file (JSONL, one object per line)::

    {"id": "q1", "question": "...", "answers": ["..."],
     "evidence": ["gold sentence or passage, verbatim", ...],          # optional
     "evidence_level": "sentence" | "paragraph",                       # optional
     "documents": [{"id": "d1", "title": "...", "text": "..."}, ...],  # optional
     "options": ["...", "..."], "label": 0}                            # optional, multiple choice

Generic corpus file (JSONL): ``{"id", "title", "text"}`` per line; used when questions carry no
``documents``. Validation is strict because a silently skipped field (``"answer"`` instead of
``"answers"``) would make every answer metric read zero: each problem is one
:class:`~ragsieve.errors.InputError` line naming the file, the line number and what is wrong.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ragsieve.checks import invisible
from ragsieve.errors import InputError
from ragsieve.jsonl import read_jsonl

EvidenceLevel = Literal["sentence", "paragraph", "none"]
EVIDENCE_LEVELS: tuple[str, ...] = ("sentence", "paragraph", "none")


@dataclass(frozen=True)
class EvalDocument:
    """A source document of an evaluation dataset. ``id`` is unique within a dataset's corpus and
    within one question's pool; :meth:`EvalDataset.pooled` relies on that to de-duplicate."""

    id: str
    title: str
    text: str


@dataclass(frozen=True)
class EvalQuestion:
    """One evaluation question.

    ``answers`` are the gold answer strings (EM/F1/ROUGE/BLEU take the best over them).
    ``evidence`` are verbatim gold sentences or paragraphs (``evidence_level`` says which); empty
    when the dataset has none, in which case evidence metrics are not computed for it.
    ``documents`` is the question's own pool (empty: use the dataset's corpus). For multiple choice,
    ``options`` holds the choices and ``label`` the index of the correct one. ``meta`` carries
    dataset-specific extras (e.g. QASPER's individual extractive spans) and is not compared.
    """

    id: str
    question: str
    answers: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    documents: tuple[EvalDocument, ...] = ()
    options: tuple[str, ...] = ()
    label: int | None = None
    evidence_level: EvidenceLevel = "none"
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        # Accept lists from callers but store tuples, so that the frozen value is really immutable.
        for name in ("answers", "evidence", "documents", "options"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if self.evidence_level not in EVIDENCE_LEVELS:
            raise ValueError(f"evidence_level must be one of {EVIDENCE_LEVELS}")
        if self.options and (self.label is None or not 0 <= self.label < len(self.options)):
            raise ValueError(f"question {self.id}: label must index options")

    @property
    def is_multiple_choice(self) -> bool:
        return bool(self.options)

    @property
    def answer_targets(self) -> tuple[str, ...]:
        """The strings :func:`~ragsieve.metrics.answer_recall` looks for in a context.

        For multiple choice, the correct option's text; where a loader recorded extractive answer
        spans (QASPER joins several spans into one answer string, which never occurs verbatim),
        those spans; otherwise the gold answers.
        """
        if self.options and self.label is not None:
            return (self.options[self.label],)
        spans = self.meta.get("answer_spans")
        if spans is not None:
            return tuple(spans)
        return self.answers


@dataclass(frozen=True)
class EvalDataset:
    """Questions plus an optional shared corpus.

    A question with ``documents`` is evaluated against its own pool; one without is evaluated
    against ``corpus``. :meth:`pooled` turns per-question pools into one open corpus.
    """

    name: str
    questions: tuple[EvalQuestion, ...]
    corpus: tuple[EvalDocument, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.questions, tuple):
            object.__setattr__(self, "questions", tuple(self.questions))
        if self.corpus is not None and not isinstance(self.corpus, tuple):
            object.__setattr__(self, "corpus", tuple(self.corpus))

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[EvalQuestion]:
        return iter(self.questions)

    def documents_for(self, question: EvalQuestion) -> tuple[EvalDocument, ...]:
        """The documents ``question`` is answered from: its own pool, else the shared corpus."""
        if question.documents:
            return question.documents
        return self.corpus or ()

    def subset(self, limit: int | None) -> EvalDataset:
        """The first ``limit`` questions (deterministic, file order); the corpus is kept whole so
        that a small run still retrieves among the same distractors as a full one."""
        if limit is None or limit >= len(self.questions):
            return self
        if limit < 0:
            raise ValueError("limit must be >= 0")
        return replace(self, questions=self.questions[:limit])

    def pooled(self) -> EvalDataset:
        """Every question's documents (and the corpus, if any) as one open corpus, de-duplicated
        by id in first-seen order; questions keep no pool of their own.

        This is the ``--pool`` setting: retrieval must find the right document among all of them,
        which is harder than the per-question distractor setting. Two different texts under one id
        are a data error, because de-duplication would silently drop one of them.
        """
        seen: dict[str, EvalDocument] = {}
        sources: Iterable[EvalDocument] = list(self.corpus or ()) + [
            d for q in self.questions for d in q.documents
        ]
        for doc in sources:
            prev = seen.get(doc.id)
            if prev is None:
                seen[doc.id] = doc
            elif prev.text != doc.text:
                raise InputError(
                    f"dataset {self.name}: document id {doc.id!r} has two different texts; "
                    "ids must be unique to pool documents"
                )
        questions = tuple(replace(q, documents=()) for q in self.questions)
        return EvalDataset(
            name=f"{self.name}+pool", questions=questions, corpus=tuple(seen.values())
        )


# --------------------------------------------------------------------------- generic JSONL loader

_QUESTION_FIELDS = {
    "id",
    "question",
    "answers",
    "evidence",
    "evidence_level",
    "documents",
    "options",
    "label",
    "meta",
}
_DOCUMENT_FIELDS = {"id", "title", "text"}


def _where(path: Path, line: int) -> str:
    return f"{path}:{line}"


def _check_unknown(obj: Mapping[str, Any], known: set[str], where: str) -> None:
    """Unknown keys are an error only when they look like a typo of a known one (``answer``,
    ``evidences``); other extra keys are kept in ``meta`` so that users can carry their own ids."""
    for key in obj:
        if key in known:
            continue
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)
        if close:
            raise InputError(f"{where}: unknown field {key!r} (did you mean {close[0]!r}?)")


def _id_of(value: Any, where: str, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"{where}: {what} must be a string or an integer")
    text = str(value).strip()
    if not text:
        raise InputError(f"{where}: {what} is empty")
    return text


def _str_list(value: Any, where: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        got = type(value).__name__
        if isinstance(value, list):
            got = "a list with non-string items"
        raise InputError(f"{where}: {name!r} must be a list of strings, got {got}")
    return tuple(value)


def _document(obj: Any, where: str, default_id: str) -> EvalDocument:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: a document must be an object with id, title, text")
    _check_unknown(obj, _DOCUMENT_FIELDS, where)
    text = obj.get("text")
    if not isinstance(text, str):
        raise InputError(f"{where}: document 'text' must be a string")
    if not text.strip():
        raise InputError(f"{where}: document 'text' is empty")
    title = obj.get("title", "")
    if title is None:
        title = ""
    if not isinstance(title, str):
        raise InputError(f"{where}: document 'title' must be a string")
    doc_id = _id_of(obj["id"], where, "document 'id'") if "id" in obj else default_id
    return EvalDocument(id=doc_id, title=title, text=text)


def _infer_level(evidence: tuple[str, ...]) -> EvidenceLevel:
    """Evidence units of several sentences are paragraphs; otherwise sentences. The level is only
    reported (the matching rule is the same for both), so a simple heuristic is enough."""
    if not evidence:
        return "none"
    from ragsieve.text import split_sentences

    if any(len(split_sentences(e)) > 1 for e in evidence):
        return "paragraph"
    return "sentence"


def _question(obj: dict[str, Any], where: str, line: int) -> EvalQuestion:
    _check_unknown(obj, _QUESTION_FIELDS, where)
    if "question" not in obj:
        raise InputError(f"{where}: missing 'question'")
    question = obj["question"]
    if not isinstance(question, str) or invisible(question):
        raise InputError(f"{where}: 'question' must be a non-empty string")
    qid = _id_of(obj["id"], where, "'id'") if "id" in obj else f"line-{line}"
    answers = _str_list(obj.get("answers", []), where, "answers")
    evidence = tuple(e for e in _str_list(obj.get("evidence", []), where, "evidence") if e.strip())

    level: EvidenceLevel
    if "evidence_level" in obj:
        level = obj["evidence_level"]
        if level not in ("sentence", "paragraph"):
            raise InputError(f"{where}: 'evidence_level' must be 'sentence' or 'paragraph'")
        if not evidence:
            level = "none"
    else:
        level = _infer_level(evidence)

    raw_docs = obj.get("documents", [])
    if not isinstance(raw_docs, list):
        raise InputError(f"{where}: 'documents' must be a list of objects")
    documents: list[EvalDocument] = []
    ids: set[str] = set()
    for i, raw in enumerate(raw_docs):
        doc = _document(raw, f"{where}: documents[{i}]", default_id=f"{qid}#{i}")
        if doc.id in ids:
            raise InputError(f"{where}: documents[{i}]: duplicate document id {doc.id!r}")
        ids.add(doc.id)
        documents.append(doc)

    options: tuple[str, ...] = ()
    label: int | None = None
    if "options" in obj or "label" in obj:
        if "options" not in obj or "label" not in obj:
            raise InputError(f"{where}: multiple choice needs both 'options' and 'label'")
        options = _str_list(obj["options"], where, "options")
        if len(options) < 2:
            raise InputError(f"{where}: 'options' needs at least two choices")
        raw_label = obj["label"]
        if isinstance(raw_label, bool) or not isinstance(raw_label, int):
            raise InputError(f"{where}: 'label' must be an integer index into 'options'")
        if not 0 <= raw_label < len(options):
            raise InputError(
                f"{where}: 'label' {raw_label} is out of range for {len(options)} options"
            )
        label = raw_label
        if not answers:
            answers = (options[label],)

    meta = obj.get("meta", {})
    if not isinstance(meta, dict):
        raise InputError(f"{where}: 'meta' must be an object")
    extras = {k: v for k, v in obj.items() if k not in _QUESTION_FIELDS}
    return EvalQuestion(
        id=qid,
        question=question,
        answers=answers,
        evidence=evidence,
        documents=tuple(documents),
        options=options,
        label=label,
        evidence_level=level,
        meta={**extras, **meta},
    )


def load_corpus(corpus_path: str | Path) -> tuple[EvalDocument, ...]:
    """Read a corpus JSONL file (``{"id", "title", "text"}`` per line) with strict validation.
    A missing ``id`` defaults to ``line-N``; duplicate ids are an error."""
    path = Path(corpus_path)
    docs: list[EvalDocument] = []
    ids: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        where = _where(path, line)
        doc = _document(obj, where, default_id=f"line-{line}")
        if doc.id in ids:
            raise InputError(f"{where}: duplicate id {doc.id!r} (first on line {ids[doc.id]})")
        ids[doc.id] = line
        docs.append(doc)
    if not docs:
        raise InputError(f"{path}: no documents (the file is empty)")
    return tuple(docs)


def load_generic(
    questions_path: str | Path,
    corpus_path: str | Path | None = None,
    *,
    name: str | None = None,
    limit: int | None = None,
) -> EvalDataset:
    """Load a generic questions JSONL file (and an optional shared corpus JSONL).

    Every question must either carry ``documents`` or be answered from the corpus file, so a
    question without documents when no corpus is given is an error (there would be nothing to
    retrieve from). ``limit`` stops reading after the first N questions.
    """
    path = Path(questions_path)
    questions: list[EvalQuestion] = []
    ids: dict[str, int] = {}
    if limit is not None and limit <= 0:
        next(read_jsonl(path), None)  # still report a missing or unreadable file
        corpus = load_corpus(corpus_path) if corpus_path is not None else None
        return EvalDataset(name=name or path.stem, questions=(), corpus=corpus)
    for line, obj in read_jsonl(path):
        where = _where(path, line)
        q = _question(obj, where, line)
        if q.id in ids:
            raise InputError(f"{where}: duplicate id {q.id!r} (first on line {ids[q.id]})")
        ids[q.id] = line
        if corpus_path is None and not q.documents:
            raise InputError(
                f"{where}: question {q.id!r} has no 'documents' and no corpus file was given"
            )
        questions.append(q)
        if limit is not None and len(questions) >= limit:
            break
    if not questions:
        raise InputError(f"{path}: no questions (the file is empty)")
    corpus = load_corpus(corpus_path) if corpus_path is not None else None
    return EvalDataset(name=name or path.stem, questions=tuple(questions), corpus=corpus)
