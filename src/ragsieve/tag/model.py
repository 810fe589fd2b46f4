"""The shipped evidence tagger: an int8 ONNX MiniLM-L6 that reads a question with a passage and
returns, in one forward pass, a keep probability for every sentence and a passage relevance.

Loading is lazy (the first :meth:`OnnxTagger.tag`) and guarded by a lock. All windows of one
call run in length-sorted batches (one window each by default), two runs in flight
(:func:`~ragsieve.embed.onnx.run_each`). A passage read in several windows (longer than
``max_length``) gets each sentence's probability from the window that holds it and the best
window's relevance.

A folder whose graph has the span head's output (``span_logits``, :mod:`ragsieve.tag.span`)
also gets each sentence's best answer span from the same run (:class:`SpanTagged`); older
folders read as before. A sentence without words (:func:`ragsieve.text.has_words`: a page
number, a table rule, a code fence alone) is layout, never evidence: it is read with its
neighbours (the model's input does not change) and gets probability 0 and no span.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ragsieve.embed.onnx import OnnxModelFolder, cpu_session, model_files, run_each
from ragsieve.numeric import sigmoid
from ragsieve.tag.encode import NO_SENTENCE, PassageEncoder, load_tokenizer
from ragsieve.tag.span import SPAN_OUTPUT, SentenceSpan, SpanTagged, best_spans, char_span
from ragsieve.tag.stack import Stacker, load_stacker
from ragsieve.tag.verdict import Passage, Tagged
from ragsieve.text import has_words

CONFIG_FILE = "tagger_config.json"
DEFAULT_MAX_LENGTH = 256
DEFAULT_THRESHOLD = 0.1
#: Passage rejection is off for a model whose config names no passage threshold (the models
#: trained before the passage head learned from whole-passage negatives).
DEFAULT_PASSAGE_THRESHOLD = 0.0


def shipped_model_dir() -> Path:
    return Path(str(resources.files("ragsieve") / "models" / "tagger"))


def shipped_model_present() -> bool:
    return all(path.is_file() for path in model_files(shipped_model_dir()))


_HEADING = re.compile(r"^\s*#{1,6}\s")


def is_heading(sentence: str) -> bool:
    """A markdown heading line, which the sentence splitter keeps as its own sentence."""
    return bool(_HEADING.match(sentence))


#: Windows per model run. One: the int8 model is dynamically quantised (activation scales
#: from the whole batch, padding included), so in a batch a passage's tags depended on the
#: other passages of its pool. One window per run makes a passage's tags a function of the
#: question and the passage, and reads no padding, which takes less time per hop
#: (docs/speed.md, "Settings and their reasons").
DEFAULT_BATCH_SIZE = 1


class OnnxTagger(OnnxModelFolder):
    """Evidence tagger on onnxruntime (CPU). ``model_dir`` defaults to the packaged model;
    ``variant`` picks ``model.onnx`` (int8) or ``model_fp32.onnx`` (a training folder);
    ``batch_size`` is windows per model run (:data:`DEFAULT_BATCH_SIZE`); ``pooled`` also
    returns each passage's pooled hidden state (:attr:`Tagged.pooled`), for
    ``ragsieve.tag.fit.head``."""

    name = "tagger"
    what = "tagger"
    trainer = "train-tagger"

    def __init__(
        self,
        model_dir: str | Path | None = None,
        variant: str = "int8",
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
        pooled: bool = False,
    ) -> None:
        super().__init__(model_dir, variant, threads, shipped_model_dir())
        self.batch_size = batch_size
        self.pooled = pooled
        self._outputs: list[str] = []
        self._pooled_name = ""
        self._encoder: PassageEncoder | None = None
        self._stacker: Stacker | None = None
        self.config: dict[str, Any] = {}

    @property
    def threshold(self) -> float:
        """The model's threshold on its raw keep probability (chosen on its dev split at
        training): the keep rule without a stacker, and the bridge hop's sentences with one."""
        self._load()
        return float(self.config.get("threshold", DEFAULT_THRESHOLD))

    @property
    def passage_threshold(self) -> float:
        """The passage relevance below which a passage contributes no sentence (chosen with
        ``threshold`` on the dev split; 0: no rejection)."""
        self._load()
        return float(self.config.get("passage_threshold", DEFAULT_PASSAGE_THRESHOLD))

    @property
    def stacker(self) -> Stacker | None:
        """The folder's stacked keep decision (``stack.json``), which ``prune`` uses by
        default where present; :attr:`threshold` then only picks the bridge hop's sentences."""
        self._load()
        return self._stacker

    def _open(self, model: Path, tokenizer: Path) -> Any:
        conf = self.model_dir / CONFIG_FILE
        self.config = json.loads(conf.read_text("utf-8")) if conf.is_file() else {}
        outputs = ["token_logits", "passage_logit"]
        if self.pooled:
            from ragsieve.tag.graph import with_pooled_output

            graph, name = with_pooled_output(model)
            session = cpu_session(graph, self.threads, self.what)
            outputs.append(name)
            self._pooled_name = name
        else:
            session = cpu_session(model, self.threads, self.what)
        if any(o.name == SPAN_OUTPUT for o in session.get_outputs()):
            outputs.append(SPAN_OUTPUT)
        self._outputs = outputs
        max_length = int(self.config.get("max_length", DEFAULT_MAX_LENGTH))
        self._encoder = PassageEncoder(load_tokenizer(tokenizer), max_length)
        self._stacker = load_stacker(self.model_dir)
        return session

    @property
    def has_span(self) -> bool:
        """Whether the folder's graph has the span head (``span_logits``)."""
        self._load()
        return SPAN_OUTPUT in self._outputs

    def span_chars(self, sentence: str, span: SentenceSpan) -> tuple[int, int]:
        """``(start, end)`` characters of ``span`` in ``sentence`` (the sentence tokenised
        again alone, with offsets: only the chosen span's sentence pays for it)."""
        self._load()
        assert self._encoder is not None
        return char_span(self._encoder.tok, sentence, span.first, span.last)

    def tag(self, question: str, passages: Sequence[Passage]) -> list[Tagged]:
        """Keep probabilities and relevance for each passage, read with ``question`` (and each
        sentence's best span: :class:`SpanTagged`, where the folder has a span head).

        Markdown headings (``## Decipherment``) are structure, not evidence, and no training
        passage has them: they are left out of the model's input and get probability 0 (read
        with one, the sample corpus's answer sentence fell from 0.54 to 0.25). A sentence
        without words is read but gets probability 0 (layout, :func:`ragsieve.text.has_words`)."""
        if not passages:
            return []
        self._load()
        assert self._encoder is not None
        enc = self._encoder
        body = [[i for i, s in enumerate(sents) if not is_heading(s)] for _, sents in passages]
        inner = [(t, [sents[i] for i in b]) for (t, sents), b in zip(passages, body, strict=True)]
        tagged = self._tag(enc, question, inner)
        out: list[Tagged] = []
        for (_, sents), b, t in zip(passages, body, tagged, strict=True):
            probs = np.zeros(len(sents), dtype=np.float64)
            probs[b] = t.probs
            junk = [i for i, s in enumerate(sents) if not has_words(str(s))]
            probs[junk] = 0.0
            if isinstance(t, SpanTagged):
                spans: list[SentenceSpan | None] = [None] * len(sents)
                for i, sp in zip(b, t.spans, strict=True):
                    spans[i] = sp
                for i in junk:
                    spans[i] = None
                out.append(SpanTagged(probs, t.relevance, t.pooled, tuple(spans)))
            else:
                out.append(Tagged(probs, t.relevance, t.pooled))
        return out

    def _tag(self, enc: PassageEncoder, question: str, passages: Sequence[Passage]) -> list[Tagged]:
        windows = enc.windows(question, passages)
        probs = [np.zeros(len(s), dtype=np.float64) for _, s in passages]
        rel = np.zeros(len(passages), dtype=np.float64)
        pooled: list[np.ndarray | None] = [None] * len(passages)
        with_span = SPAN_OUTPUT in self._outputs
        null = bool(self.config.get("span_null", False))  # [CLS] is "no answer" for this head
        spans: list[list[SentenceSpan | None]] = [[None] * len(s) for _, s in passages]
        order = sorted(range(len(windows)), key=lambda i: len(windows[i].ids))
        groups = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        arrays = [enc.batch([windows[i] for i in idx]) for idx in groups]
        feeds = [
            {k: a[k] for k in ("input_ids", "attention_mask", "token_type_ids")} for a in arrays
        ]
        for idx, arr, outs in zip(
            groups, arrays, run_each(self._session, feeds, self._outputs), strict=True
        ):
            got = dict(zip(self._outputs, outs, strict=True))
            tok_logits, p_logits = got["token_logits"], got["passage_logit"]
            hidden = got.get(self._pooled_name)
            for row, wi in enumerate(idx):
                w = windows[wi]
                sent = arr["sentence_of"][row]
                logits = np.asarray(tok_logits[row], dtype=np.float64)
                for s in {int(x) for x in sent if x != NO_SENTENCE}:
                    probs[w.passage][s] = float(sigmoid(logits[sent == s].mean()))
                r = float(sigmoid(p_logits[row]))
                if hidden is not None and (pooled[w.passage] is None or r > rel[w.passage]):
                    pooled[w.passage] = np.asarray(hidden[row], dtype=np.float32)
                rel[w.passage] = max(rel[w.passage], r)
                if with_span:
                    found = best_spans(np.asarray(got[SPAN_OUTPUT][row]), sent, null=null)
                    for s, sp in found.items():
                        spans[w.passage][s] = sp
        if with_span:
            return [
                SpanTagged(p, float(r), v, tuple(sp))
                for p, r, v, sp in zip(probs, rel, pooled, spans, strict=True)
            ]
        return [Tagged(p, float(r), v) for p, r, v in zip(probs, rel, pooled, strict=True)]
