"""In-process GGUF models through llama.cpp (the ``xllamacpp`` binding).

Why xllamacpp: it ships prebuilt CPU wheels (``llama-cpp-python`` compiles for ~9 minutes here)
and wraps llama.cpp's own C++ server engine: the model's built-in chat template (jinja),
OpenAI-shaped ``usage`` and ``logprobs``. The engine is thread-safe; we still serialise
generation with a lock so that per-call timings and the KV cache stay predictable.

Document text is text: llama.cpp's chat endpoint renders the template with the messages in it
and tokenizes the whole prompt with special-token parsing on, so a passage holding
``<|im_end|>`` would close the user's turn. We render the template around placeholders
instead, tokenize the template's own pieces with special parsing on and every message's
content with it off, and complete from those token ids (:meth:`LlamaCppLLM.prompt_tokens`).

Note: an xllamacpp ``Server`` always also listens on a random 127.0.0.1 port. We lock that
listener with a random API key so that other local users cannot borrow the model; the template
and tokenizer calls go to it with that key (the binding has no call for them).

Model files: :mod:`ragsieve.llm.gguf`.
"""

from __future__ import annotations

import math
import os
import re
import secrets
import threading
from collections.abc import Iterable
from typing import Any

from ragsieve.errors import ConfigError, LLMError
from ragsieve.llm.chat import ChatModel, ChatRequest
from ragsieve.llm.control import ALL_CONTROL
from ragsieve.llm.gguf import check_gguf
from ragsieve.llm.prompts import is_answer_prompt
from ragsieve.types import Generation, Usage

DEFAULT_N_CTX = 4096

#: The loop guard (:func:`loop_cut`): a reply that ends in a unit repeated back to back, where
#: the repeats after its first copy cover at least one more copy and this many characters, is
#: cut after the first copy and stops. 32 characters is about 8 tokens of the same phrase, e.g.
#: "2.5x100k = " three times more; no reply that stops by itself does that (module tests).
LOOP_MIN_CHARS = 32
#: The longest unit (characters) the guard looks for: about two sentences.
LOOP_MAX_PERIOD = 200

# Token texts (stripped, lower-cased) that count as a positive / negative verdict when scoring
# the first answer token; "1"/"0" cover SAKI-RAG's binary judge prompt.
YES_TOKENS: tuple[str, ...] = ("yes", "1", "true")
NO_TOKENS: tuple[str, ...] = ("no", "0", "false")


# --------------------------------------------------------------------------- the backend


def default_threads() -> int:
    """``$RAGSIEVE_LLM_THREADS`` if set, else the CPUs this process may run on (the affinity
    mask, which respects container/cgroup pinning, else ``os.cpu_count()``)."""
    env = os.environ.get("RAGSIEVE_LLM_THREADS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n < 1:
            raise ConfigError(f"RAGSIEVE_LLM_THREADS must be a positive integer, got {env!r}")
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def prefer_passive_openmp() -> None:
    """Make llama.cpp's OpenMP threads sleep, not spin, while they wait at barriers.

    ggml synchronises its threads with OpenMP barriers that busy-wait by default. On a shared
    or oversubscribed machine (2 cores, tests and benchmarks running beside us) the spinning
    threads steal each other's time slices: measured here under load, SmolLM2 fell from ~40 to
    2-10 tokens/s and its warm-up took 10 s instead of 1 s; with ``OMP_WAIT_POLICY=PASSIVE`` it
    kept 28-38 tokens/s. libgomp reads the variable once, when it is first loaded, so this must
    run before ``xllamacpp`` (or torch, which loads the same ``libgomp.so.1``) is imported; a
    value the user set wins.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def loop_cut(
    text: str, *, min_chars: int = LOOP_MIN_CHARS, max_period: int = LOOP_MAX_PERIOD
) -> int | None:
    """Where to cut ``text`` if it ends in a loop, else None.

    A loop is a unit of 1 to ``max_period`` characters repeated back to back up to the end of
    ``text``, whose repeats after the first copy cover at least one whole copy and at least
    ``min_chars`` characters ("2.5x100k = 2.5x100k = 2.5x100k = 2.5x100k = 2.5x"). The cut
    keeps everything before the loop and its first copy. Shortest unit first, so a run of one
    character is cut after that character. Checked after every streamed token, so it reads only
    the tail: O(max_period x repeat length).
    """
    n = len(text)
    for period in range(1, min(max_period, n // 2) + 1):
        repeat = 0  # characters equal to the one a period earlier, counted back from the end
        while repeat < n - period and text[n - 1 - repeat] == text[n - 1 - repeat - period]:
            repeat += 1
        if repeat >= period and repeat >= min_chars:
            return n - repeat
    return None


def _one_line(text: object, limit: int = 200) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


class _LoopGuardedStream:
    """The callback of a streamed llama.cpp chat completion: gathers the reply and its token
    counts, and returns True (stop) once the reply ends in a loop (``loops``), its first line
    with text has ended (``one_line``) or the engine reports an error. It never raises:
    xllamacpp swallows a callback's exception, so errors are kept for the caller."""

    def __init__(self, *, loops: bool = True, one_line: bool = False) -> None:
        self.loops = loops
        self.one_line = one_line
        self.text = ""
        self.finish_reason = ""
        self.cut: int | None = None
        self.ended = False  # stopped at the end of the first line
        self.error: object = None
        self._usage: dict[str, Any] | None = None
        self._timings: dict[str, Any] | None = None

    def __call__(self, chunk: object) -> bool:
        try:
            return self._take(chunk)
        except Exception as exc:  # reported by the caller: never raised into llama.cpp
            self.error = f"unreadable stream chunk: {exc}"
            return True

    def _take(self, chunk: object) -> bool:
        if not isinstance(chunk, dict):
            self.error = f"stream chunk is {type(chunk).__name__}, not a dict"
            return True
        if "error" in chunk or {"code", "message"} <= chunk.keys():
            self.error = chunk.get("error", chunk)
            return True
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        if chunk.get("timings"):
            self._timings = chunk["timings"]
        grew = False
        for choice in chunk.get("choices") or ():
            # A completion's chunk has ``text``; a chat completion's a ``delta``.
            content = choice.get("text") or (choice.get("delta") or {}).get("content")
            if content:
                self.text += content
                grew = True
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        if not grew:
            return False
        if self.one_line and self.text.strip():
            end = self.text.find("\n", len(self.text) - len(self.text.lstrip()))
            if end >= 0:  # the first line with text has ended
                self.text, self.ended = self.text[:end], True
                self.finish_reason = "stop"
                return True
        if self.loops:
            self.cut = loop_cut(self.text)
            if self.cut is not None:
                self.text = self.text[: self.cut]
                self.finish_reason = "loop"
                return True
        return False

    def usage(self) -> Usage | None:
        """Prompt and completion tokens: the final chunk's usage, or for a reply stopped early
        the counts in its last chunk's timings (prompt = cached + evaluated tokens)."""
        if self._usage is not None and self.cut is None and not self.ended:
            return Usage(int(self._usage["prompt_tokens"]), int(self._usage["completion_tokens"]))
        t = self._timings
        if t is None:
            return None
        return Usage(int(t.get("cache_n", 0)) + int(t["prompt_n"]), int(t["predicted_n"]))


class LlamaCppLLM(ChatModel):
    """A GGUF chat model run in this process by llama.cpp (via ``xllamacpp``).

    The model loads lazily on the first call, once, so constructing the object (e.g. while
    parsing a config) costs nothing. ``temperature=0`` means greedy decoding; for
    ``temperature>0`` the fixed ``seed`` keeps runs reproducible. ``loop_guard`` stops a reply
    that loops and ``short_answer`` ends an answer at its first line (a small model's
    answer looped to the 256-token cap); both are on by default (see :meth:`_complete`).

    ``cache_prompt`` (off by default) lets llama.cpp reuse the KV cache of the previous prompt's
    common prefix. A reused prefix is evaluated in other batches than a fresh one, and the last
    logits move enough to change a greedy reply: with it on, the same prompt asked again could
    get another reply, and a reply depended on the prompt before it. Off, a reply depends on its
    prompt alone, at the cost of reading every prompt's start again (docs/llm.md, "The same
    question, the same reply")."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        seed: int = 0,
        verbose: bool = False,
        name: str | None = None,
        loop_guard: bool = True,
        short_answer: bool = True,
        span_first: bool = False,
        cache_prompt: bool = False,
    ) -> None:
        if n_ctx < 16:
            raise ConfigError(f"n_ctx must be at least 16, got {n_ctx}")
        if n_threads is not None and n_threads < 1:
            raise ConfigError(f"n_threads must be at least 1, got {n_threads}")
        self.model_path = check_gguf(model_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.seed = seed
        self.verbose = verbose
        self.name = name or f"local:{self.model_path}"
        self.loop_guard = loop_guard
        self.short_answer = short_answer
        #: The tagger's answer span, where sure, is the answer line instead of this reader's
        #: reply (on for the packaged readers, measured weaker than the span: docs/llm.md).
        self.span_first = span_first
        self.cache_prompt = cache_prompt
        #: Replies the loop guard stopped (finish_reason "loop") since this object was made.
        self.loops_stopped = 0
        self._server: Any = None
        self._client: Any = None  # HTTP to the server's own listener: template, tokenizer
        self._load_lock = threading.Lock()
        self._gen_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LlamaCppLLM({str(self.model_path)!r}, n_ctx={self.n_ctx})"

    @property
    def loaded(self) -> bool:
        return self._server is not None

    def load(self) -> None:
        """Load the model now (otherwise the first ``generate`` does it)."""
        self._engine()

    def _engine(self) -> Any:
        if self._server is not None:
            return self._server
        with self._load_lock:
            if self._server is None:
                self._server = self._start()
        return self._server

    def _start(self) -> Any:
        prefer_passive_openmp()
        try:
            import xllamacpp
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise ConfigError("the local LLM needs xllamacpp: run `pip install xllamacpp`") from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(self.model_path)
        params.n_ctx = self.n_ctx
        params.n_parallel = 1  # one slot gets the whole context window
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads
        params.n_threads_http = 1
        params.hostnames = ["127.0.0.1"]
        key = secrets.token_urlsafe(24)
        params.api_keys = [key]
        params.sampling.seed = self.seed
        params.verbosity = 3 if self.verbose else -1
        try:
            server = xllamacpp.Server(params)
        except (RuntimeError, ValueError) as exc:
            raise LLMError(
                f"llama.cpp could not load {self.model_path.name} (n_ctx={self.n_ctx}): "
                f"{_one_line(exc)}; rerun with verbose=True for the llama.cpp log"
            ) from exc
        import httpx

        self._client = httpx.Client(
            base_url=str(server.listening_address),
            headers={"Authorization": f"Bearer {key}"},
            timeout=httpx.Timeout(600.0, connect=30.0),
            trust_env=False,  # never through a proxy: the listener is this process's own
        )
        return server

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        """One call to the engine's own listener (``/apply-template``, ``/tokenize``)."""
        self._engine()
        try:
            r = self._client.post(path, json=body)
            r.raise_for_status()
            return r.json()
        except Exception as exc:  # httpx's errors, a bad JSON body: one line
            raise LLMError(f"local LLM {self.name}: {path} failed: {_one_line(exc)}") from exc

    def tokenize(self, text: str, *, special: bool, add_special: bool = False) -> list[int]:
        """``text`` as this model's token ids; ``special``: its control strings as special tokens
        (the chat template's own pieces) or as text (everything a user or a document wrote)."""
        if not text and not add_special:
            return []
        body = {"content": text, "add_special": add_special, "parse_special": special}
        tokens = self._post("/tokenize", body).get("tokens")
        if not isinstance(tokens, list) or not all(isinstance(t, int) for t in tokens):
            raise LLMError(f"local LLM {self.name}: /tokenize returned no token ids")
        return tokens

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        """The chat prompt of ``messages`` as token ids, document text kept as text.

        The model's chat template is rendered around a random placeholder per message; the
        template's own pieces are tokenized with special-token parsing on (they hold its
        markers: ``<|im_start|>``, ``<|eot_id|>``...), and each message's content with it off,
        so a control string inside a passage or a question costs exactly its text's tokens.
        The first piece gets the model's BOS where it wants one, as the chat endpoint does."""
        nonce = secrets.token_hex(8)
        marks = [f"@@ragsieve-{nonce}-{i}@@" for i in range(len(messages))]
        shown = [{**m, "content": mark} for m, mark in zip(messages, marks, strict=True)]
        prompt = self._post("/apply-template", {"messages": shown}).get("prompt")
        if not isinstance(prompt, str):
            raise LLMError(f"local LLM {self.name}: /apply-template returned no prompt")
        content = {
            mark: str(m.get("content") or "") for m, mark in zip(messages, marks, strict=True)
        }
        pieces = re.split(f"(@@ragsieve-{nonce}-[0-9]+@@)", prompt)
        tokens: list[int] = []
        for i, piece in enumerate(pieces):
            if i % 2:  # a placeholder: the message's content, as text
                tokens += self.tokenize(content[piece], special=False)
            else:
                tokens += self.tokenize(piece, special=True, add_special=i == 0)
        return tokens

    def _chat(
        self, request: dict[str, Any], stream: _LoopGuardedStream | None = None
    ) -> dict[str, Any]:
        """One completion of a chat (``request["messages"]``, tokenized by
        :meth:`prompt_tokens`) under the generation lock: its result, or with ``stream`` the
        reply streamed into it (the result is then empty). An engine error is one LLMError."""
        server = self._engine()
        body = {k: v for k, v in request.items() if k != "messages"}
        body["prompt"] = self.prompt_tokens(request["messages"])
        body["cache_prompt"] = self.cache_prompt  # off: the reply depends on this prompt alone
        with self._gen_lock:
            try:
                if stream is None:
                    result = server.handle_completions(body)
                else:
                    server.handle_completions(body, stream)
                    result = {"error": stream.error} if stream.error is not None else {}
            except (RuntimeError, ValueError, TypeError) as exc:
                raise LLMError(f"local LLM {self.name} failed: {_one_line(exc)}") from exc
        if not isinstance(result, dict):
            raise LLMError(f"local LLM {self.name} returned {type(result).__name__}, not a dict")
        if "error" in result:
            err = result["error"]
            msg = err.get("message", err) if isinstance(err, dict) else err
            hint = "; raise n_ctx or send less context" if "context" in str(msg) else ""
            raise LLMError(f"local LLM {self.name} failed: {_one_line(msg)}{hint}")
        return result

    def _complete(self, request: ChatRequest) -> Generation:
        """Chat completion with the model's own chat template.

        With ``loop_guard`` (the default) the reply is streamed and checked after every token:
        a reply that ends in a loop (:func:`loop_cut`) stops there, keeps the text before the
        loop and one copy of its unit, and has ``finish_reason`` "loop". With ``short_answer``
        (the default) a reply to an answer prompt (:func:`~ragsieve.llm.prompts.is_answer_prompt`)
        given no ``stop`` ends at its first line break after some text, ``finish_reason``
        "stop". Otherwise the reply is the same text, tokens and usage as without them (greedy
        decoding either way).
        """
        body: dict[str, Any] = {
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "seed": self.seed,
        }
        if request.temperature <= 0:
            body["top_k"] = 1
        # A reply that spells out a chat marker (it saw one as text in a passage) ends there.
        body["stop"] = [*request.stop, *ALL_CONTROL]
        line = self.short_answer and not request.stop and is_answer_prompt(request.messages)
        if self.loop_guard or line:
            return self._generate_guarded(body, one_line=line)
        result = self._chat(body)
        try:
            choice = result["choices"][0]
            usage = result.get("usage") or {}
            return Generation(
                text=choice.get("text") or "",
                usage=Usage(int(usage["prompt_tokens"]), int(usage["completion_tokens"])),
                model=self.model_path.name,
                finish_reason=str(choice.get("finish_reason") or ""),
            )
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise LLMError(
                f"local LLM {self.name} returned an unexpected result shape: {_one_line(exc)}"
            ) from exc

    def _generate_guarded(self, request: dict[str, Any], *, one_line: bool) -> Generation:
        """Stream the reply, stopping it when it loops or, with ``one_line``, at the end of its
        first line (see :meth:`_complete`)."""
        stream = _LoopGuardedStream(loops=self.loop_guard, one_line=one_line)
        self._chat(
            {
                **request,
                "stream": True,
                "stream_options": {"include_usage": True},
                "timings_per_token": True,  # token counts in every chunk, for a reply cut short
            },
            stream,
        )
        usage = stream.usage()
        if usage is None:
            raise LLMError(f"local LLM {self.name} streamed no token counts")
        if stream.cut is not None:
            self.loops_stopped += 1
        return Generation(
            text=stream.text,
            usage=usage,
            model=self.model_path.name,
            finish_reason=stream.finish_reason,
        )

    def next_token_logprobs(
        self, messages: list[dict[str, str]], top: int = 20
    ) -> dict[str, float]:
        """Log-probabilities of the ``top`` likeliest first answer tokens (text -> logprob).

        Read from llama.cpp's full pre-sampling distribution over the vocabulary, so one prompt
        pass and one decoded token cost the same as a 1-token generation.
        """
        result = self._chat(
            {
                "messages": messages,
                "max_tokens": 1,
                "temperature": 0.0,
                "top_k": 1,
                "seed": self.seed,
                "logprobs": top,  # a completion's form: the top candidates per token
            }
        )
        try:
            entries = result["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            out: dict[str, float] = {}
            for e in entries:
                token, lp = str(e["token"]), float(e["logprob"])
                out[token] = max(lp, out.get(token, -math.inf))
            return out
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise LLMError(f"local LLM {self.name} returned no logprobs: {_one_line(exc)}") from exc

    def yes_probability(
        self,
        messages: list[dict[str, str]],
        *,
        yes: Iterable[str] = YES_TOKENS,
        no: Iterable[str] = NO_TOKENS,
        top: int = 20,
    ) -> float:
        """P(yes) / (P(yes) + P(no)) for the first answer token, for an LLM relevance judge.

        Token variants (" Yes", "yes", "YES") are pooled by stripped lower-case text. When
        neither verdict is among the ``top`` candidates the model has no opinion: 0.5.
        """
        yes_set = {t.strip().lower() for t in yes}
        no_set = {t.strip().lower() for t in no}
        p_yes = p_no = 0.0
        for token, lp in self.next_token_logprobs(messages, top=top).items():
            key = token.strip().lower()
            if key in yes_set:
                p_yes += math.exp(lp)
            elif key in no_set:
                p_no += math.exp(lp)
        total = p_yes + p_no
        return 0.5 if total <= 0.0 else p_yes / total

    def close(self) -> None:
        """Free the model and its HTTP listener; a later call loads it again."""
        with self._load_lock, self._gen_lock:
            if self._client is not None:
                self._client.close()
            self._server = self._client = None
