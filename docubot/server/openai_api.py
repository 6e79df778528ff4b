"""An OpenAI-compatible chat endpoint, so existing clients and chat UIs can use DocuBot as a model.

`POST /v1/chat/completions` (streaming or not) and `GET /v1/models`, behind the same bearer keys as
the rest of the API. Stateless by default: the request's earlier user/assistant messages become the
conversation's history (system messages are ignored: DocuBot keeps its own). With the header
`X-DocuBot-Session: <id>` the last user message is sent to that stored session instead. The answer
text ends with a "Fonts:" block of markdown links; the whole contract travels in the extra `docubot`
field of the response (streaming: of the final chunk).

Annotations here are evaluated when defined (no `from __future__ import annotations`): the routes
are closures over the app's auth dependency, which FastAPI must see as a real `Annotated` type.
"""

import json
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Annotated, Any, Literal, cast

from fastapi import APIRouter, Depends, Header, HTTPException, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict

from docubot.chat.conversation import Conversation
from docubot.chat.policies import ConversationState
from docubot.llm import Message
from docubot.rag.answer import AskResult, DocuBot, Source
from docubot.rag.question import checked_question
from docubot.server.headers import request_id
from docubot.server.sse import TextSink, stream_job
from docubot.server.users import User
from docubot.sessions import SessionManager

MODEL_ID = "docubot"
SOURCES_HEADING = "Fonts:"
SESSION_HEADER = "X-DocuBot-Session"


class ChatMessage(BaseModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class ChatCompletionBody(BaseModel):
    """OpenAI's request; options DocuBot does not use (temperature, max_tokens…) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = MODEL_ID
    messages: list[ChatMessage]
    stream: bool = False


def openai_router(
    bot: DocuBot,
    sessions: SessionManager,
    current_user: Callable[..., User],
    error_event: Callable[[BaseException, str, str], dict[str, Any]],
) -> APIRouter:
    """The `/v1/chat/completions` and `/v1/models` routes over the app's bot and sessions.

    `current_user` is the app's bearer-key dependency; `error_event(exc, request id, what)` maps an
    exception raised mid-stream to `{"error": message, "status": code, …}`."""
    router = APIRouter(prefix="/v1", tags=["OpenAI-compatible"])
    authenticated = Annotated[User, Depends(current_user)]

    @router.get("/models")
    def models(user: authenticated) -> dict[str, Any]:
        """The one model: DocuBot answering from the ingested docs."""
        return {
            "object": "list",
            "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "docubot"}],
        }

    @router.post("/chat/completions", response_model=None)
    def chat_completions(
        body: ChatCompletionBody,
        user: authenticated,
        request: Request,
        session: Annotated[str | None, Header(alias=SESSION_HEADER)] = None,
    ) -> dict[str, Any] | StreamingResponse:
        """Answer the last user message; history from the request or from the bound session."""
        history, question = split_messages(body.messages)
        checked_question(question, bot.settings.max_question_chars)  # 400 before the stream starts
        if session is not None:
            sessions.get(user.name, session)  # 404 before anything runs or streams

        def answer(on_text: TextSink | None, on_status: TextSink | None) -> AskResult:
            if session is not None:
                return sessions.send(user.name, session, question, on_text=on_text, on_status=on_status)
            conversation = Conversation(bot, state=ConversationState(history), user=user.name)
            return conversation.send(question, on_text=on_text, on_status=on_status)

        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        if body.stream:
            rid = request_id(request)

            def failed(exc: BaseException) -> dict[str, Any]:
                return error_event(exc, rid, f"chat completion {completion_id}")

            return StreamingResponse(
                _chunks(answer, completion_id, failed),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )
        return _completion(answer(None, None), completion_id)

    return router


def split_messages(messages: list[ChatMessage]) -> tuple[list[Message], str]:
    """(history as alternating user/assistant pairs, the last user message).

    System and tool messages are dropped, consecutive messages of one role are joined, a leading
    assistant message is dropped, and earlier answers lose their "Fonts:" block. 400 unless the
    conversation ends with a user message."""
    merged: list[Message] = []
    for message in messages:
        if message.role not in ("user", "assistant"):
            continue
        text = _text(message.content)
        if message.role == "assistant":
            text = strip_sources(text)
        if not text.strip() or (not merged and message.role == "assistant"):
            continue
        if merged and merged[-1].role == message.role:
            merged[-1] = Message(message.role, f"{merged[-1].content}\n\n{text}")
        else:
            merged.append(Message(message.role, text))
    if not merged or merged[-1].role != "user":
        raise HTTPException(400, "the messages must end with a user message")
    return merged[:-1], merged[-1].content


def _text(content: str | list[dict[str, Any]] | None) -> str:
    """The text of a message: a string, or the text parts of a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content if part.get("type") == "text")


def sources_block(sources: list[Source]) -> str:
    """The trailing "Fonts:" block: one `- [Page > Section](url)` line per distinct source."""
    lines = list(dict.fromkeys(f"- [{s.section}]({s.url})" for s in sources))
    return f"\n\n{SOURCES_HEADING}\n" + "\n".join(lines) if lines else ""


def strip_sources(text: str) -> str:
    """An earlier answer without the "Fonts:" block this endpoint appended to it."""
    head, found, _ = text.rpartition(f"\n\n{SOURCES_HEADING}\n")
    return head if found else text


def _contract(result: AskResult) -> dict[str, Any]:
    data = result.to_dict()
    data.pop("error", None)  # internal diagnostics stay in the call log
    return data


def _usage(result: AskResult) -> dict[str, int]:
    tokens_in, tokens_out = result.usage.input_tokens, result.usage.output_tokens
    total = tokens_in + tokens_out
    return {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": total}


def _completion(result: AskResult, completion_id: str) -> dict[str, Any]:
    content = result.answer.resposta + sources_block(result.sources)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": _usage(result),
        "docubot": _contract(result),
    }


def _chunk(completion_id: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    data = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


async def _chunks(
    answer: Callable[[TextSink | None, TextSink | None], AskResult],
    completion_id: str,
    error_event: Callable[[BaseException], dict[str, Any]],
) -> AsyncIterator[str]:
    """OpenAI's chunk stream: role, text pieces, the sources block, a final chunk with the
    contract, then `data: [DONE]`. A failure after the start becomes an `error` object."""
    holder: dict[str, AskResult] = {}

    def job(on_text: TextSink, on_status: TextSink) -> dict[str, Any]:
        holder["result"] = answer(on_text, on_status)
        return {}

    yield _chunk(completion_id, {"role": "assistant", "content": ""})
    events = cast(AsyncGenerator[str, None], stream_job(job, error_event))  # closed: the worker stops
    async with aclosing(events):
        async for raw in events:
            kind, data = _parse_event(raw)
            if kind == "token":
                yield _chunk(completion_id, {"content": data["text"]})
            elif kind == "error":
                error = {"message": data["error"], "type": "docubot_error", "code": data.get("status")}
                yield f"data: {json.dumps({'error': error}, ensure_ascii=False)}\n\n"
                return
    result = holder["result"]
    block = sources_block(result.sources)
    if block:
        yield _chunk(completion_id, {"content": block})
    yield _chunk(completion_id, {}, "stop", usage=_usage(result), docubot=_contract(result))
    yield "data: [DONE]\n\n"


def _parse_event(raw: str) -> tuple[str, dict[str, Any]]:
    """(event name, data) of one `event: …\\ndata: …` block written by `docubot.server.sse.event`."""
    name_line, data_line = raw.strip().split("\n", 1)
    return name_line.removeprefix("event: "), json.loads(data_line.removeprefix("data: "))
