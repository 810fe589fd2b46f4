"""How the tagger reads a passage: ``[CLS] question [SEP] title: s1 s2 ... [SEP]``, cut into
windows of whole sentences that fit the encoder, with each word piece's sentence number.

One function serves training and inference, so the model is always read the way it was taught.
Sentences are tokenised one by one and concatenated (BERT's pre-tokeniser splits on spaces and
punctuation, so this equals tokenising the joined text) and a token's sentence is known
without character offsets. A window repeats the title, so that a later window of a long passage
still knows its subject; a sentence longer than a window is cut to fit (the model sees its head).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: Word pieces of the question kept (longer questions are cut from the end).
MAX_QUESTION_TOKENS = 64
#: Marks a word piece that belongs to no sentence ([CLS], the question, the title, [SEP], pad).
NO_SENTENCE = -1
#: Texts whose word pieces a :class:`PassageEncoder` remembers (a few questions' pools).
CACHE_TEXTS = 4096


def load_tokenizer(path: Path) -> Any:
    """The WordPiece tokenizer at ``path`` with its stored truncation and padding switched off
    (the MiniLM file pads every input to 128): :class:`PassageEncoder` cuts and pads itself."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return tok


@dataclass(frozen=True)
class Window:
    """One encoder input: its ids and, per word piece, the sentence it belongs to (an index
    into the passage's sentences, or ``NO_SENTENCE``)."""

    passage: int
    ids: list[int]
    type_ids: list[int]
    sentence_of: list[int]


def find_answer(
    window: Window, answer: Sequence[int], sentences: set[int]
) -> tuple[int, int] | None:
    """Word-piece positions ``(start, end)`` (inclusive) of the first occurrence of the answer's
    pieces ``answer`` inside one of ``sentences`` of ``window``: the span head's target. None
    when the window does not hold it there (a window cut before the answer sentence)."""
    n = len(answer)
    if not n:
        return None
    ids, sent = window.ids, window.sentence_of
    for i in range(len(ids) - n + 1):
        if sent[i] in sentences and sent[i + n - 1] == sent[i] and ids[i : i + n] == list(answer):
            return i, i + n - 1
    return None


class PassageEncoder:
    """Builds :class:`Window` s with a ``tokenizers`` WordPiece tokenizer (the MiniLM one)."""

    def __init__(self, tokenizer: Any, max_length: int) -> None:
        if max_length < MAX_QUESTION_TOKENS + 16:
            raise ValueError(f"max_length {max_length} leaves no room for a passage")
        self.tok = tokenizer
        self.max_length = max_length
        self.cls = tokenizer.token_to_id("[CLS]")
        self.sep = tokenizer.token_to_id("[SEP]")
        self.pad = tokenizer.token_to_id("[PAD]") or 0
        self._cache: dict[str, list[int]] = {}
        self._lock = threading.Lock()

    def _ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids of ``texts``, the ones not seen lately in one tokenizer batch. The
        bridge hop reads the same passages again with a longer question, so the second hop
        finds every sentence here (a cache of the last ``CACHE_TEXTS`` texts)."""
        with self._lock:  # one encoder serves a server's threads
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            fresh = self.tok.encode_batch(todo, add_special_tokens=False) if todo else []
            found = {t: e.ids for t, e in zip(todo, fresh, strict=True)}
            found.update((t, self._cache[t]) for t in texts if t not in found)
            self._cache.update(found)
            while len(self._cache) > CACHE_TEXTS:  # the oldest go first
                self._cache.pop(next(iter(self._cache)))
        return [found[t] for t in texts]

    def windows(self, question: str, passages: Sequence[tuple[str, Sequence[str]]]) -> list[Window]:
        """Windows of every ``(title, sentences)`` passage, in passage order (every text of
        the call tokenised in one batch)."""
        titles = [f"{title}:" if title.strip() else "" for title, _ in passages]
        texts = [question, *(t for t in titles if t), *(s for _, ss in passages for s in ss)]
        ids = dict(zip(texts, self._ids(texts), strict=True))
        return self.windows_from_ids(
            ids[question],
            [
                (ids[t] if t else [], [ids[s] for s in sentences])
                for t, (_, sentences) in zip(titles, passages, strict=True)
            ],
        )

    def windows_from_ids(
        self,
        question: Sequence[int],
        passages: Sequence[tuple[Sequence[int], Sequence[Sequence[int]]]],
    ) -> list[Window]:
        """:meth:`windows` from word-piece ids already computed (the question's, and each
        passage's title ids and sentence ids): training tokenises every distinct text once,
        in one batch, and builds the same windows as inference."""
        head = [self.cls, *list(question)[:MAX_QUESTION_TOKENS], self.sep]
        out: list[Window] = []
        for p, (title_ids, sentence_ids) in enumerate(passages):
            room = self.max_length - len(head) - 1
            t = list(title_ids)[: room // 4]
            room -= len(t)
            ids: list[int] = []
            sent_of: list[int] = []
            for i, s in enumerate(sentence_ids):
                s = list(s)[:room]
                if ids and len(ids) + len(s) > room:
                    out.append(self._window(p, head, t, ids, sent_of))
                    ids, sent_of = [], []
                ids += s
                sent_of += [i] * len(s)
            if ids or not out or out[-1].passage != p:
                out.append(self._window(p, head, t, ids, sent_of))
        return out

    def _window(
        self, p: int, head: list[int], title: list[int], ids: list[int], sent_of: list[int]
    ) -> Window:
        body = [*title, *ids, self.sep]
        return Window(
            passage=p,
            ids=[*head, *body],
            type_ids=[0] * len(head) + [1] * len(body),
            sentence_of=[NO_SENTENCE] * (len(head) + len(title)) + sent_of + [NO_SENTENCE],
        )

    def batch(self, windows: Sequence[Window]) -> dict[str, np.ndarray]:
        """Padded int64 arrays (``input_ids``, ``attention_mask``, ``token_type_ids``) and the
        ``sentence_of`` map (``NO_SENTENCE`` on padding)."""
        n = max(len(w.ids) for w in windows)
        ids = np.full((len(windows), n), self.pad, dtype=np.int64)
        mask = np.zeros((len(windows), n), dtype=np.int64)
        types = np.zeros((len(windows), n), dtype=np.int64)
        sent = np.full((len(windows), n), NO_SENTENCE, dtype=np.int64)
        for i, w in enumerate(windows):
            k = len(w.ids)
            ids[i, :k], mask[i, :k], types[i, :k], sent[i, :k] = (
                w.ids,
                1,
                w.type_ids,
                w.sentence_of,
            )
        return {
            "input_ids": ids,
            "attention_mask": mask,
            "token_type_ids": types,
            "sentence_of": sent,
        }
