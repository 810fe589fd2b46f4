"""Haystack components: ``RagsieveRanker`` runs a ragsieve method on the documents an earlier
component retrieved, ``RagsieveRetriever`` runs one over a ragsieve index.

``pip install 'ragsieve[haystack]'`` (haystack-ai 2.x or later). Both take plain init values,
so a pipeline holding them saves and loads with ``Pipeline.dumps()``/``loads()``. Nothing
global is set (Haystack's telemetry is its own: ``HAYSTACK_TELEMETRY_ENABLED=False``).

>>> from haystack import Document, Pipeline
>>> from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
>>> from haystack.document_stores.in_memory import InMemoryDocumentStore
>>> store = InMemoryDocumentStore()
>>> _ = store.write_documents([Document(content="In 1822 Champollion announced it."),
...                            Document(content="Bees dance to show food.")])
>>> pipe = Pipeline()
>>> _ = pipe.add_component("bm25", InMemoryBM25Retriever(store))
>>> _ = pipe.add_component("sieve", RagsieveRanker("full"))
>>> _ = pipe.connect("bm25.documents", "sieve.documents")
>>> q = "When did Champollion announce it?"
>>> out = pipe.run({"bm25": {"query": q}, "sieve": {"query": q}})
>>> "1822" in out["sieve"]["documents"][0].content
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsieve.checks import check_path, check_run, check_text
from ragsieve.integrations import common
from ragsieve.methods import check_spec
from ragsieve.pool import DEFAULT_METHOD, PoolResult

try:
    from haystack import Document, component, default_from_dict, default_to_dict
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise common.MissingExtra("haystack", "haystack-ai") from e

__all__ = ["RagsieveRanker", "RagsieveRetriever"]

#: The init values each component saves (``Pipeline.dumps``), in their order.
RANKER_PARAMS = ("method", *common.POOL_OPTIONS, "title_key")
RETRIEVER_PARAMS = ("index", "method", *common.RUN_OPTIONS)


@component
class RagsieveRanker:
    """Keep only the evidence: a ragsieve method on the documents a retriever returned.

    ``run(query, documents)`` returns one Document per selected sentence (or passage, as the
    method's unit is), in the method's context order, with ``score`` set, the source
    document's ``meta`` plus ``ragsieve_score``, ``ragsieve_method``, ``ragsieve_start`` /
    ``ragsieve_end`` (offsets in the source's ``content``), ``ragsieve_chunk_id``,
    ``ragsieve_where`` (its page or heading where the source's text has them, else ``""``) and
    ``ragsieve_source_id`` (the source Document's id). ``title_key`` names the meta field
    read as the title. The working index is made by :meth:`warm_up` (or the first run).

    >>> ranker = RagsieveRanker("tagger")
    >>> out = ranker.run("When?", [Document(content="In 1822 Champollion announced it.")])
    >>> d = out["documents"][0]; (d.meta["ragsieve_start"], d.meta["ragsieve_end"])
    (0, 33)
    """

    def __init__(
        self,
        method: str = DEFAULT_METHOD,
        budget: int | None = None,
        k: int | None = None,
        retriever: str | None = None,
        reranker: str | None = None,
        index_dir: str | Path | None = None,
        embedder: str = "minilm",
        title_key: str | None = "title",
    ) -> None:
        if index_dir is not None:
            check_path("index_dir", index_dir)
        self.method = method
        self.budget = budget
        self.k = k
        self.retriever = retriever
        self.reranker = reranker
        self.index_dir = str(index_dir) if index_dir is not None else None  # serialisable
        self.embedder = embedder
        self.title_key = title_key
        self.selector = common.pool_selector(self)

    def warm_up(self) -> None:
        """Make the working index and build the method (Haystack calls this before a run)."""
        self.selector.warm_up()

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, **{key: getattr(self, key) for key in RANKER_PARAMS})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RagsieveRanker:
        return default_from_dict(cls, data)

    def select(self, query: str, documents: list[Document]) -> PoolResult:
        """The raw selection for ``documents`` (pieces, trace, timings), for provenance. A
        Document without text (``content=None``: a blob, a table) has nothing to select."""
        check_text("query", query)
        docs = common.framework_items("documents", documents, Document, "Haystack Documents")
        passages = [common.titled_passage(d.content or "", d.meta, self.title_key) for d in docs]
        return self.selector.select(query, passages)

    @component.output_types(documents=list[Document])
    def run(self, query: str, documents: list[Document]) -> dict[str, list[Document]]:
        """The selected pieces of ``documents`` for ``query``, as scored Documents."""
        check_text("query", query)
        docs = common.framework_items("documents", documents, Document, "Haystack Documents")
        res = self.select(query, docs)
        out = []
        for p in res.pieces:
            src = docs[p.passage]
            meta = {
                **src.meta,
                **common.piece_meta(p, res.method, src.content),
                "ragsieve_source_id": src.id,
            }
            out.append(Document(content=p.text, meta=meta, score=p.score))
        return {"documents": out}


@component
class RagsieveRetriever:
    """A ragsieve method over a ragsieve index (``ragsieve index DIR ...``): ``run(query)``
    returns one scored Document per selected chunk, with ``doc_id``, ``title``, ``source`` and
    the ``ragsieve_*`` keys in its ``meta``.

    >>> import tempfile
    >>> from ragsieve import Document, Index
    >>> path = tempfile.mkdtemp() + "/index"
    >>> _ = Index.create(path).add([Document("stone", "Soldiers found the stone in 1799.")])
    >>> r = RagsieveRetriever(index=path, method="naive", k=1)
    >>> r.run("Who found the stone?")["documents"][0].meta["doc_id"]
    'stone'
    """

    def __init__(
        self,
        index: str | Path,
        method: str = DEFAULT_METHOD,
        k: int | None = None,
        budget: int | None = None,
        retriever: str | None = None,
        reranker: str | None = None,
    ) -> None:
        self.index = str(check_path("index", index))
        self.method = method
        self.k = k
        self.budget = budget
        self.retriever = retriever
        self.reranker = reranker
        # A bad spec fails here, when the pipeline is built, not at its first run.
        run = {"k": k, "budget": budget, "retriever": retriever, "reranker": reranker}
        check_run(run)
        check_spec(method, **run)
        self._impl: common.IndexMethod | None = None

    def warm_up(self) -> None:
        """Open the index and build the method (Haystack calls this before a run)."""
        if self._impl is None:
            self._impl = common.index_method(self)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, **{key: getattr(self, key) for key in RETRIEVER_PARAMS})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RagsieveRetriever:
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, query: str) -> dict[str, list[Document]]:
        """The chunks the method selects for ``query``, as scored Documents."""
        self.warm_up()
        assert self._impl is not None
        docs = [
            Document(content=text, meta=meta, score=score)
            for text, score, meta in self._impl.hits(query)
        ]
        return {"documents": docs}
