"""LangChain components: ragsieve's selection as a document compressor, a retriever over a
ragsieve index, and the packaged MiniLM as LangChain ``Embeddings``.

``pip install 'ragsieve[langchain]'`` (langchain-core, and langchain-classic for
``ContextualCompressionRetriever``). Every class runs offline: no model hub, no LLM.

>>> from langchain_classic.retrievers import ContextualCompressionRetriever
>>> from langchain_core.vectorstores import InMemoryVectorStore
>>> store = InMemoryVectorStore.from_texts(
...     ["In 1822 Champollion announced the decipherment.", "Bees dance."],
...     RagsieveEmbeddings())
>>> chain = ContextualCompressionRetriever(
...     base_compressor=RagsieveCompressor("full"), base_retriever=store.as_retriever(k=2))
>>> "1822" in chain.invoke("When did Champollion announce the decipherment?")[0].page_content
True
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragsieve.checks import check_name, check_text
from ragsieve.integrations import common
from ragsieve.pool import DEFAULT_METHOD, PoolResult

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun, Callbacks
    from langchain_core.documents import BaseDocumentCompressor, Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, PrivateAttr, ValidationError
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise common.MissingExtra("langchain", "langchain-core") from e

__all__ = ["RagsieveCompressor", "RagsieveEmbeddings", "RagsieveRetriever"]


class RagsieveCompressor(common.SelectorOptions, BaseDocumentCompressor):
    """Keep only the evidence: a ragsieve method run on the documents a retriever returned.

    The ``base_compressor`` of a ``ContextualCompressionRetriever``. Each returned
    ``Document`` is a selected sentence (or passage, as the method's unit is) with its source
    document's metadata plus ``ragsieve_score``, ``ragsieve_method``, ``ragsieve_start``,
    ``ragsieve_end`` (offsets in the source's ``page_content``), ``ragsieve_chunk_id`` and
    ``ragsieve_where`` (its page or heading where the source's text has them, else ``""``), in
    the method's context order. ``title_key`` names the metadata field read as the title.

    >>> docs = [Document("In 1822 Champollion announced the decipherment.")]
    >>> out = RagsieveCompressor("tagger").compress_documents(docs, "When was it deciphered?")
    >>> out[0].metadata["ragsieve_start"], out[0].metadata["ragsieve_end"]
    (0, 47)
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def __init__(self, method: str = DEFAULT_METHOD, **kwargs: Any) -> None:
        check_name("method", method, expected="a method spec such as 'tagger' or 'full'")
        common.checked_init(
            super().__init__, "RagsieveCompressor", ValidationError, method=method, **kwargs
        )

    def model_post_init(self, context: Any, /) -> None:
        self._selector = common.pool_selector(self)

    def select(self, documents: Sequence[Document], query: str) -> PoolResult:
        """The raw selection for ``documents`` (pieces, trace, timings), for provenance."""
        check_text("query", query)
        docs = common.framework_items("documents", documents, Document, "LangChain Documents")
        passages = [common.titled_passage(d.page_content, d.metadata, self.title_key) for d in docs]
        return self._selector.select(query, passages)

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """The selected pieces of ``documents`` for ``query``, as Documents."""
        check_text("query", query)
        docs = common.framework_items("documents", documents, Document, "LangChain Documents")
        res = self.select(docs, query)
        return [
            Document(
                page_content=p.text,
                metadata={
                    **docs[p.passage].metadata,
                    **common.piece_meta(p, res.method, docs[p.passage].page_content),
                },
            )
            for p in res.pieces
        ]


class RagsieveRetriever(BaseRetriever):
    """A ragsieve method over a ragsieve index (``ragsieve index DIR ...``) as a LangChain
    retriever: each Document is a selected chunk with ``doc_id``, ``title``, ``source`` and
    the ``ragsieve_*`` keys (offsets into the indexed document's text) in its metadata.

    >>> import tempfile
    >>> from ragsieve import Document, Index
    >>> path = tempfile.mkdtemp() + "/index"
    >>> _ = Index.create(path).add([Document("stone", "Soldiers found the stone in 1799.")])
    >>> r = RagsieveRetriever(index=path, method="naive", k=1)
    >>> r.invoke("Who found the stone?")[0].metadata["doc_id"]
    'stone'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: str | Path
    method: str = DEFAULT_METHOD
    k: int | None = None
    budget: int | None = None
    retriever: str | None = None
    reranker: str | None = None
    _impl: common.IndexMethod = PrivateAttr()

    def __init__(self, **kwargs: Any) -> None:
        common.checked_init(super().__init__, "RagsieveRetriever", ValidationError, **kwargs)

    def model_post_init(self, context: Any, /) -> None:
        self._impl = common.index_method(self)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [
            Document(page_content=text, metadata=meta) for text, _, meta in self._impl.hits(query)
        ]


class RagsieveEmbeddings(Embeddings):
    """ragsieve's packaged all-MiniLM-L6-v2 (int8 ONNX, no torch, no download) as LangChain
    ``Embeddings``, so a LangChain vector store runs offline.

    >>> len(RagsieveEmbeddings().embed_query("hello"))
    384
    """

    def __init__(self, model: str = "minilm") -> None:
        check_name("model", model, expected="an embedder name such as 'minilm'")
        self.model = model

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One normalised vector per text (``texts`` a list of strings; a str is refused)."""
        return common.embed_lists(self.model, texts)

    def embed_query(self, text: str) -> list[float]:
        """The vector of one query (the same model as the documents: MiniLM is symmetric)."""
        return common.embed_one(self.model, text)
