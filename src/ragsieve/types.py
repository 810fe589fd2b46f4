"""Core value types that flow through every stage.

Everything is a frozen dataclass holding character offsets into the source text, so that any
stage (segmentation, sentence links, evaluation against gold evidence) can go back to the exact
span of the original document instead of trusting re-tokenised copies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar


@dataclass(frozen=True)
class Document:
    """A source document. ``id`` is stable across re-indexing (a path or a record id)."""

    id: str
    text: str
    title: str = ""
    source: str = ""


@dataclass(frozen=True)
class Sentence:
    """One sentence of a document: ``text == document.text[start:end]``."""

    doc_id: str
    index: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit: the sentences ``[sent_start, sent_end)`` of one document.

    ``start``/``end`` are character offsets into the document text; ``text`` is that slice.
    """

    id: str
    doc_id: str
    index: int
    text: str
    start: int
    end: int
    sent_start: int
    sent_end: int
    n_tokens: int
    title: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Scored:
    """A chunk with a score. ``score`` is in [0, 1] after reranking; raw retriever scores
    (cosine, BM25, RRF) are kept in ``scores`` under the stage's name for the trace."""

    chunk: Chunk
    score: float
    scores: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """The ordered chunks handed to the LLM, and their token total."""

    chunks: tuple[Scored, ...]
    n_tokens: int

    @property
    def text(self) -> str:
        return "\n\n".join(s.chunk.text for s in self.chunks)


@dataclass(frozen=True)
class Usage:
    """Token usage of one LLM call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True)
class Generation:
    """What an LLM backend returns: the text and its usage."""

    text: str
    usage: Usage
    #: The model that answered, as the backend names it ("" where it names none).
    model: str = ""
    #: Why the generation stopped, in the OpenAI wording ("stop", "length"; "" when not said).
    finish_reason: str = ""


@dataclass(frozen=True)
class SourceSpan:
    """An extractive answer span (the tagger's span head): ``text`` is characters
    ``start``-``end`` of its source, ``score`` the span head's probability.

    The one span type, at two places: as the tagger finds it, in sentence ``sentence`` of
    passage ``passage`` (indices into the passages it read; ``start``/``end`` offsets into that
    sentence, ``doc_id`` empty), and located in the index (:meth:`located`): ``text ==
    document.text[start:end]`` of document ``doc_id`` (character offsets, as a chunk's), inside
    the sentence unit ``chunk_id``."""

    text: str
    score: float
    doc_id: str = ""
    chunk_id: str = ""
    start: int = 0
    end: int = 0
    title: str = ""
    passage: int = 0
    sentence: int = 0

    #: The fields of the ``span`` of ``ask --json`` and ``POST /ask`` (a located span's).
    JSON_FIELDS: ClassVar[tuple[str, ...]] = (
        "text",
        "score",
        "doc_id",
        "chunk_id",
        "start",
        "end",
        "title",
    )

    def located(self, unit: Chunk) -> SourceSpan:
        """This span, found in ``unit`` (the sentence chunk whose text the tagger read), with
        document offsets: the unit's start plus the span's offsets in its text."""
        return replace(
            self,
            doc_id=unit.doc_id,
            chunk_id=unit.id,
            start=unit.start + self.start,
            end=unit.start + self.end,
            title=unit.title,
        )

    def to_json(self, context: Context | None = None) -> dict[str, Any]:
        """The ``span`` of ``ask --json`` and ``POST /ask``; ``in_context``: whether its unit is
        in ``context`` (the one the LLM read; a budget can leave a kept sentence out)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in self.JSON_FIELDS}
        if context is not None:
            out["in_context"] = any(s.chunk.id == self.chunk_id for s in context.chunks)
        return out


#: Where an answer line comes from: the tagger's ``span``, the LLM's ``reply``, the ``whole``
#: reply of a two-part question, the option (``choice``) or ``yes-no`` the reply names,
#: ``none`` (no LLM and no span), or ``abstain`` (the indexed documents do not answer).
LINE_KINDS = ("span", "reply", "whole", "choice", "yes-no", "none", "abstain")


@dataclass(frozen=True)
class AnswerLine:
    """The answer line of one question, as :mod:`ragsieve.methods.answer_line` draws it: the
    one result that ``ask``, ``ask --json``, ``--compare``, the API, ``POST /ask`` and the viewer
    print or serialise.

    ``text`` is the line (None: it abstained; ``""``: an empty reply, or no span without an
    LLM); ``kind`` where it came from
    (:data:`LINE_KINDS`); ``confidence`` how sure it is that the documents answer (None: nothing
    to judge by); ``why`` the reason it abstained; ``agrees`` whether the LLM's reply holds every
    word of the span (None: no reply was judged); ``span`` where the line sits in the documents,
    when the line is the tagger's span."""

    text: str | None
    kind: str
    confidence: float | None = None
    why: str | None = None
    agrees: bool | None = None
    span: SourceSpan | None = None

    @property
    def abstained(self) -> bool:
        """The line abstained (kind ``abstain``: no text, the reason in ``why``)."""
        return self.kind == "abstain"

    def to_json(self, context: Context | None = None) -> dict[str, Any]:
        """The ``line`` of ``ask --json`` and ``POST /ask`` (its ``span`` as
        :meth:`SourceSpan.to_json` writes it)."""
        return {
            "text": self.text,
            "kind": self.kind,
            "confidence": self.confidence,
            "abstained": self.abstained,
            "why": self.why,
            "agrees": self.agrees,
            "span": self.span.to_json(context) if self.span is not None else None,
        }


@dataclass(frozen=True)
class Answer:
    """The result of one ``ask``: answer text, the context used, token counts, cost and a trace.

    ``timings`` maps stage name -> seconds; ``trace`` is a JSON-serialisable record of what each
    stage did (candidates scored, what was selected and why), kept for explanation: the answer
    line itself is :attr:`line`.
    """

    question: str
    text: str
    context: Context
    usage: Usage
    cost: float
    timings: dict[str, float]
    trace: dict[str, Any]
    method: str = "naive"
    #: The tagger's answer span (None: the method gives none); with no LLM it is the answer.
    span: SourceSpan | None = None
    #: The LLM's reply (None: no LLM asked). ``text`` is the answer line's text (``""`` when it
    #: abstained): the reply, or the span for a reader with ``span_first`` (``line.kind``).
    reply: str | None = None
    #: The answer line: where ``text`` came from, its confidence and abstention (None: not
    #: drawn yet, as the LLM's first reply inside a method).
    line: AnswerLine | None = None

    @property
    def confidence(self) -> float | None:
        """How sure the line is that the documents answer (None: the method gives nothing to
        judge by)."""
        return self.line.confidence if self.line is not None else None

    @property
    def abstained(self) -> bool:
        """The line abstained: the indexed documents do not answer (``text`` is empty,
        ``line.why`` says why; the evidence and any reply stay)."""
        return self.line is not None and self.line.abstained

    def to_json(self) -> dict[str, Any]:
        """The JSON shape documented for ``ragsieve ask --json`` and ``POST /ask``."""
        return {
            "question": self.question,
            "method": self.method,
            "answer": None if self.abstained else self.text,
            "abstained": self.abstained,
            "confidence": self.confidence,
            "context": [_located(s) for s in self.context.chunks],
            "tokens": {
                "context": self.context.n_tokens,
                "prompt": self.usage.prompt_tokens,
                "completion": self.usage.completion_tokens,
            },
            "cost": self.cost,
            "timings": self.timings,
            "trace": self.trace,
            "span": self.span.to_json(self.context) if self.span is not None else None,
            "reply": self.reply,
            "line": self.line.to_json(self.context) if self.line is not None else None,
        }


def _located(s: Scored) -> dict[str, Any]:
    """One scored chunk with where it stands in its document: a row of an answer's ``context``
    and, with its token count, of a search's ``results``."""
    c = s.chunk
    return {
        "chunk_id": c.id,
        "doc_id": c.doc_id,
        "title": c.title,
        "text": c.text,
        "score": s.score,
        "start": c.start,
        "end": c.end,
    }


def scored_json(items: Sequence[Scored]) -> list[dict[str, Any]]:
    """The ``results`` of ``ragsieve search --json`` and ``POST /search`` (one shape for both)."""
    return [{**_located(s), "tokens": s.chunk.n_tokens} for s in items]
