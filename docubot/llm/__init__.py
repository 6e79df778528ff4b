"""Chat models behind one interface; `make_chat_model` picks the configured provider."""

from __future__ import annotations

from docubot.config import Settings
from docubot.llm.base import (
    ChatModel,
    ChatRequest,
    Completion,
    ContextWindowError,
    Message,
    ProviderError,
    StreamEvent,
    Usage,
    complete,
    is_embedded,
)

__all__ = [
    "ChatModel",
    "ChatRequest",
    "Completion",
    "ContextWindowError",
    "Message",
    "ProviderError",
    "StreamEvent",
    "Usage",
    "complete",
    "is_embedded",
    "make_chat_model",
]


def make_chat_model(settings: Settings) -> ChatModel | None:
    """The configured chat model, or None for the `none` provider (extractive answers)."""
    if settings.llm == "none":
        return None
    if settings.llm == "openai":
        from docubot.llm.openai_chat import OpenAIChat

        return OpenAIChat(
            settings.llm_model or "gpt-4o-mini",
            settings.llm_base_url,
            settings.llm_api_key,
            json_mode=settings.llm_json_mode,
            context_window=settings.context_window,
            timeout_s=settings.llm_timeout_s,
        )
    if settings.llm == "anthropic":
        from docubot.llm.anthropic_chat import AnthropicChat

        return AnthropicChat(
            settings.llm_model or "claude-haiku-4-5",
            settings.llm_api_key,
            timeout_s=settings.llm_timeout_s,
        )
    from docubot.llm.local import LocalModel

    return LocalModel(settings.models_dir, settings.context_window, settings.cpu_threads())
