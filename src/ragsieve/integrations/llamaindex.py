"""LlamaIndex components: ragsieve's selection as a node postprocessor, a retriever over a
ragsieve index, and the packaged MiniLM as a LlamaIndex embedding model.

``pip install 'ragsieve[llamaindex]'`` (llama-index-core). Offline as long as no LLM is asked
for: pass ``embed_model=RagsieveEmbedding()`` to ``VectorStoreIndex`` (the default is
OpenAI's), and retrieve with ``index.as_retriever()`` (an ``as_query_engine()`` resolves
``Settings.llm``, OpenAI by default, to write the answer; ragsieve never calls it). The
default splitter's tokenizer and NLTK data ship inside llama-index-core.

>>> from llama_index.core import Document, VectorStoreIndex
>>> index = VectorStoreIndex.from_documents(
...     [Document(text="In 1822 Champollion announced the decipherment."),
...      Document(text="Bees dance.")], embed_model=RagsieveEmbedding())
>>> q = "When was it deciphered?"
>>> nodes = index.as_retriever(similarity_top_k=2).retrieve(q)
>>> kept = RagsievePostprocessor("full").postprocess_nodes(nodes, query_str=q)
>>> "1822" in kept[0].node.get_content()
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsieve.checks import check_name, check_text
from ragsieve.errors import InputError
from ragsieve.integrations import common
from ragsieve.pool import DEFAULT_METHOD, PoolResult

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import ValidationError
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import (
        MetadataMode,
        NodeRelationship,
        NodeWithScore,
        QueryBundle,
        TextNode,
    )
except ImportError as e:  # pragma: no cover - exercised without the extra
    raise common.MissingExtra("llamaindex", "llama-index-core") from e

__all__ = ["RagsieveEmbedding", "RagsievePostprocessor", "RagsieveRetriever"]


def _node(text: str, node_id: str, meta: dict[str, Any], hidden: list[str]) -> TextNode:
    """A TextNode whose ``ragsieve_*`` keys stay out of the LLM's and the embedder's text."""
    keys = [k for k in meta if k.startswith("ragsieve_")]
    return TextNode(
        text=text,
        id_=node_id,
        metadata=meta,
        excluded_llm_metadata_keys=sorted({*hidden, *keys}),
        excluded_embed_metadata_keys=sorted({*hidden, *keys}),
    )


class RagsievePostprocessor(common.SelectorOptions, BaseNodePostprocessor):
    """Keep only the evidence: a ragsieve method run on the nodes a retriever returned.

    Returns one ``NodeWithScore`` per selected sentence (or passage, as the method's unit is),
    in the method's context order: a ``TextNode`` with the source node's metadata plus
    ``ragsieve_score``, ``ragsieve_method``, ``ragsieve_start``/``ragsieve_end`` (offsets in
    the source node's text), ``ragsieve_chunk_id`` and ``ragsieve_where`` (its page or heading
    where the source's text has them, else ``""``; all hidden from the LLM), and a ``SOURCE``
    relationship to the source node. ``title_key`` names the metadata field read as a title.

    >>> from llama_index.core.schema import NodeWithScore, TextNode
    >>> pp = RagsievePostprocessor("tagger")
    >>> nodes = [NodeWithScore(node=TextNode(text="In 1822 Champollion announced it."))]
    >>> pp.postprocess_nodes(nodes, query_str="When?")[0].node.metadata["ragsieve_end"]
    33
    """

    def __init__(self, method: str = DEFAULT_METHOD, **kwargs: Any) -> None:
        check_name("method", method, expected="a method spec such as 'tagger' or 'full'")
        common.checked_init(
            super().__init__, "RagsievePostprocessor", ValidationError, method=method, **kwargs
        )
        self._selector = common.pool_selector(self)

    @classmethod
    def class_name(cls) -> str:
        return "RagsievePostprocessor"

    def select(self, nodes: list[NodeWithScore], query: str) -> PoolResult:
        """The raw selection for ``nodes`` (pieces, trace, timings), for provenance."""
        check_text("query_str", query)
        items = common.framework_items("nodes", nodes, NodeWithScore, "NodeWithScore")
        passages = [
            common.titled_passage(
                n.node.get_content(metadata_mode=MetadataMode.NONE), n.node.metadata, self.title_key
            )
            for n in items
        ]
        return self._selector.select(query, passages)

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise InputError(
                "RagsievePostprocessor needs the query: pass query_str (a string) or query_bundle"
            )
        if not isinstance(query_bundle, QueryBundle):
            raise InputError(
                f"query_bundle must be a QueryBundle, got {type(query_bundle).__name__}"
            )
        check_text("query_str", query_bundle.query_str)
        nodes = common.framework_items("nodes", nodes, NodeWithScore, "NodeWithScore")
        res = self.select(nodes, query_bundle.query_str)
        out = []
        for p in res.pieces:
            src = nodes[p.passage].node
            node = _node(
                p.text,
                p.chunk_id,
                {
                    **src.metadata,
                    **common.piece_meta(
                        p, res.method, src.get_content(metadata_mode=MetadataMode.NONE)
                    ),
                },
                list(src.excluded_llm_metadata_keys),
            )
            node.relationships[NodeRelationship.SOURCE] = src.as_related_node_info()
            out.append(NodeWithScore(node=node, score=p.score))
        return out


class RagsieveRetriever(BaseRetriever):
    """A ragsieve method over a ragsieve index (``ragsieve index DIR ...``) as a LlamaIndex
    retriever: one ``NodeWithScore`` per selected chunk (node id = chunk id), with ``doc_id``,
    ``title``, ``source`` and the ``ragsieve_*`` keys in its metadata.

    >>> import tempfile
    >>> from ragsieve import Document, Index
    >>> path = tempfile.mkdtemp() + "/index"
    >>> _ = Index.create(path).add([Document("stone", "Soldiers found the stone in 1799.")])
    >>> r = RagsieveRetriever(path, method="naive", k=1)
    >>> r.retrieve("Who found the stone?")[0].node.metadata["doc_id"]
    'stone'
    """

    def __init__(
        self,
        index: str | Path,
        method: str = DEFAULT_METHOD,
        *,
        k: int | None = None,
        budget: int | None = None,
        retriever: str | None = None,
        reranker: str | None = None,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        self._impl = common.IndexMethod(
            index, method, k=k, budget=budget, retriever=retriever, reranker=reranker
        )
        super().__init__(callback_manager=callback_manager)

    def retrieve(self, str_or_query_bundle: str | QueryBundle) -> list[NodeWithScore]:
        """The selected chunks for a query (a string or a QueryBundle), checked before
        LlamaIndex's own events read it."""
        q = str_or_query_bundle
        check_text("query", q.query_str if isinstance(q, QueryBundle) else q)
        return super().retrieve(q)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(node=_node(text, meta["ragsieve_chunk_id"], meta, []), score=score)
            for text, score, meta in self._impl.hits(query_bundle.query_str)
        ]


class RagsieveEmbedding(BaseEmbedding):
    """ragsieve's packaged all-MiniLM-L6-v2 (int8 ONNX, no torch, no download) as a
    LlamaIndex embedding model: ``VectorStoreIndex(..., embed_model=RagsieveEmbedding())``.

    >>> len(RagsieveEmbedding().get_query_embedding("hello"))
    384
    """

    model_name: str = "minilm"

    def __init__(self, **kwargs: Any) -> None:
        try:
            super().__init__(**kwargs)
        except ValidationError as e:
            raise common.config_error("RagsieveEmbedding", e) from None
        check_name("model_name", self.model_name, expected="an embedder name such as 'minilm'")

    @classmethod
    def class_name(cls) -> str:
        return "RagsieveEmbedding"

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return common.embed_lists(self.model_name, texts)

    def _get_text_embedding(self, text: str) -> list[float]:
        return common.embed_one(self.model_name, text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return common.embed_one(self.model_name, query, "query")

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embedding(text)
