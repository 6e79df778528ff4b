"""The chat-model interface every provider implements: one streaming call, typed errors."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """What a provider receives. The system prompt travels apart from the messages."""

    system: str
    messages: tuple[Message, ...]
    json_schema: dict[str, Any] | None = None
    max_tokens: int = 350
    temperature: float = 0.1
    avoid: tuple[str, ...] = ()
    """Words the reply must not use (a language's words the translation into another one must
    not copy). The embedded model bans the tokens that spell each as a whole word; a hosted model
    tokenizes otherwise and writes the language asked without it, so the others ignore it."""
    free_string: bool = False
    """A reply of one string (`{"resposta": "…"}`) the embedded model may write after its opening
    without a grammar (about twice as fast on 2 cores): an answer's translation, which is checked
    after. Not a question's translation: its words decide the search, and written so they cost 2 to
    3 of 72 Spanish and English answers (README, stop 53). Hosted models ignore it."""


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class StreamEvent:
    """A piece of generated text, or (last) the usage the provider reported."""

    text: str = ""
    usage: Usage | None = None


@dataclass
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    first_token_s: float | None = None


class ProviderError(Exception):
    """The provider failed. `transient` errors (timeouts, 429, 5xx, overload) are worth retrying."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


class ContextWindowError(ProviderError):
    """The request does not fit the model's window: retrying the same request cannot help."""


class ChatModel(Protocol):
    name: str
    """`provider/model`, as logged."""
    context_window: int

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        """Generated text as it comes; may end with an event carrying usage."""
        ...

    def count_tokens(self, text: str) -> int: ...


EMBEDDED_PROVIDER = "local"
"""The provider part of the embedded llama.cpp model's name (`local/qwen2.5-…`)."""


def is_embedded(model: ChatModel) -> bool:
    """Whether `model` is the embedded local one (by its logged name: wrappers keep it)."""
    return model.name.split("/", 1)[0] == EMBEDDED_PROVIDER


def complete(
    model: ChatModel,
    request: ChatRequest,
    on_text: Callable[[str], None] | None = None,
) -> Completion:
    """Run a streaming call to the end; usage is counted locally when the provider gives none."""
    now = time.perf_counter
    start = now()
    parts: list[str] = []
    usage: Usage | None = None
    first: float | None = None
    for event in model.stream(request):
        if event.usage is not None:
            usage = event.usage
        if event.text:
            if first is None:
                first = now() - start
            parts.append(event.text)
            if on_text:
                on_text(event.text)
    text = "".join(parts)
    if usage is None:
        prompt = request.system + "".join(m.content for m in request.messages)
        usage = Usage(model.count_tokens(prompt), model.count_tokens(text) if text else 0)
    return Completion(text=text, usage=usage, first_token_s=first)
