"""ragsieve's selection over passages someone else retrieved: :class:`PoolSelector`.

A LangChain, LlamaIndex or Haystack retriever hands over a few passages; any ragsieve method
(``tagger``, ``full``, ``sage[g=0.3]``, ``carrot``, ...) then picks the evidence among them.

The default, ``tagger``, reads the passages *directly*: each paragraph (blank-line block, the
unit the tagger was trained on) with the question, keeping the sentences it judges
answer-bearing. Nothing is indexed, so a call costs the tagger's forward passes and the first
one also loads the model (BENCHMARKS.md, "Fast at query time").

Every other method runs as the evaluation harness runs it on a question's own document pool
(``method.retrieve([q], doc_ids=[ids])``), so it behaves here as it is benchmarked: each
passage becomes a :class:`~ragsieve.types.Document` whose id is a hash of its title and text,
added once to a *working index* (a temporary directory by default, removed on
:meth:`PoolSelector.close` or when the selector is garbage-collected; or a persistent
``index_dir`` so that passages seen in an earlier run are not indexed again). The first call
on new passages pays for indexing them (chunk vectors, and for sentence-level methods such as
``full`` the sentence table with its Pareto vectors and attention links); a passage seen
before costs nothing but its share of the selection.

>>> from ragsieve.pool import PoolSelector
>>> with PoolSelector() as sel:
...     res = sel.select("When did Champollion announce the decipherment?", [
...         "Thomas Young studied the stone in 1814. In 1822 Champollion announced that "
...         "hieroglyphs combined phonetic signs with signs for whole words.",
...         "Honey bees dance to tell their nest mates where food is.",
...     ])
>>> any("1822" in p.text for p in res.pieces) and res.pieces[0].passage == 0
True
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsieve.checks import (
    check_list,
    check_name,
    check_path,
    check_run,
    check_text,
    check_valid_text,
    describe,
)
from ragsieve.errors import ConfigError, InputError
from ragsieve.methods import (
    DEFAULT_METHOD,
    Method,
    Retrieval,
    build_method,
    check_spec,
    method_needs_sentences,
)
from ragsieve.methods.spec import make_config, method_def
from ragsieve.types import Chunk, Document

if TYPE_CHECKING:
    from ragsieve.index import Index, IndexConfig

#: Methods that read the caller's passages directly instead of a working index.
DIRECT_METHODS = frozenset({"tagger"})
#: Prefix of the document ids a selector gives the caller's passages.
ID_PREFIX = "pool-"


@dataclass(frozen=True)
class Passage:
    """One passage the caller retrieved: its text and, optionally, a title (a document name
    helps the reranker and the tagger, which read ``title: sentence``)."""

    text: str
    title: str = ""


@dataclass(frozen=True)
class Piece:
    """One selected piece (a sentence or a passage, as the method's unit is).

    ``passage`` is the index of its source in the caller's list (the first one when the same
    passage was given twice), and ``text == passages[passage].text[start:end]``.
    """

    text: str
    score: float
    passage: int
    start: int
    end: int
    chunk_id: str
    doc_id: str


@dataclass(frozen=True)
class PoolResult:
    """The pieces a method selected, in the order of its context, and how it chose them.

    ``retrieval`` is the method's :class:`~ragsieve.methods.Retrieval` (trace, candidates,
    per-stage timings), None when there was nothing to select from. ``indexed`` counts the
    passages this call had to index and ``index_seconds`` what that cost. ``span`` is the
    tagger's extractive answer inside its passage (None: the method gives none).
    """

    question: str
    method: str
    pieces: list[Piece] = field(default_factory=list)
    retrieval: Retrieval | None = None
    indexed: int = 0
    index_seconds: float = 0.0
    span: Piece | None = None

    @property
    def text(self) -> str:
        """The selected context as an LLM would read it (pieces joined by blank lines)."""
        return "\n\n".join(p.text for p in self.pieces)

    def __iter__(self) -> Iterator[Piece]:
        return iter(self.pieces)

    def __len__(self) -> int:
        return len(self.pieces)


def passage_id(title: str, text: str) -> str:
    """The working-index document id of a passage: stable across runs and processes."""
    digest = hashlib.sha256(f"{title}\0{text}".encode()).hexdigest()
    return ID_PREFIX + digest[:20]


def as_passage(p: Any, name: str = "passage") -> Passage:
    """``p`` as a :class:`Passage` (a plain string is a passage without a title); ``name``
    is what an error calls it (``passages[3]``)."""
    if isinstance(p, Passage):
        check_text(f"{name}.text", p.text, empty_ok=True)
        check_text(f"{name}.title", p.title, empty_ok=True)
        return p
    if isinstance(p, str):
        check_valid_text(name, p)
        return Passage(p)
    raise InputError(f"{name} must be a string or a Passage, got {describe(p)}")


def passage_units(doc: Document) -> list[list[Chunk]]:
    """``doc``'s paragraphs (blank-line blocks, what the tagger reads at a time), each as its
    sentence chunks with character offsets into ``doc.text``."""
    from ragsieve.methods.tagger import chunk_sentences

    units: list[list[Chunk]] = []
    n_sents = 0
    starts = [0, *(m.end() for m in re.finditer(r"\n\s*\n", doc.text))]
    ends = [*(m.start() for m in re.finditer(r"\n\s*\n", doc.text)), len(doc.text)]
    for a, b in zip(starts, ends, strict=True):
        if not doc.text[a:b].strip():
            continue
        para = Chunk(
            id=f"{doc.id}#p{len(units)}",
            doc_id=doc.id,
            index=len(units),
            text=doc.text[a:b],
            start=a,
            end=b,
            sent_start=n_sents,
            sent_end=n_sents,
            n_tokens=0,
            title=doc.title,
        )
        sents = chunk_sentences(para)
        if sents:
            units.append(sents)
            n_sents = sents[-1].sent_end
    return units


def _remove(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


class PoolSelector:
    """Run a ragsieve method on passages the caller supplies.

    ``method`` is any spec the parser accepts (``"tagger"``, the default, ``"full"``,
    ``"sage[g=0.3]"``); ``budget``, ``k``, ``retriever`` and ``reranker`` are the run options
    of ``ragsieve ask``. ``tagger`` reads every passage given (the caller's retriever already
    chose them, so ``k`` and ``retriever`` do not apply) and needs no index; any other method
    runs over a working index: ``index_dir`` keeps it between runs (default: a temporary
    directory) and ``embedder`` names its embedding model. Safe to share between threads
    (calls run one at a time). A bad spec fails here, before any model loads.

    >>> sel = PoolSelector("sage[g=0.3]", budget=300)
    >>> res = sel.select("Who found the stone?", ["French soldiers found the stone in 1799."])
    >>> [(p.passage, p.start, p.end) for p in res.pieces]
    [(0, 0, 40)]
    >>> sel.close()
    """

    def __init__(
        self,
        method: str = DEFAULT_METHOD,
        *,
        budget: int | None = None,
        k: int | None = None,
        retriever: str | None = None,
        reranker: str | None = None,
        index_dir: str | Path | None = None,
        embedder: str = "minilm",
    ) -> None:
        check_name("method", method, expected="a method spec such as 'tagger' or 'full'")
        self.run: dict[str, Any] = {
            "k": k,
            "budget": budget,
            "retriever": retriever,
            "reranker": reranker,
        }
        check_run(self.run)
        check_name("embedder", embedder, expected="an embedder name such as 'minilm'")
        if index_dir is not None:
            check_path("index_dir", index_dir)
        self.spec = check_spec(method, **self.run)
        self.method_name = self.spec.label
        #: True: the method reads the passages directly (no working index is ever made).
        self.direct = self.spec.name in DIRECT_METHODS
        self._config: Any = make_config(method_def(self.spec.name), self.spec.options, self.run)
        self.embedder = embedder
        self.index_dir = Path(index_dir) if index_dir is not None else None
        self._lock = threading.RLock()
        self._index: Index | None = None
        self._method: Method | None = None
        self._known: set[str] = set()
        self._tmp: str | None = None
        self._finalizer: weakref.finalize | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def index(self) -> Index:
        """The working index (made on first use; none for a direct method)."""
        if self.direct:
            raise ConfigError(f"{self.method_name} reads passages directly: it has no index")
        self.warm_up()
        assert self._index is not None
        return self._index

    def warm_up(self) -> None:
        """Load the tagger (direct methods), or open (or create) the working index and build
        the method; the first :meth:`select` does this itself, a server may call it at
        start-up instead."""
        with self._lock:
            if self.direct:
                from ragsieve.methods.tagger import get_tagger

                get_tagger(self._config.model)
                return
            if self._index is not None:
                return
            from ragsieve.index import Index, IndexConfig

            cfg = IndexConfig(
                embedder=self.embedder, sentences=method_needs_sentences(self.spec.name)
            )
            if self.index_dir is None:
                self._tmp = tempfile.mkdtemp(prefix="ragsieve-pool-")
                self._finalizer = weakref.finalize(self, _remove, self._tmp)
                index = Index.create(Path(self._tmp) / "index", cfg)
            else:
                index = self._open_persistent(self.index_dir, cfg)
                self._known = set(index.document_hashes())
            self._method = build_method(self.spec, index, **self.run)
            self._index = index

    @staticmethod
    def _open_persistent(path: Path, cfg: IndexConfig) -> Index:
        """``path`` as a working index: created with ``cfg``, or an existing index that has
        the same embedder and, when the method needs one, a sentence table."""
        from ragsieve.index import Index
        from ragsieve.index.store import MANIFEST

        if not (path / MANIFEST).is_file():
            return Index.open_or_create(path, cfg)
        index = Index.open(path)
        if index.config.embedder != cfg.embedder or (cfg.sentences and not index.has_sentences):
            raise ConfigError(
                f"working index {path} was built with embedder={index.config.embedder}, "
                f"sentences={index.has_sentences}; this method needs embedder={cfg.embedder}"
                f"{', sentences=True' if cfg.sentences else ''}: use another index_dir"
            )
        return index

    def close(self) -> None:
        """Forget the working index; a temporary one is deleted (a persistent one is kept).
        A later :meth:`select` starts a new one."""
        with self._lock:
            self._index, self._method = None, None
            self._known = set()
            if self._finalizer is not None:
                self._finalizer()
                self._finalizer, self._tmp = None, None

    def __enter__(self) -> PoolSelector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ selection
    def select(self, question: str, passages: Sequence[Passage | str]) -> PoolResult:
        """The pieces of ``passages`` that the method selects for ``question``, in context
        order, each pointing back to its passage by index and character offsets."""
        check_text("question", question)
        given = check_list("passages", passages, of="strings or Passages")
        items = [as_passage(p, f"passages[{i}]") for i, p in enumerate(given)]
        owner: dict[str, int] = {}
        docs: list[Document] = []
        for i, p in enumerate(items):
            if not p.text.strip():
                continue  # nothing to select from an empty passage
            pid = passage_id(p.title, p.text)
            if pid not in owner:
                owner[pid] = i
                docs.append(Document(id=pid, text=p.text, title=p.title, source="pool"))
        if not docs:
            return PoolResult(question, self.method_name)
        if self.direct:
            r = self._select_direct(question, docs)
            pieces, span = self._pieces(r, owner), self._span(r, owner)
            return PoolResult(question, self.method_name, pieces, r, span=span)
        with self._lock:
            self.warm_up()
            assert self._index is not None and self._method is not None
            new = [d for d in docs if d.id not in self._known]
            t0 = time.perf_counter()
            if new:
                self._index.add(new)
                self._known.update(d.id for d in new)
            index_s = time.perf_counter() - t0 if new else 0.0
            r = self._method.retrieve([question], [list(owner)])[0]
        pieces, span = self._pieces(r, owner), self._span(r, owner)
        return PoolResult(question, self.method_name, pieces, r, len(new), index_s, span)

    def _select_direct(self, question: str, docs: list[Document]) -> Retrieval:
        """The tagger over each passage's paragraphs, as the ``tagger`` method selects (its
        threshold, hops, ``min_keep``, ``unit`` and ``budget``), without an index."""
        from ragsieve.methods.tagger import get_tagger, select_with
        from ragsieve.methods.trace import scored_trace, selection_trace

        c = self._config
        units = [u for d in docs for u in passage_units(d)]
        timings: dict[str, float] = {}
        with self._lock:  # one call at a time, as over a working index
            tagger = get_tagger(c.model)
            sel, cands = select_with(tagger, question, units, c, timings)
        trace: dict[str, Any] = {
            "method": self.spec.name,
            "direct": True,
            "passages": len(docs),
            "tagger": str(tagger.model_dir),
            "candidates": scored_trace(cands),
            **selection_trace(sel),
        }
        return Retrieval(question, sel.context, cands, trace, timings, sel.span)

    @staticmethod
    def _span(r: Retrieval, owner: dict[str, int]) -> Piece | None:
        """The answer span as a piece of its passage (offsets into the passage's text)."""
        s = r.span
        if s is None or s.doc_id not in owner:
            return None
        return Piece(s.text, float(s.score), owner[s.doc_id], s.start, s.end, s.chunk_id, s.doc_id)

    @staticmethod
    def _pieces(r: Retrieval, owner: dict[str, int]) -> list[Piece]:
        return [
            Piece(
                text=s.chunk.text,
                score=float(s.score),
                passage=owner[s.chunk.doc_id],
                start=s.chunk.start,
                end=s.chunk.end,
                chunk_id=s.chunk.id,
                doc_id=s.chunk.doc_id,
            )
            for s in r.context.chunks
            if s.chunk.doc_id in owner
        ]
