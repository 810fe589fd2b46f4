"""What the framework adapters share: the ``ragsieve_*`` metadata of a selected piece, the
checks of what a framework hands over, the embedder as plain float lists, the
:class:`~ragsieve.pool.PoolSelector` of a selection adapter, and :class:`IndexMethod` (a
method over a ragsieve index) for the index retrievers. Imports no framework."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, PrivateAttr

from ragsieve.checks import (
    check_list,
    check_name,
    check_path,
    check_run,
    check_text,
    check_texts,
    describe,
)
from ragsieve.defaults import DEFAULT_METHOD
from ragsieve.embed import index_embedder
from ragsieve.errors import ConfigError, InputError
from ragsieve.formats import locate
from ragsieve.pool import Passage, Piece, PoolSelector

#: Metadata keys every integration writes on a selected piece.
META_KEYS = (
    "ragsieve_score",
    "ragsieve_method",
    "ragsieve_start",
    "ragsieve_end",
    "ragsieve_chunk_id",
    "ragsieve_where",
)


#: The run options of :class:`IndexMethod`, which an index retriever holds as attributes.
RUN_OPTIONS = ("k", "budget", "retriever", "reranker")
#: The options of :class:`~ragsieve.pool.PoolSelector` (beside the method), which a selection
#: adapter (compressor, postprocessor, ranker) holds as attributes.
POOL_OPTIONS = ("budget", "k", "retriever", "reranker", "index_dir", "embedder")


class MissingExtra(ConfigError, ImportError):
    """The framework of an integration is not installed; the message says what to install.

    Both a :class:`ConfigError` (one line, like every ragsieve error) and an ImportError (what
    code that probes for optional modules catches)."""

    def __init__(self, extra: str, module: str) -> None:
        super().__init__(
            f"ragsieve.integrations.{extra} needs {module}: pip install 'ragsieve[{extra}]'"
        )


def piece_meta(piece: Piece, method: str, source: str | None = None) -> dict[str, Any]:
    """The ``ragsieve_*`` metadata of a selected piece: where it sits in its source text
    (``text == source[start:end]``), its score, the method spec that chose it, and
    ``ragsieve_where``: its page or heading in ``source`` (:func:`ragsieve.formats.locate`:
    ``page 3`` after form feeds, the Markdown heading above it), ``""`` when ``source`` has
    neither or is not given."""
    return {
        "ragsieve_score": piece.score,
        "ragsieve_method": method,
        "ragsieve_start": piece.start,
        "ragsieve_end": piece.end,
        "ragsieve_chunk_id": piece.chunk_id,
        "ragsieve_where": locate(source, piece.start, piece.end) if source else "",
    }


def titled_passage(text: str, meta: Mapping[str, Any], title_key: str | None) -> Passage:
    """A framework document as a :class:`Passage`: its text, and its ``title_key`` metadata
    field as the title (the reranker and the tagger read ``title: sentence``)."""
    title = meta.get(title_key) if title_key and isinstance(meta, Mapping) else None
    return Passage(text, str(title or ""))


def framework_items(name: str, value: Any, kind: type, what: str) -> list[Any]:
    """``value`` (what a framework handed over: documents, nodes) as a list of ``kind``;
    anything else is refused by position, in one line."""
    items = check_list(name, value, of=what)
    for i, item in enumerate(items):
        if not isinstance(item, kind):
            raise InputError(
                f"{name}[{i}] must be a {kind.__module__.split('.')[0]} {kind.__name__}, "
                f"got {describe(item)}"
            )
    return items


def embed_lists(model: str, texts: Sequence[str], name: str = "texts") -> list[list[float]]:
    """The index build of ``model`` (the int8 MiniLM for ``minilm``) on ``texts``, as the
    plain float lists the frameworks' embedding interfaces return; the model loads on first
    use, once per process. ``texts`` must be a list of strings (empty ones embed too)."""
    check_name("model", model, expected="an embedder name such as 'minilm'")
    items = check_texts(name, texts)
    if not items:
        return []
    return index_embedder(model).embed(items).tolist()


def embed_one(model: str, text: str, name: str = "text") -> list[float]:
    """One text's vector (a query's or a document's), checked as :func:`embed_lists` does."""
    check_text(name, text, empty_ok=True)
    return embed_lists(model, [text], name)[0]


def check_options(options: Mapping[str, Any]) -> None:
    """An adapter's keyword options, before pydantic reads them: its lax mode would take
    ``k=True`` for 1 and ``index=5`` for a path."""
    check_run({k: options[k] for k in ("k", "budget", "retriever", "reranker") if k in options})
    if "index" in options:  # required: None is a mistake too
        check_path("index", options["index"])
    if options.get("index_dir") is not None:
        check_path("index_dir", options["index_dir"])


def config_error(owner: str, e: Exception) -> ConfigError:
    """A framework's pydantic ``ValidationError`` on ``owner``'s options as one line: the
    first field, what it needs and what it got."""
    errors = getattr(e, "errors", None)
    first = errors()[0] if callable(errors) and errors() else {}
    loc = first.get("loc", ())
    field = str(loc[0]) if loc else "an option"  # not the union branch pydantic tried
    msg = str(first.get("msg", "is not valid")).rstrip(".")
    got = describe(first["input"]) if "input" in first else "?"
    return ConfigError(f"{owner}: {field}: {msg[:1].lower()}{msg[1:]}, got {got}")


def checked_init(
    init: Callable[..., None], owner: str, error: type[Exception], **options: Any
) -> None:
    """A framework model's pydantic ``init(**options)`` after :func:`check_options`, its
    validation ``error`` as one line (:func:`config_error`) naming ``owner``."""
    check_options(options)
    try:
        init(**options)
    except error as e:
        raise config_error(owner, e) from None


class SelectorOptions(BaseModel):
    """The options of a selection adapter that is a pydantic model (LangChain's compressor,
    LlamaIndex's postprocessor), declared once: the method spec, the options of its
    :class:`~ragsieve.pool.PoolSelector` and the metadata field read as a title. An adapter
    names it first among its bases, so that the framework's own fields come first."""

    method: str = DEFAULT_METHOD
    budget: int | None = None
    k: int | None = None
    retriever: str | None = None
    reranker: str | None = None
    index_dir: str | Path | None = None
    embedder: str = "minilm"
    title_key: str | None = "title"
    _selector: PoolSelector = PrivateAttr()

    @property
    def selector(self) -> PoolSelector:
        """The :class:`~ragsieve.pool.PoolSelector` underneath (its working index)."""
        return self._selector

    def close(self) -> None:
        """Delete the temporary working index now (else at garbage collection)."""
        self._selector.close()


class IndexMethod:
    """A method over an existing ragsieve index, for the frameworks' index retrievers.

    Opens ``index`` (``ragsieve index ...`` built it) and builds ``method`` once; :meth:`hits`
    returns each selected chunk's text, score and metadata (``doc_id``, ``title``, ``source``
    and the ``ragsieve_*`` keys, offsets into the indexed document's text). Thread-safe.
    Each call first picks up what ``ragsieve index`` committed since (one manifest read), as
    ``serve`` does: a long-lived chain sees documents added after it was built.
    """

    def __init__(self, index: str | Path, method: str = DEFAULT_METHOD, **run: Any) -> None:
        """``run``: the method's run options, by keyword (:data:`RUN_OPTIONS`; None: the
        method's default)."""
        from ragsieve.index import Index
        from ragsieve.methods import MethodSpec, build_method, check_spec

        unknown = sorted(set(run) - set(RUN_OPTIONS))
        if unknown:
            raise TypeError(f"IndexMethod() got an unexpected keyword argument {unknown[0]!r}")
        run = {key: run.get(key) for key in RUN_OPTIONS}
        if not isinstance(method, MethodSpec):
            check_name("method", method, expected="a method spec such as 'naive' or 'tagger'")
        check_run(run)
        check_path("index", index)
        self.spec = check_spec(method, **run)
        self.index = Index.open(index)
        self.method = build_method(self.spec, self.index, **run)
        self._lock = threading.Lock()

    def hits(self, question: str) -> list[tuple[str, float, dict[str, Any]]]:
        """``(text, score, metadata)`` of each chunk the method selects, in context order."""
        check_text("query", question)
        with self._lock:  # a method's models and caches serve one call at a time
            self.index.reload()
            r = self.method.retrieve([question])[0]
        docs: dict[str, Any] = {}
        out = []
        for s in r.context.chunks:
            c = s.chunk
            if c.doc_id not in docs:
                docs[c.doc_id] = self.index.get_document(c.doc_id)
            doc = docs[c.doc_id]
            piece = Piece(c.text, float(s.score), 0, c.start, c.end, c.id, c.doc_id)
            meta = {
                "doc_id": c.doc_id,
                "title": c.title,
                "source": doc.source if doc is not None else "",
                **piece_meta(piece, self.spec.label, doc.text if doc is not None else None),
            }
            out.append((c.text, float(s.score), meta))
        return out


def pool_selector(adapter: Any) -> PoolSelector:
    """The :class:`~ragsieve.pool.PoolSelector` of a selection adapter, from its ``method``
    and :data:`POOL_OPTIONS` attributes."""
    return PoolSelector(adapter.method, **{key: getattr(adapter, key) for key in POOL_OPTIONS})


def index_method(adapter: Any) -> IndexMethod:
    """The :class:`IndexMethod` of an index retriever, from its ``index``, ``method`` and
    :data:`RUN_OPTIONS` attributes."""
    run = {key: getattr(adapter, key) for key in RUN_OPTIONS}
    return IndexMethod(adapter.index, adapter.method, **run)
