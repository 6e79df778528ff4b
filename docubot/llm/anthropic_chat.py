"""Anthropic's Messages API (the provider of DocuBot's original design), streaming."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from docubot.llm.base import ChatRequest, ContextWindowError, ProviderError, StreamEvent, Usage
from docubot.llm.openai_chat import _status_error


class AnthropicChat:
    """Claude through the official SDK. The schema is not enforced by the API: the prompt asks for
    the JSON contract and DocuBot parses it defensively. Sampling temperature is left to the API
    (current SDKs no longer take it for every model)."""

    def __init__(
        self,
        model: str = "claude-haiku-4-5",
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        context_window: int = 200_000,
        timeout_s: float = 600.0,
        http_client: Any = None,
    ) -> None:
        try:
            import anthropic
        except ImportError as exc:
            raise ProviderError(
                "the anthropic provider needs the anthropic package: pip install 'docubot[anthropic]'"
            ) from exc
        self._anthropic = anthropic
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=http_client,
        )
        self.model = model
        self.name = f"anthropic/{model}"
        self.context_window = context_window

    def count_tokens(self, text: str) -> int:
        """An estimate (about 3.5 characters a token); the API reports exact usage."""
        return max(1, round(len(text) / 3.5))

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        try:
            with self._client.messages.stream(
                model=self.model,
                system=request.system,
                messages=cast(Any, [{"role": m.role, "content": m.content} for m in request.messages]),
                max_tokens=request.max_tokens,
            ) as stream:
                yield from (StreamEvent(text=text) for text in stream.text_stream)
                final = stream.get_final_message()
            yield StreamEvent(usage=Usage(final.usage.input_tokens, final.usage.output_tokens))
        except self._anthropic.APIStatusError as exc:
            if exc.status_code == 529:
                raise ProviderError(f"Anthropic overloaded: {exc}", transient=True) from exc
            if exc.status_code == 400 and "prompt is too long" in str(exc):
                raise ContextWindowError(f"request too long for the model: {exc}") from exc
            raise _status_error(exc.status_code, str(exc)) from exc
        except (self._anthropic.APITimeoutError, self._anthropic.APIConnectionError) as exc:
            raise ProviderError(f"Anthropic unreachable: {exc}", transient=True) from exc
