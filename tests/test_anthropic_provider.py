"""The Anthropic provider against recorded Messages-API exchanges (streamed SSE, overload errors).

The recordings in tests/recordings follow the Messages API streaming format event by event; the
SDK parses them exactly as it would a live response.
"""

import json
from pathlib import Path

import httpx2 as httpx
import pytest

from docubot.llm.anthropic_chat import AnthropicChat
from docubot.rag.answer import DocuBot

RECORDINGS = Path(__file__).parent / "recordings"


class Recorded:
    """An httpx transport replaying responses in order and keeping the requests it got."""

    def __init__(self, responses: list[httpx.Response]) -> None:
        self.responses = responses
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.responses.pop(0)


def streamed_answer() -> httpx.Response:
    body = (RECORDINGS / "anthropic_answer.sse").read_bytes()
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def overloaded() -> httpx.Response:
    return httpx.Response(529, json=json.loads((RECORDINGS / "anthropic_overloaded.json").read_text()))


def make_bot(settings, embedder, transport: Recorded) -> DocuBot:
    model = AnthropicChat(
        "claude-3-5-haiku-20241022",
        api_key="sk-ant-test",
        http_client=httpx.Client(transport=httpx.MockTransport(transport)),
    )
    return DocuBot(settings, embedder=embedder, chat_model=model)


def test_streamed_answer_is_parsed_with_usage_and_metadata_sources(sample_settings, embedder) -> None:
    transport = Recorded([streamed_answer()])
    streamed: list[str] = []
    result = make_bot(sample_settings, embedder, transport).ask(
        "Com exporto un informe de projecte a PDF?", on_text=streamed.append
    )
    assert result.outcome == "answered"
    assert result.answer.fonts == ["wiki/guies/informes-i-exportacio"]
    assert "".join(streamed) == result.answer.resposta
    assert (result.usage.input_tokens, result.usage.output_tokens) == (1187, 61)
    sent = json.loads(transport.requests[0].content)
    assert sent["model"] == "claude-3-5-haiku-20241022" and sent["stream"] is True
    assert sent["system"].startswith("Ets DocuBot")
    assert [m["role"] for m in sent["messages"]] == ["user"]
    assert transport.requests[0].headers["authorization"] == "Bearer sk-ant-test"


def test_overload_is_retried_with_backoff(sample_settings, embedder) -> None:
    transport = Recorded([overloaded(), overloaded(), streamed_answer()])
    result = make_bot(sample_settings, embedder, transport).ask("Com exporto un informe de projecte a PDF?")
    assert len(transport.requests) == 3
    assert result.outcome == "answered"


def test_persistent_overload_ends_in_the_fallback(sample_settings, embedder) -> None:
    transport = Recorded([overloaded() for _ in range(3)])
    result = make_bot(sample_settings, embedder, transport).ask("Com exporto un informe de projecte a PDF?")
    assert result.outcome == "fallback"
    assert "overloaded" in (result.error or "").lower()


@pytest.mark.parametrize("status", [401, 400])
def test_client_errors_are_not_retried(sample_settings, embedder, status) -> None:
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    transport = Recorded([httpx.Response(status, json=error), streamed_answer()])
    result = make_bot(sample_settings, embedder, transport).ask("Com exporto un informe de projecte a PDF?")
    assert len(transport.requests) == 1
    assert result.outcome == "fallback"
