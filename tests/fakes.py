"""A scripted chat model for control-flow tests (retries, parsing, fallbacks) — never proof of answering."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from docubot.llm import ChatRequest, ProviderError, StreamEvent, Usage


class ScriptedModel:
    """Plays back one step per call: a reply text (streamed in small pieces), a function of the
    request returning one, or an exception to raise."""

    name = "fake/scripted"

    def __init__(
        self, steps: list[str | Exception | Callable[[ChatRequest], str]], context_window: int = 4096
    ) -> None:
        self.steps = list(steps)
        self.requests: list[ChatRequest] = []
        self.context_window = context_window

    @property
    def calls(self) -> int:
        return len(self.requests)

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        self.requests.append(request)
        if not self.steps:
            raise ProviderError("script exhausted")
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        if callable(step):
            step = step(request)
        for start in range(0, len(step), 7):
            yield StreamEvent(text=step[start : start + 7])
        yield StreamEvent(usage=Usage(self.count_tokens(request.system), self.count_tokens(step)))
