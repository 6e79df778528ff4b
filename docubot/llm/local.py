"""The embedded default chat model: Qwen2.5-Coder-1.5B-Instruct (GGUF) run by llama-cpp-python.

Output is constrained by the request's JSON schema (a grammar), so it always parses; except a
reply of one string that the request lets go free (`free_string`: an answer's translation,
`{"resposta": "…"}`), whose opening is written into the prompt and whose string the model writes
without a grammar, mended and ended at its first quote not escaped as the grammar would have
(`json_string.py`): on 2 cores the grammar costs about 20 ms a token (56 against 35 ms), and the
opening seven tokens more. The model object is kept per process, and so is its KV cache: the
blocks a prompt shares with the last one (the system prompt at least) are not evaluated again.

The same prompt gets the same answer whatever the process asked before it. llama.cpp's logits
depend on how a prompt was cut into batches (by up to 0.4 on this model), so the cache is reused
only in whole blocks, each evaluated on its own, and every call samples from the same seed. A block
is a message, or its two parts when it has a blank line: the instructions before the first one
(the same in every translation request of a pair of languages) and the text after.

The KV cache holds one prompt, and DocuBot's calls take turns (a question translated into Catalan,
into Spanish, from Spanish into Catalan, then an answer's opening and its rest into the asked
language), so the cache alone would keep only their shared system prompt. The sequence state after
each block but a prompt's last is saved (up to `SAVED_TOKENS` long and `SAVED_BYTES` in all, the
least recently used dropped) and restored when a prompt opens with the same blocks: a restored
state gives the logits a fresh evaluation gives, bit for bit, without evaluating the instructions
again.

A request's `avoid` words are never written: the tokens that spell one whole get a logit bias
of -100, except a token that begins a longer word of the user's message (a name to copy).
"""

from __future__ import annotations

import atexit
import ctypes
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docubot.llm.base import (
    EMBEDDED_PROVIDER,
    ChatRequest,
    ContextWindowError,
    ProviderError,
    StreamEvent,
    Usage,
)
from docubot.llm.json_string import StringContent
from docubot.llm.model_file import local_model_path

SAMPLING_SEED = 0
BANNED = -100.0
"""The logit bias of a token the request avoids: never sampled."""
SAVED_BYTES = 256 * 2**20
"""The memory the saved prompt states may take, per loaded model (about 28 KiB a token: a
translation request's instructions take 2 to 4 MiB)."""
SAVED_TOKENS = 1024
"""The longest prefix saved: a system prompt and a request's instructions (the answering system
prompt is about 460 tokens), not a conversation's turns, which no other prompt opens with."""
_WORD = re.compile(r"[^\W\d_][\w'’·-]*")
# Qwen2.5's chat template (ChatML), one message
_MESSAGE = "<|im_start|>{role}\n{content}<|im_end|>\n"
_BLANK_LINE = "\n\n"
_REPLY = "<|im_start|>assistant\n"
"""What opens the model's reply (the prompt llama-cpp-python's chat completion ends with)."""
_END = "<|im_end|>"
_OPENING = '{{ "{field}": "'
"""How a reply of one string opens: as the model opens it under the grammar, a space after the brace."""

Block = tuple[int, ...]


@dataclass
class _Loaded:
    """A loaded model, the lock its generations take, the blocks its KV cache holds and the states
    saved of prompt prefixes."""

    llama: Any
    bindings: Any
    """The llama_cpp module: the calls that save and restore a sequence's state."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    cached: list[Block] = field(default_factory=list)
    saved: OrderedDict[tuple[Block, ...], bytes] = field(default_factory=OrderedDict)
    """The sequence state after each prompt prefix saved, least recently used first."""


_models: dict[tuple[str, int, int], _Loaded] = {}
_models_lock = threading.Lock()


class LocalModel:
    """llama.cpp in-process; one generation at a time per loaded model, whichever object asks."""

    def __init__(
        self,
        model_dir: Path,
        context_window: int = 4096,
        threads: int = 2,
        saved_bytes: int = SAVED_BYTES,
        string_grammar: bool = False,
    ) -> None:
        """`saved_bytes`: the memory the saved prompt states may take (0: none saved or restored,
        the baseline of bench/answer.py). `string_grammar`: a reply of one string constrained by
        the grammar even when the request lets it go free, as every reply was (the baseline of
        bench/translation.py)."""
        self.path = local_model_path(model_dir)
        self.saved_bytes = saved_bytes
        self.string_grammar = string_grammar
        self.name = f"{EMBEDDED_PROVIDER}/qwen2.5-coder-1.5b-instruct-q4_k_m"
        self.context_window = context_window
        self._loaded = _load(self.path, context_window, threads)
        self._llama = self._loaded.llama

    def count_tokens(self, text: str) -> int:
        return len(self._tokenize(text))

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        messages = [{"role": "system", "content": request.system}]
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        field = _one_string(request.json_schema) if request.free_string and not self.string_grammar else None
        kwargs: dict[str, Any] = {}
        if request.avoid:
            banned = self._word_tokens(request.avoid) - self._word_beginnings(messages[-1]["content"])
            kwargs["logit_bias"] = dict.fromkeys(banned, BANNED)
        with self._loaded.lock:
            prompt_tokens = self._prompt_tokens(messages)
            if prompt_tokens + request.max_tokens > self.context_window:
                raise ContextWindowError(
                    f"prompt of {prompt_tokens} tokens + {request.max_tokens} for the answer exceeds "
                    f"the {self.context_window}-token window"
                )
            try:
                prompt = self._evaluate_messages(messages)
                if field is not None:
                    pieces = self._string_reply(prompt, field, request, kwargs)
                else:
                    pieces = self._chat_reply(messages, request, kwargs)
                output = 0
                for text in pieces:
                    output += 1
                    yield StreamEvent(text=text)
            except ValueError as exc:
                raise ProviderError(f"local model failed: {exc}") from exc
        yield StreamEvent(usage=Usage(prompt_tokens, output))

    def _chat_reply(
        self, messages: list[dict[str, str]], request: ChatRequest, kwargs: dict[str, Any]
    ) -> Iterator[str]:
        """The reply's pieces, constrained by the request's JSON schema (a grammar) when it has one."""
        if request.json_schema is not None:
            kwargs = kwargs | {"response_format": {"type": "json_object", "schema": request.json_schema}}
        chunks = self._llama.create_chat_completion(
            messages=messages,
            stream=True,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            seed=SAMPLING_SEED,
            **kwargs,
        )
        for chunk in chunks:
            if text := chunk["choices"][0]["delta"].get("content") or "":
                yield text

    def _string_reply(
        self, prompt: list[int], field: str, request: ChatRequest, kwargs: dict[str, Any]
    ) -> Iterator[str]:
        """The pieces of the reply `{"field": "…"}`: its opening, written into the prompt, then
        the string the model writes after it, without a grammar, up to its first quote not
        escaped or the end of the reply. A reply cut by `max_tokens` (the opening counted) is
        left open, as the grammar left it: it does not parse, so a translation cut short is never
        taken for a whole one."""
        opening = _OPENING.format(field=field)
        opened = prompt + self._tokenize(_REPLY + opening)
        content = StringContent()
        yield opening
        chunks = self._llama.create_completion(
            prompt=opened,
            stream=True,
            max_tokens=max(request.max_tokens - len(self._tokenize(opening)), 1),
            temperature=request.temperature,
            seed=SAMPLING_SEED,
            stop=[_END],
            **kwargs,
        )
        cut = False
        try:
            for chunk in chunks:
                choice = chunk["choices"][0]
                if text := content.feed(choice["text"]):
                    yield text
                if content.closed:
                    break
                cut = choice.get("finish_reason") == "length"
        finally:
            chunks.close()
        if not cut:
            yield content.rest() + '"}'

    def _evaluate_messages(self, messages: list[dict[str, str]]) -> list[int]:
        """Fill the KV cache with the prompt's blocks, one evaluation each, from the longest
        prefix of them that it or a saved state holds; the prompt's tokens.

        Only blocks evaluated here are kept: the tokens a generation added were evaluated one
        at a time. llama.cpp then finds the whole prompt but its answer header cached.
        """
        blocks = [block for message in messages for block in self._blocks(_MESSAGE.format(**message))]
        cached = self._loaded.cached
        kept = 0
        while kept < min(len(blocks), len(cached)) and blocks[kept] == cached[kept]:
            kept += 1
        kept = self._restore(blocks, kept)
        self._llama.n_tokens = sum(len(block) for block in blocks[:kept])
        del cached[kept:]
        for block in blocks[kept:]:
            self._llama.eval(block)
            cached.append(block)
            if len(cached) < len(blocks):
                self._save(tuple(cached))
        return [token for block in blocks for token in block]

    def _blocks(self, message: str) -> list[Block]:
        """`message`'s tokens in the blocks it is evaluated in: up to its first blank line and the
        rest, when the two tokenise as the whole does; else one block."""
        whole = tuple(self._tokenize(message))
        cut = message.find(_BLANK_LINE)
        if cut < 0:
            return [whole]
        head = tuple(self._tokenize(message[: cut + len(_BLANK_LINE)]))
        tail = tuple(self._tokenize(message[cut + len(_BLANK_LINE) :]))
        return [head, tail] if head and tail and head + tail == whole else [whole]

    def _restore(self, blocks: Sequence[Block], kept: int) -> int:
        """How many of `blocks` the cache holds once the saved state of their longest prefix
        beyond the `kept` it holds is restored (0 when a restore failed and left it empty)."""
        if not self.saved_bytes:
            return kept
        saved, cached = self._loaded.saved, self._loaded.cached
        for length in range(len(blocks) - 1, kept, -1):
            state = saved.get(prefix := tuple(blocks[:length]))
            if state is None:
                continue
            saved.move_to_end(prefix)
            data = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
            restored = self._loaded.bindings.llama_state_seq_set_data(self._llama.ctx, data, len(state), 0)
            if restored != len(state):
                cached.clear()
                return 0
            cached[:] = prefix
            tokens = [token for block in prefix for token in block]
            self._llama.input_ids[: len(tokens)] = tokens
            return length
        return kept

    def _save(self, prefix: tuple[Block, ...]) -> None:
        """Save the sequence state holding `prefix` (up to SAVED_TOKENS), dropping the least
        recently used states beyond `saved_bytes`."""
        saved = self._loaded.saved
        if prefix in saved:
            saved.move_to_end(prefix)
            return
        if sum(len(block) for block in prefix) > SAVED_TOKENS:
            return
        ctx = self._llama.ctx
        size = self._loaded.bindings.llama_state_seq_get_size(ctx, 0)
        if size > self.saved_bytes:
            return
        buffer = (ctypes.c_uint8 * size)()
        written = self._loaded.bindings.llama_state_seq_get_data(ctx, buffer, size, 0)
        saved[prefix] = bytes(buffer[:written])
        while sum(len(state) for state in saved.values()) > self.saved_bytes:
            saved.popitem(last=False)

    def _word_tokens(self, words: Sequence[str]) -> set[int]:
        """The tokens that are one of `words` whole: after a space, or capitalised without one
        (the first word of a JSON string). A word of several tokens is left alone: banning its
        first piece would ban the other words it begins."""
        variants = {v for w in words for v in (f" {w}", f" {w.capitalize()}", w.capitalize())}
        return {tokens[0] for v in variants if len(tokens := self._tokenize(v)) == 1}

    def _word_beginnings(self, text: str) -> set[int]:
        """The first tokens of `text`'s words of several tokens: a name the reply must copy
        ("Singapore" may begin with the token " Sin") stays writable."""
        return {
            tokens[0]
            for word in set(_WORD.findall(text))
            for form in (f" {word}", word)
            if len(tokens := self._tokenize(form)) > 1
        }

    def _tokenize(self, text: str) -> list[int]:
        return list(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def _prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        # ChatML adds about 4 tokens of markup per message around the contents.
        return sum(self.count_tokens(m["content"]) + 4 for m in messages) + 3


def _one_string(schema: dict[str, Any] | None) -> str | None:
    """The field of a JSON schema whose reply is one string, `{"field": "…"}`; else None."""
    properties = schema.get("properties") if schema else None
    if schema is None or not isinstance(properties, dict) or len(properties) != 1:
        return None
    ((field, spec),) = properties.items()
    return field if spec == {"type": "string"} and schema.get("required") == [field] else None


@atexit.register
def _close_models() -> None:
    """Free the models before interpreter teardown (llama.cpp cannot free them after it)."""
    with _models_lock:
        for loaded in _models.values():
            loaded.llama.close()
        _models.clear()


def _load(path: Path, context_window: int, threads: int) -> _Loaded:
    key = (str(path), context_window, threads)
    with _models_lock:
        if key not in _models:
            try:
                import llama_cpp
            except ImportError as exc:
                raise ProviderError(
                    "the local chat model needs llama-cpp-python: pip install 'docubot[local]' "
                    "(or DOCUBOT_LLM=none|openai|anthropic)"
                ) from exc
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=context_window,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
            _models[key] = _Loaded(llama, llama_cpp)
        return _models[key]
