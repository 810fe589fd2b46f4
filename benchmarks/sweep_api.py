"""Issue 45's bad-input cases: api (run by bad_input_sweep.py --issue45).

Every public Python entry point (``search``, ``ask``, ``prune``, ``rerank``, ``Index``,
``IndexConfig``, ``PoolSelector``) and the LangChain, LlamaIndex and Haystack adapters, called
with arguments of the wrong type or value. A case passes when the call raises a ragsieve error
whose one line names the argument (exit 2), never a traceback; a silent accept (a string
pruned character by character, ``budget=True``) returns normally, exits 0 and fails. The
checks fire before any model loads, so each case costs an import. A few valid edge cases
(empty lists, a tuple of passages) must still work (exit 0, checked output).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bad_input_sweep import Case

HEAD = (
    "from ragsieve import Index, IndexConfig, ask, prune, rerank, search\n"
    "Q = 'When did Champollion announce the decipherment?'\n"
    "T = 'In 1822 Champollion announced the decipherment of the hieroglyphs.'\n"
)
#: An LLM file that does not exist: an ``ask`` check that fired after the model load would
#: show its error instead of the argument's.
NO_LLM = "llm='local:/nonexistent/model.gguf'"


def _api(name: str, call: str, fragment: str, expect: int = 2, area: str = "api45") -> Case:
    return Case(area, name, [], expect, python=HEAD + call, fragment=fragment)


def _printed(want: str) -> Callable[[Path, Path, str], str]:
    """A check that the case printed exactly ``want`` (a valid edge case's result)."""

    def check(tmp: Path, idx: Path, stdout: str) -> str:
        got = stdout.strip()
        return "" if got == want else f"printed {got[:60]!r}, expected {want!r}"

    return check


# fmt: off
def _api_cases() -> list[Case]:
    ix = 'Index.open("{idx}")'
    p = [
        # prune: the question, the passages, every option
        ("prune-passages-none", "prune(Q, None)", "passages must be a list"),
        ("prune-question-int", "prune(123, [T])", "question must be a string, got int 123"),
        ("prune-question-bytes", "prune(b'q', [T])", "question must be a string, got bytes"),
        ("prune-3-tuple", "prune(Q, [('a', 'b', 'c')])", "passages[0] must be a string or a"),
        ("prune-pair-of-int", "prune(Q, [('title', 5)])", "passages[0] must be a string or a"),
        ("prune-list-pair", "prune(Q, [['title', T]])", "passages[0] must be a string or a"),
        ("prune-question-surrogate", "prune('\\ud800', [T])", "question holds a lone surrogate"),
        ("prune-passage-surrogate", "prune(Q, [T, 'x \\ud800.'])", "passages[1] holds a lone"),
        ("prune-title-surrogate", "prune(Q, [('\\udcff', T)])", "passages[0] holds a lone"),
        ("prune-question-empty", "prune('', [T])", "question is empty"),
        ("prune-question-blank", "prune(' \\n\\t ', [T])", "question is empty"),
        ("prune-a-str", "prune(Q, 'a string')", "not a str"),
        ("prune-a-dict", "prune(Q, {'t': T})", "passages must be a list"),
        ("prune-a-set", "prune(Q, {T})", "not a set"),
        ("prune-budget-true", "prune(Q, [T], budget=True)", "budget must be a positive integer"),
        ("prune-budget-0", "prune(Q, [T], budget=0)", "budget must be a positive integer"),
        ("prune-budget-float", "prune(Q, [T], budget=2.5)", "budget must be a positive integer"),
        ("prune-rate-true", "prune(Q, [T], rate=True)", "rate must be a real number in (0, 1]"),
        ("prune-rate-0", "prune(Q, [T], rate=0)", "rate must be a real number in (0, 1]"),
        ("prune-rate-2", "prune(Q, [T], rate=2)", "rate must be a real number in (0, 1]"),
        ("prune-rate-str", "prune(Q, [T], rate='0.5')", "rate must be a real number"),
        ("prune-rate-inf", "prune(Q, [T], rate=float('inf'))", "rate must be a real number"),
        ("prune-min-keep-neg", "prune(Q, [T], min_keep=-5)", "min_keep must be an integer >= 0"),
        ("prune-min-keep-true", "prune(Q, [T], min_keep=True)", "min_keep must be an integer"),
        ("prune-min-keep-float", "prune(Q, [T], min_keep=1.5)", "min_keep must be an integer"),
        ("prune-hops-3", "prune(Q, [T], hops=3)", "hops must be an integer in [1, 2]"),
        ("prune-hops-true", "prune(Q, [T], hops=True)", "hops must be an integer in [1, 2]"),
        ("prune-threshold-2", "prune(Q, [T], threshold=2)", "threshold must be in"),
        ("prune-threshold-true", "prune(Q, [T], threshold=True)", "threshold must be in"),
        ("prune-model-int", "prune(Q, [T], model=5)", "model must be a tagger folder"),
        ("prune-stack-str", "prune(Q, [T], stack='yes')", "stack must be true or false"),
        # search
        ("search-k-0", f"search(Q, {ix}, k=0)", "k must be an integer in [1,"),
        ("search-k-neg", f"search(Q, {ix}, k=-3)", "k must be an integer in [1,"),
        ("search-k-float", f"search(Q, {ix}, k=2.5)", "got float 2.5"),
        ("search-k-true", f"search(Q, {ix}, k=True)", "got True (a bool)"),
        ("search-k-huge", f"search(Q, {ix}, k=2**70)", "k must be an integer in [1,"),
        ("search-query-none", f"search(None, {ix})", "query must be a string, got None"),
        ("search-query-blank", f"search('   ', {ix})", "query is empty"),
        ("search-query-surrogate", f"search('\\ud800', {ix})", "query holds a lone surrogate"),
        ("search-index-none", "search(Q, None)", "index must be an Index or the path"),
        ("search-index-int", "search(Q, 5)", "index must be an Index or the path"),
        ("search-retriever-int", f"search(Q, {ix}, retriever=5)", "retriever must be"),
        ("search-reranker-int", f"search(Q, {ix}, reranker=5)", "reranker must be"),
        # ask: checked before the index opens and before the LLM loads
        ("ask-question-int", f"ask(123, '{{idx}}', {NO_LLM})", "question must be a string"),
        ("ask-question-empty", f"ask('', '{{idx}}', {NO_LLM})", "question is empty"),
        ("ask-question-surrogate", f"ask('\\udcff?', '{{idx}}', {NO_LLM})", "lone surrogate"),
        ("ask-method-int", f"ask(Q, '{{idx}}', method=5, {NO_LLM})", "method must be"),
        ("ask-llm-int", "ask(Q, '{idx}', llm=5)", "llm must be an LLM spec string"),
        ("ask-options-str", f"ask(Q, '{{idx}}', options='abc', {NO_LLM})", "options must be a"),
        ("ask-k-true", f"ask(Q, '{{idx}}', k=True, {NO_LLM})", "k must be an integer"),
        ("ask-k-0", f"ask(Q, '{{idx}}', k=0, {NO_LLM})", "k must be an integer"),
        ("ask-budget-float", f"ask(Q, '{{idx}}', budget=9.5, {NO_LLM})", "budget must be"),
        ("ask-total-budget-true", f"ask(Q, '{{idx}}', total_budget=True, {NO_LLM})", "total_b"),
        ("ask-max-tokens-0", f"ask(Q, '{{idx}}', max_tokens=0, {NO_LLM})", "max_tokens must"),
        ("ask-llm-ctx-str", f"ask(Q, '{{idx}}', llm_ctx='4096', {NO_LLM})", "llm_ctx must"),
        ("ask-index-none", f"ask(Q, None, {NO_LLM})", "index must be an Index or the path"),
        # rerank
        ("rerank-passages-none", "rerank(Q, None)", "passages must be a list of strings"),
        ("rerank-passages-str", "rerank(Q, 'one string')", "not a str"),
        ("rerank-passage-none", "rerank(Q, [T, None])", "passages[1] must be a string"),
        ("rerank-passage-surrogate", "rerank(Q, ['\\ud800'])", "passages[0] holds a lone"),
        ("rerank-query-int", "rerank(7, [T])", "query must be a string, got int 7"),
        ("rerank-top-k-0", "rerank(Q, [T], top_k=0)", "top_k must be a positive integer"),
        ("rerank-top-k-true", "rerank(Q, [T], top_k=True)", "top_k must be a positive integer"),
        ("rerank-top-k-float", "rerank(Q, [T], top_k=1.5)", "top_k must be a positive integer"),
        ("rerank-model-int", "rerank(Q, [T], model=5)", "model must be a reranker name"),
        # Index and IndexConfig
        ("index-open-none", "Index.open(None)", "path must be a str or a pathlib.Path"),
        ("index-open-int", "Index.open(5)", "path must be a str or a pathlib.Path"),
        ("index-open-empty", "Index.open('')", "path must be a non-empty path"),
        ("index-open-nul", "Index.open('/tmp/a\\x00b')", "path holds a NUL character"),
        ("index-ooc-none", "Index.open_or_create(None)", "path must be a str"),
        ("index-ooc-config-str", "Index.open_or_create('{idx}', 'fixed')", "config must be"),
        ("index-create-config-dict", "Index.create('{tmp}/new', {'chunker': 1})", "config must"),
        ("index-add-paths-str", f"{ix}.add_paths('{{tmp}}')", "paths must be a list of paths"),
        ("index-add-paths-none", f"{ix}.add_paths(None)", "paths must be a list of paths"),
        ("index-add-paths-int", f"{ix}.add_paths([5])", "paths[0] must be a str"),
        ("index-add-none", f"{ix}.add(None)", "docs must be a list of Documents"),
        ("index-add-str", f"{ix}.add(['some text'])", "docs[0] must be a ragsieve Document"),
        ("index-add-bad-id", f"from ragsieve import Document\n{ix}.add([Document(5, 'text')])",
            "docs[0].id must be a string"),
        ("config-chunker-int", "IndexConfig(chunker=5)", "chunker must be a chunker name"),
        ("config-embedder-none", "IndexConfig(embedder=None)", "embedder must be"),
        ("config-alpha-str", "IndexConfig(alpha='x', sentences=True)", "alpha must be a real"),
        ("config-links-true", "IndexConfig(links=True)", "links must be an integer >= 0"),
        ("config-link-distance-0", "IndexConfig(link_distance=0)", "link_distance must be"),
    ]
    out = [_api(n, call, frag) for n, call, frag in p]
    # Valid edge cases: empty lists are empty results, a tuple or generator is a list.
    ok = [
        ("prune-empty-list", "print(len(prune(Q, [])))", "0"),
        ("rerank-empty-list", "print(len(rerank(Q, [])))", "0"),
        ("prune-generator", "print(any('1822' in k.text for k in prune(Q, (t for t in [T]))))",
            "True"),
        ("rerank-tuple", "print([r.index for r in rerank(Q, ('Bees dance.', T))])", "[1, 0]"),
    ]
    for name, call, want in ok:
        case = _api(name, call, "", expect=0)
        case.check = _printed(want)
        out.append(case)
    return out
# fmt: on


# fmt: off
def _pool_cases() -> list[Case]:
    head = "from ragsieve.pool import Passage, PoolSelector\n" + HEAD
    rows = [
        ("pool-passages-none", "PoolSelector().select(Q, None)", "passages must be a list"),
        ("pool-passages-str", "PoolSelector().select(Q, 'abc')", "not a str"),
        ("pool-one-passage", "PoolSelector().select(Q, Passage(T))", "not a Passage"),
        ("pool-passage-none", "PoolSelector().select(Q, [T, None])", "passages[1] must be"),
        ("pool-passage-text-int", "PoolSelector().select(Q, [Passage(5)])", "passages[0].text"),
        ("pool-passage-surrogate", "PoolSelector().select(Q, ['\\ud800'])", "lone surrogate"),
        ("pool-question-none", "PoolSelector().select(None, [T])", "question must be a string"),
        ("pool-question-blank", "PoolSelector().select('  ', [T])", "question is empty"),
        ("pool-budget-true", "PoolSelector(budget=True)", "budget must be a positive integer"),
        ("pool-k-0", "PoolSelector('naive', k=0)", "k must be an integer in [1,"),
        ("pool-index-dir-int", "PoolSelector('naive', index_dir=5)", "index_dir must be a str"),
        ("pool-embedder-int", "PoolSelector('naive', embedder=5)", "embedder must be"),
        ("pool-method-int", "PoolSelector(5)", "method must be a method spec"),
    ]
    return [Case("api45", n, [], 2, python=head + call, fragment=frag) for n, call, frag in rows]
# fmt: on


# fmt: off
def _adapter_cases() -> list[Case]:
    lc = (
        "from langchain_core.documents import Document\n"
        "from ragsieve.integrations.langchain import RagsieveCompressor, RagsieveEmbeddings, "
        "RagsieveRetriever\n"
    )
    li = (
        "from llama_index.core.schema import NodeWithScore, TextNode\n"
        "from ragsieve.integrations.llamaindex import RagsieveEmbedding, "
        "RagsievePostprocessor, RagsieveRetriever\n"
        "N = [NodeWithScore(node=TextNode(text=T))]\n"
    )
    hs = (
        "from haystack import Document\n"
        "from ragsieve.integrations.haystack import RagsieveRanker, RagsieveRetriever\n"
    )
    rows = [
        (lc, "lc-embed-documents-none-item", "RagsieveEmbeddings().embed_documents([None])",
            "texts[0] must be a string"),
        (lc, "lc-embed-documents-str", "RagsieveEmbeddings().embed_documents('abc')",
            "texts must be a list of strings, not a str"),
        (lc, "lc-embed-query-none", "RagsieveEmbeddings().embed_query(None)",
            "text must be a string"),
        (lc, "lc-embed-query-surrogate", "RagsieveEmbeddings().embed_query('\\ud800')",
            "lone surrogate"),
        (lc, "lc-embeddings-model-int", "RagsieveEmbeddings(5)", "model must be an embedder name"),
        (lc, "lc-compress-query-none",
            "RagsieveCompressor().compress_documents([Document(T)], None)",
            "query must be a string"),
        (lc, "lc-compress-query-blank",
            "RagsieveCompressor().compress_documents([Document(T)], ' ')", "query is empty"),
        (lc, "lc-compress-docs-none", "RagsieveCompressor().compress_documents(None, Q)",
            "documents must be a list"),
        (lc, "lc-compress-docs-str", "RagsieveCompressor().compress_documents('abc', Q)",
            "not a str"),
        (lc, "lc-compress-doc-str", "RagsieveCompressor().compress_documents([T], Q)",
            "documents[0] must be a"),
        (lc, "lc-compressor-budget-true", "RagsieveCompressor(budget=True)",
            "budget must be a positive integer"),
        (lc, "lc-compressor-budget-str", "RagsieveCompressor(budget='x')", "budget must be"),
        (lc, "lc-compressor-method-int", "RagsieveCompressor(5)", "method must be"),
        (lc, "lc-retriever-index-none", "RagsieveRetriever(index=None)", "index must be a str"),
        (lc, "lc-retriever-k-true", "RagsieveRetriever(index='{idx}', k=True)", "k must be"),
        (lc, "lc-retriever-query-none", "RagsieveRetriever(index='{idx}').invoke(None)",
            "query must be a string"),
        (li, "li-postprocess-query-none",
            "RagsievePostprocessor().postprocess_nodes(N, query_str=None)", "needs the query"),
        (li, "li-postprocess-query-missing", "RagsievePostprocessor().postprocess_nodes(N)",
            "needs the query"),
        (li, "li-postprocess-query-blank",
            "RagsievePostprocessor().postprocess_nodes(N, query_str='')", "query_str is empty"),
        (li, "li-postprocess-query-int",
            "RagsievePostprocessor().postprocess_nodes(N, query_str=5)",
            "query_str must be a string"),
        (li, "li-postprocess-nodes-none",
            "RagsievePostprocessor().postprocess_nodes(None, query_str=Q)", "nodes must be a list"),
        (li, "li-postprocess-textnode",
            "RagsievePostprocessor().postprocess_nodes([N[0].node], query_str=Q)",
            "nodes[0] must be a"),
        (li, "li-postprocessor-budget-str", "RagsievePostprocessor(budget='x')", "budget must be"),
        (li, "li-embedding-none-item", "RagsieveEmbedding().get_text_embedding_batch([None])",
            "texts[0] must be a string"),
        (li, "li-embedding-query-none", "RagsieveEmbedding().get_query_embedding(None)",
            "query must be a string"),
        (li, "li-embedding-model-int", "RagsieveEmbedding(model_name=5)", "model_name"),
        (li, "li-retriever-query-none", "RagsieveRetriever('{idx}').retrieve(None)",
            "query must be a string"),
        (hs, "hs-ranker-query-none", "RagsieveRanker().run(None, [Document(content=T)])",
            "query must be a string"),
        (hs, "hs-ranker-query-blank", "RagsieveRanker().run(' ', [Document(content=T)])",
            "query is empty"),
        (hs, "hs-ranker-docs-str", "RagsieveRanker().run(Q, 'abc')", "documents must be a list"),
        (hs, "hs-ranker-docs-none", "RagsieveRanker().run(Q, None)", "documents must be a list"),
        (hs, "hs-ranker-doc-str", "RagsieveRanker().run(Q, [T])", "documents[0] must be a"),
        (hs, "hs-ranker-budget-true", "RagsieveRanker(budget=True)", "budget must be"),
        (hs, "hs-ranker-index-dir-int", "RagsieveRanker('full', index_dir=5)", "index_dir must be"),
        (hs, "hs-retriever-index-none", "RagsieveRetriever(index=None)", "index must be a str"),
        (hs, "hs-retriever-query-none", "RagsieveRetriever(index='{idx}').run(None)",
            "query must be a string"),
    ]
    out = [
        Case("adapters45", n, [], 2, python=HEAD + imp + call, fragment=frag)
        for imp, n, call, frag in rows
    ]
    # A Haystack Document without text (a blob) is an empty passage: nothing to select.
    none = Case(
        "adapters45",
        "hs-ranker-content-none",
        [],
        0,
        python=HEAD + hs + "print(RagsieveRanker().run(Q, [Document(content=None)]))",
        check=_printed("{'documents': []}"),
    )
    return [*out, none]
# fmt: on


def cases() -> list[Case]:
    return [*_api_cases(), *_pool_cases(), *_adapter_cases()]
