"""The embedded default chat model: Qwen2.5-Coder-1.5B-Instruct (GGUF) run by llama-cpp-python.

Output is constrained by the request's JSON schema (a grammar), so it always parses. The model
object is kept per process: llama.cpp then reuses the KV cache of the longest common prompt
prefix (the system prompt) from one call to the next.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterator
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
from docubot.llm.model_file import local_model_path

_models: dict[tuple[str, int, int], Any] = {}
_models_lock = threading.Lock()


class LocalModel:
    """llama.cpp in-process; one generation at a time per loaded model."""

    def __init__(self, model_dir: Path, context_window: int = 4096, threads: int = 2) -> None:
        self.path = local_model_path(model_dir)
        self.name = f"{EMBEDDED_PROVIDER}/qwen2.5-coder-1.5b-instruct-q4_k_m"
        self.context_window = context_window
        self._llama = _load(self.path, context_window, threads)
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        messages = [{"role": "system", "content": request.system}]
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        kwargs: dict[str, Any] = {}
        if request.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        with self._lock:
            prompt_tokens = self._prompt_tokens(messages)
            if prompt_tokens + request.max_tokens > self.context_window:
                raise ContextWindowError(
                    f"prompt of {prompt_tokens} tokens + {request.max_tokens} for the answer exceeds "
                    f"the {self.context_window}-token window"
                )
            try:
                chunks = self._llama.create_chat_completion(
                    messages=messages,
                    stream=True,
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    **kwargs,
                )
                output = 0
                for chunk in chunks:
                    text = chunk["choices"][0]["delta"].get("content") or ""
                    if text:
                        output += 1
                        yield StreamEvent(text=text)
            except ValueError as exc:
                raise ProviderError(f"local model failed: {exc}") from exc
        yield StreamEvent(usage=Usage(prompt_tokens, output))

    def _prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        # ChatML adds about 4 tokens of markup per message around the contents.
        return sum(self.count_tokens(m["content"]) + 4 for m in messages) + 3


@atexit.register
def _close_models() -> None:
    """Free the models before interpreter teardown (llama.cpp cannot free them after it)."""
    with _models_lock:
        for model in _models.values():
            model.close()
        _models.clear()


def _load(path: Path, context_window: int, threads: int) -> Any:
    key = (str(path), context_window, threads)
    with _models_lock:
        if key not in _models:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ProviderError(
                    "the local chat model needs llama-cpp-python: pip install 'docubot[local]' "
                    "(or DOCUBOT_LLM=none|openai|anthropic)"
                ) from exc
            _models[key] = Llama(
                model_path=str(path),
                n_ctx=context_window,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
        return _models[key]
