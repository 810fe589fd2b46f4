"""The control strings of the chat-template families we know (ChatML, Llama-3, Gemma, Mistral
and Phi), and where a reply or an answer line must end because one appears.

Document text and questions are data: the local readers tokenize them with special-token
parsing off (:mod:`ragsieve.llm.local`), so ``<|im_end|>`` in a passage is the text "<|im_end|>"
to the model, never the end of a turn. A reply may still spell one out (the model saw the text
in its context); the reply stops there and the answer line never shows one.
"""

from __future__ import annotations

import re

#: Per family, the strings its chat template uses as its own markers.
CONTROL_STRINGS: dict[str, tuple[str, ...]] = {
    "chatml": ("<|im_start|>", "<|im_end|>", "<|endoftext|>"),
    "llama3": (
        "<|begin_of_text|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eot_id|>",
        "<|end_of_text|>",
    ),
    "gemma": ("<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>"),
    "mistral": ("[INST]", "[/INST]", "<s>", "</s>"),
    "phi": ("<|system|>", "<|user|>", "<|assistant|>", "<|end|>"),
}

#: Every control string, longest first (so that a longer marker wins over its prefix).
ALL_CONTROL = tuple(sorted({s for ss in CONTROL_STRINGS.values() for s in ss}, key=len)[::-1])

_CONTROL = re.compile("|".join(re.escape(s) for s in ALL_CONTROL))


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control string of any known family."""
    return _CONTROL.search(text) is not None


def cut_at_control(text: str) -> str:
    """``text`` up to its first control string: a reply that spells out the end of its turn
    ends there."""
    m = _CONTROL.search(text)
    return text if m is None else text[: m.start()]


def without_control(text: str) -> str:
    """``text`` with every control string taken out (an answer line taken from a document's
    span: the span's words stay, its markers go), outer whitespace stripped."""
    return " ".join(_CONTROL.sub(" ", text).split()) if has_control(text) else text
