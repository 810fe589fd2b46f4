"""The shipped cross-encoder reranker: an int8 ONNX MiniLM-L6 fine-tuned on (query, passage) pairs.

The model (``ragsieve/models/reranker/``) reads ``[CLS] query [SEP] passage [SEP]`` and outputs one
relevance logit from the mean-pooled last hidden state; :meth:`OnnxCrossEncoder.score` returns
``sigmoid(logit)`` in [0, 1]. Pairs longer than ``max_length`` (128 word pieces, the training
length) are *truncated*, not windowed: the longer side (in practice the passage) loses tokens from
its end until the pair fits, so text past roughly 90 words of a passage is not seen. (256 was
measured too: worse on SQuAD, slightly better on QASPER, twice as slow.)

Loading is lazy (the first :meth:`score`) and guarded by a lock. Each pair runs alone by default
(:data:`DEFAULT_BATCH_SIZE`), two runs in flight (:func:`~ragsieve.embed.onnx.run_each`); scoring
is safe to call from several threads (onnxruntime sessions and ``tokenizers`` encoders are
thread-safe for inference).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.embed.onnx import OnnxModelFolder, cpu_session, run_each
from ragsieve.numeric import sigmoid as logistic

DEFAULT_MAX_LENGTH = 128
#: Pairs per model run. One: the int8 model quantises its activations per run, so in a padded
#: batch a pair's logit moved with its batch-mates and a pool's top three lost their order.
#: Alone, a pair's logit is a function of the pair, no farther from the fp32-activation model's,
#: and with two runs in flight a pool of ten scores faster (docs/reranker.md).
DEFAULT_BATCH_SIZE = 1
CONFIG_FILE = "reranker_config.json"


def shipped_model_dir() -> Path:
    """Folder of the packaged reranker (``model.onnx``, ``tokenizer.json``, ``MODEL_CARD.md``)."""
    return Path(str(resources.files("ragsieve") / "models" / "reranker"))


def load_tokenizer(path: str | Path, max_length: int) -> Any:
    """A ``tokenizers`` tokenizer that truncates pairs longest-first and pads to the batch."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length=max_length, strategy="longest_first")
    pad_id = tok.token_to_id("[PAD]")
    tok.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
    return tok


def encode_pairs(tokenizer: Any, pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
    """Token ids, attention mask and segment ids (int64) for ``(query, passage)`` pairs."""
    encs = tokenizer.encode_batch(pairs)
    return {
        "input_ids": np.asarray([e.ids for e in encs], dtype=np.int64),
        "attention_mask": np.asarray([e.attention_mask for e in encs], dtype=np.int64),
        "token_type_ids": np.asarray([e.type_ids for e in encs], dtype=np.int64),
    }


def sigmoid(x: np.ndarray) -> np.ndarray:
    return logistic(x).astype(np.float32)


class OnnxCrossEncoder(OnnxModelFolder):
    """Cross-encoder reranker running an ONNX model with onnxruntime on CPU.

    ``variant`` picks ``model.onnx`` (int8, shipped) or ``model_fp32.onnx`` (only in a training
    output folder); ``model_dir`` defaults to the packaged model.
    """

    what = "cross-encoder"
    trainer = "train-reranker"

    def __init__(
        self,
        model_dir: str | Path | None = None,
        variant: str = "int8",
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_length: int | None = None,
        threads: int | None = None,
    ) -> None:
        super().__init__(model_dir, variant, threads, shipped_model_dir())
        self.name = "cross-encoder" if variant == "int8" else f"cross-encoder-{variant}"
        self.batch_size = batch_size
        self._max_length = max_length
        self._tokenizer: Any = None

    def _config(self) -> dict[str, Any]:
        path = self.model_dir / CONFIG_FILE
        if not path.is_file():
            return {}
        return json.loads(path.read_text(encoding="utf-8"))

    def _open(self, model: Path, tokenizer: Path) -> Any:
        max_length = self._max_length or int(self._config().get("max_length", DEFAULT_MAX_LENGTH))
        self.max_length = max_length
        session = cpu_session(model, self.threads, self.what)
        self._inputs = {i.name for i in session.get_inputs()}
        self._tokenizer = load_tokenizer(tokenizer, max_length)
        return session

    def logits_pairs(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Raw relevance logits for ``(query, passage)`` pairs, in input order."""
        return self._logits(pairs, self.batch_size)

    def _logits(self, pairs: list[tuple[str, str]], batch_size: int) -> np.ndarray:
        """:meth:`logits_pairs` in runs of ``batch_size`` pairs (length-sorted), two in flight."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        self._load()
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        groups = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
        feeds = []
        for idx in groups:
            feed = encode_pairs(self._tokenizer, [pairs[i] for i in idx])
            feeds.append({k: v for k, v in feed.items() if k in self._inputs})
        out = np.zeros(len(pairs), dtype=np.float32)
        for idx, (logits,) in zip(groups, run_each(self._session, feeds), strict=True):
            out[idx] = np.asarray(logits, dtype=np.float32).reshape(len(idx))
        return out

    def logits(self, query: str, texts: list[str]) -> np.ndarray:
        return self.logits_pairs([(query, t) for t in texts])

    def score_pairs(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        return sigmoid(self.logits_pairs(pairs))

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        """``sigmoid(logit)`` in [0, 1] of each text against ``query``."""
        return sigmoid(self.logits(query, texts))

    def anchored(self, query: str, pool: Sequence[str]) -> PairwiseLogits:
        """One pair per model run, cached by its truncated input ids (see the class)."""
        return PairwiseLogits(self, query)


class PairwiseLogits:
    """A cross-encoder's logits for one query, one (query, text) pair per model run.

    The shipped model is int8 with *dynamic* quantisation: activation scales come from the whole
    batch, so a padded batch changes every member's logit (by up to 0.8 on real chunks). One
    pair per run makes a score a function of the text alone. Outputs are cached by the
    *truncated* token ids: two texts that agree within the model's window get the same input,
    hence the same score, and run once.
    """

    def __init__(self, ce: OnnxCrossEncoder, query: str) -> None:
        self.ce, self.query = ce, query
        self.cache: dict[Any, float] = {}

    def logits(self, texts: list[str]) -> tuple[np.ndarray, int]:
        ce = self.ce
        ce._load()
        keys = [tuple(ce._tokenizer.encode(self.query, t).ids) for t in texts]
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self.cache}
        # one pair a run whatever the encoder's batch size
        new = ce._logits([(self.query, t) for t in todo.values()], 1)
        self.cache.update(zip(todo, (float(z) for z in new), strict=True))
        return np.asarray([self.cache[k] for k in keys], dtype=np.float64), len(todo)

    def score(self, texts: list[str]) -> tuple[np.ndarray, int]:
        z, ran = self.logits(texts)
        return logistic(z), ran
