"""The bodies of the HTTP API's requests and responses (pydantic), and the limits a request is
held to: what ``/docs`` shows, and what FastAPI checks before any route runs.

Responses are written as plain JSON (the same as the CLI's ``--json``); the response models
here document them in the OpenAPI schema.
"""

from __future__ import annotations

from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from ragsieve.defaults import DEFAULT_MAX_TOKENS
from ragsieve.methods import DEFAULT_METHOD
from ragsieve.serve.limits import MAX_BUDGET, MAX_K
from ragsieve.types import LINE_KINDS, SourceSpan

# ----------------------------------------------------------------------------- limits
#: Longest query / question accepted, in characters (a paragraph, not a document).
MAX_QUERY_CHARS = 2000
#: Longest method spec accepted over HTTP.
MAX_SPEC_CHARS = 500
#: Largest whole-question prompt budget (every LLM call of one question) in tokens.
MAX_TOTAL_BUDGET = 1_000_000
#: Longest answer in tokens.
MAX_ANSWER_TOKENS = 2048

Retriever = Literal["dense", "bm25", "hybrid"]


# ----------------------------------------------------------------------------- schemas
class SearchRequest(BaseModel):
    """Body of ``POST /search`` (the options of ``ragsieve search``)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for.")
    k: int = Field(10, ge=1, le=MAX_K, description="Number of results.")
    retriever: Retriever | None = Field(
        None, description="dense | bm25 | hybrid (default: dense, or the method's own)."
    )
    reranker: str | None = Field(
        None, max_length=200, description="Rerank a deeper candidate list (server allow-list)."
    )
    method: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_SPEC_CHARS,
        description="A method spec ('full[unit=passage]'): return the context it selects.",
    )
    budget: int | None = Field(
        None, ge=1, le=MAX_BUDGET, description="Token ceiling of the context (with method)."
    )


class ExplainRequest(BaseModel):
    """Body of ``POST /explain`` (the options of ``ragsieve explain``; no LLM is called): the
    question and how its context is retrieved, which ``POST /ask`` takes too."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="The question.")
    method: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_SPEC_CHARS,
        description="A method spec: tagger, naive, sage, carrot, pareto, saki, full, "
        f"'full[unit=passage]' (default: the server's --config, else {DEFAULT_METHOD}).",
    )
    k: int = Field(10, ge=1, le=MAX_K, description="Chunks in the context (top-k).")
    budget: int | None = Field(
        None, ge=1, le=MAX_BUDGET, description="Fill the context up to N tokens (replaces k)."
    )
    retriever: Retriever | None = Field(
        None, description="dense | bm25 | hybrid (default: the method's own)."
    )
    reranker: str | None = Field(None, max_length=200, description="Rerank before selection.")


class AskRequest(ExplainRequest):
    """Body of ``POST /ask`` (the options of ``ragsieve ask``): ``/explain``'s fields plus the
    answer's."""

    max_tokens: int = Field(
        DEFAULT_MAX_TOKENS, ge=1, le=MAX_ANSWER_TOKENS, description="Answer length cap."
    )
    total_budget: int | None = Field(
        None,
        ge=1,
        le=MAX_TOTAL_BUDGET,
        description="Prompt tokens of every LLM call for the question, summed.",
    )
    explain: bool = Field(
        False,
        description="Add an 'explain' key: the evidence report (as POST /explain returns) of "
        "the retrieval this answer used, with the context the answer finally read as selected.",
    )


class _Span(BaseModel):
    """The fields a search hit and a context chunk share: which chunk, and its text and span."""

    chunk_id: str
    doc_id: str
    title: str
    text: str
    score: float
    start: int
    end: int


class SearchHit(_Span):
    tokens: int
    #: Where it sits in its document: ``page 3`` (PDF), the heading above it, both, or ``""``.
    where: str = ""


class SearchResponse(BaseModel):
    query: str
    retriever: str | None
    results: list[SearchHit]
    method: str | None = None


class ContextChunk(_Span):
    #: Where it sits in its document: ``page 3`` (PDF), the heading above it, both, or ``""``.
    where: str = ""


class TokenCounts(BaseModel):
    context: int
    prompt: int
    completion: int


class CurvePoint(BaseModel):
    rank: int
    chunk_id: str
    score: float
    tokens: int | None
    selected: bool


class Segment(BaseModel):
    """A stretch of a document: a candidate's span (``chunk_id`` and ``score`` set) or text no
    candidate covers (``score`` null). Consecutive segments cover the whole document."""

    start: int
    end: int
    text: str
    chunk_id: str | None
    #: The tagger's keep probability where the method has the tagger, else the candidate score.
    score: float | None
    selected: bool
    #: Characters left out of a long uncovered stretch (its text is head " … " tail).
    elided: int | None = None


class EvidenceDocument(BaseModel):
    doc_id: str
    title: str
    segments: list[Segment]


class ExplainResponse(BaseModel):
    """:func:`ragsieve.explain.report` (the JSON of ``ragsieve explain --json``) plus
    ``documents``. ``search`` (CARROT), ``links`` (SAKI), ``feedback`` (SAGE's loop) and
    ``passages`` (the evidence tagger) appear only for the methods that record them."""

    question: str
    method: str | None
    selected: list[str]
    score_curve: list[CurvePoint]
    cut: dict[str, Any]
    tokens: dict[str, int]
    seconds: dict[str, float]
    search: dict[str, Any] | None = None
    links: dict[str, Any] | None = None
    feedback: dict[str, Any] | None = None
    passages: list[dict[str, Any]] | None = None
    documents: list[EvidenceDocument]


#: The tagger's answer span as ``/ask`` writes it (:meth:`SourceSpan.to_json`): the fields of
#: :class:`~ragsieve.types.SourceSpan` that JSON carries (taken from it, so that the two cannot
#: drift apart), each one required, and ``in_context``: whether its unit is in ``context`` (a
#: budget can leave a kept sentence out). ``score`` is the span head's probability (start
#: times end), in (0, 1].
AnswerSpan = create_model(
    "AnswerSpan",
    __doc__="The tagger's answer span, located: ``text`` is characters ``start``-``end`` of "
    "document ``doc_id`` (offsets as a context chunk's), inside the sentence unit ``chunk_id``.",
    **{
        name: (kind, ...)
        for name, kind in get_type_hints(SourceSpan).items()
        if name in SourceSpan.JSON_FIELDS
    },
    in_context=(bool, ...),
)


class AnswerLine(BaseModel):
    """The answer line as :class:`ragsieve.types.AnswerLine` writes it: the typed result that
    ``answer``, ``abstained`` and ``confidence`` repeat at the top level."""

    text: str | None = Field(description="The line (null: it abstained).")
    kind: Literal[LINE_KINDS] = Field(  # type: ignore[valid-type]
        description="Where the line came from: the tagger's span, the LLM's reply, the whole "
        "reply of a two-part question, the option (choice) or yes-no the reply names, none (no "
        "LLM and no span), or abstain."
    )
    confidence: float | None = Field(
        description="How sure the line is that the documents answer (null: nothing to judge by)."
    )
    abstained: bool = Field(description="The indexed documents do not answer.")
    why: str | None = Field(description="Why the line abstained (null: it did not).")
    agrees: bool | None = Field(
        description="Whether the LLM's reply holds every word of the span (null: not judged)."
    )
    span: AnswerSpan | None = Field(  # type: ignore[valid-type]
        description="Where the line sits in the documents, when it is the tagger's span."
    )


class AskResponse(BaseModel):
    question: str
    method: str
    answer: str | None = Field(
        description="The answer line (null: abstained, the indexed documents do not answer)."
    )
    abstained: bool = Field(
        False,
        description="True when the line abstained: under the confidence floor, a question with "
        "no word to search for, or nothing found (``line.why`` says why; the evidence and "
        "any reply stay).",
    )
    confidence: float | None = Field(
        None,
        description="How sure the line is that the documents answer (span score, best keep "
        "probability, the question's words in the context); null: the method gives no span.",
    )
    context: list[ContextChunk]
    tokens: TokenCounts
    cost: float
    timings: dict[str, float]
    trace: dict[str, Any]
    span: AnswerSpan | None = Field(
        None,
        description="The tagger's extractive answer inside a sentence it kept, with its "
        "location (null: the method gives none: no tagger, or a model without a span head). "
        "Shown beside the LLM's answer; a server run with no LLM answers with it alone.",
    )
    reply: str | None = Field(
        None,
        description="The LLM's reply (null: no LLM asked). ``answer`` is the answer line: the "
        "reply, or for the packaged local readers the answer span where it answers "
        "(``line.kind``: span, whole, choice, yes-no, reply, none or abstain).",
    )
    line: AnswerLine | None = Field(
        None,
        description="The answer line, typed: its text, where it came from, confidence and "
        "abstention (null: no line was drawn).",
    )
    #: Only when the request set ``explain``.
    explain: ExplainResponse | None = None


class HealthResponse(BaseModel):
    status: str
    #: True once the models the default method needs are loaded: a load balancer may route.
    ready: bool
    documents: int
    chunks: int
    #: The next three name paths and models: on a server with a token, only a request that
    #: carries it sees them (null otherwise).
    index: str | None
    llm: str | None
    #: The models loaded so far (query embedder, LLM, rerankers built on demand).
    loaded: list[str] | None


class ErrorResponse(BaseModel):
    error: str


#: OpenAPI descriptions of the error statuses (the body is always ``{"error": "..."}``).
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse, "description": why}
    for code, why in (
        (400, "Bad input or option (unknown method, reranker, empty query)."),
        (401, "Missing or wrong bearer token."),
        (413, "Request body over the size limit."),
        (500, "Internal error (logged on the server)."),
        (503, "The index cannot be read."),
    )
}
LLM_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    502: {"model": ErrorResponse, "description": "The LLM backend failed."},
    504: {"model": ErrorResponse, "description": "The LLM backend timed out."},
}
