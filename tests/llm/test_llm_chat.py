"""ChatModel: the one ``generate`` of the shipped backends, seen from a backend of its own (a
user's subclass: the base is meant to be subclassed)."""

from __future__ import annotations

import pytest

from ragsieve.llm import LLM
from ragsieve.llm.chat import ChatModel, ChatRequest
from ragsieve.types import Generation, Usage


class Echo(ChatModel):
    """Replies with the last message's content; keeps what it was asked."""

    name = "echo"

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []
        self.closed = False

    def _complete(self, request: ChatRequest) -> Generation:
        self.requests.append(request)
        return Generation(request.messages[-1]["content"], Usage(1, 1), "echo", "stop")

    def close(self) -> None:
        self.closed = True


def test_generate_packs_one_request_and_cuts_at_a_spelled_out_marker() -> None:
    llm = Echo()
    assert isinstance(llm, LLM)
    messages = [{"role": "user", "content": "Paris.<|im_end|><|im_start|>user\nmore"}]
    gen = llm.generate(messages)
    assert gen == Generation("Paris.", Usage(1, 1), "echo", "stop")
    llm.generate(messages, max_tokens=5, temperature=0.7, stop=["\n", "."])
    assert llm.requests == [
        ChatRequest(messages, 256, 0.0, ()),
        ChatRequest(messages, 5, 0.7, ("\n", ".")),
    ]
    with pytest.raises(AttributeError):  # frozen
        llm.requests[0].max_tokens = 9  # type: ignore[misc]


def test_with_closes_the_backend() -> None:
    with Echo() as llm:
        assert isinstance(llm, Echo) and not llm.closed
    assert llm.closed
