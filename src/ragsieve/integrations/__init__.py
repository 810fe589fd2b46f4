"""ragsieve inside LangChain, LlamaIndex and Haystack (docs/integrations.md).

One module per framework, each importing its framework when it is imported itself: this
package imports none of them, and neither does ``import ragsieve``.

- :mod:`ragsieve.integrations.langchain`: ``RagsieveCompressor`` (for
  ``ContextualCompressionRetriever``), ``RagsieveRetriever``, ``RagsieveEmbeddings``;
- :mod:`ragsieve.integrations.llamaindex`: ``RagsievePostprocessor``, ``RagsieveRetriever``,
  ``RagsieveEmbedding``;
- :mod:`ragsieve.integrations.haystack`: the ``RagsieveRanker`` and ``RagsieveRetriever``
  components.

Each compressor/postprocessor/ranker runs a ragsieve method on the documents the framework's
own retriever returned, through :class:`ragsieve.pool.PoolSelector`; what the three share is
in :mod:`ragsieve.integrations.common`.
"""

from ragsieve.integrations.common import META_KEYS, IndexMethod, MissingExtra

__all__ = ["META_KEYS", "IndexMethod", "MissingExtra"]
