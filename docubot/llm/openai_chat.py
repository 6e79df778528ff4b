"""Any OpenAI-compatible chat endpoint: OpenAI, Ollama, vLLM, llama.cpp's server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from docubot.llm.base import ChatRequest, ContextWindowError, ProviderError, StreamEvent, Usage

JsonMode = Literal["json_schema", "json_object", "none"]


class OpenAIChat:
    """Chat completions with streaming. `json_mode` says how the endpoint accepts a schema:
    `json_schema` (OpenAI, vLLM), `json_object` with a `schema` key (llama.cpp's server), or `none`."""

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None = None,
        *,
        json_mode: JsonMode = "json_schema",
        context_window: int = 8192,
        timeout_s: float = 600.0,
        http_client: Any = None,
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise ProviderError(
                "the openai provider needs the openai package: pip install 'docubot[openai]'"
            ) from exc
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=timeout_s,
            max_retries=0,
            http_client=http_client,
        )
        self.model = model
        self.name = f"openai/{model}"
        self.context_window = context_window
        self._json_mode = json_mode

    def count_tokens(self, text: str) -> int:
        """An estimate: the endpoint's tokenizer is not local (about 3.5 characters a token)."""
        return max(1, round(len(text) / 3.5))

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        messages = [{"role": "system", "content": request.system}]
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        kwargs: dict[str, Any] = {}
        if request.json_schema is not None and self._json_mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "resposta", "schema": request.json_schema},
            }
        elif request.json_schema is not None and self._json_mode == "json_object":
            kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        try:
            stream = self._client.chat.completions.create(  # type: ignore[call-overload]
                model=self.model,
                messages=messages,
                max_tokens=request.max_tokens,
                temperature=request.temperature,
                stream=True,
                stream_options={"include_usage": True},
                **kwargs,
            )
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield StreamEvent(text=chunk.choices[0].delta.content)
                if chunk.usage is not None:
                    yield StreamEvent(usage=Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens))
        except self._openai.APIStatusError as exc:
            raise _status_error(exc.status_code, str(exc)) from exc
        except (self._openai.APITimeoutError, self._openai.APIConnectionError) as exc:
            raise ProviderError(f"openai-compatible endpoint unreachable: {exc}", transient=True) from exc


def _status_error(status: int, message: str) -> ProviderError:
    lowered = message.lower()
    if status == 400 and ("context" in lowered and ("length" in lowered or "window" in lowered)):
        return ContextWindowError(f"request too long for the model: {message}")
    transient = status in (408, 409, 429) or status >= 500
    return ProviderError(f"provider answered {status}: {message}", transient=transient)
