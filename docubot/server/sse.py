"""Streaming a blocking answer as Server-Sent Events.

The answer runs in a worker thread; its text pieces and status lines cross to the event loop
through a queue. When the client goes away the next piece raises `ClientGone` inside the worker,
so the session manager stores nothing: a turn is stored whole (the answer finished) or not at all.
A job that loses the database connection runs once more (`docubot.server.retry`); the text pieces
the client already has are not sent again, the final event carries the whole answer.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from docubot.server.retry import retrying_once

TextSink = Callable[[str], None]
Job = Callable[[TextSink, TextSink], dict[str, Any]]
"""(on_text, on_status) → the final event's data."""


class ClientGone(Exception):
    """The client disconnected; the answer in progress is abandoned."""


def event(name: str, data: Any) -> str:
    """One SSE event: `event: name` and its JSON data."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def stream_job(job: Job, error_event: Callable[[BaseException], dict[str, Any]]) -> AsyncIterator[str]:
    """Run `job` in a thread; yield `token` and `status` events as it goes, then `done` (or `error`)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    gone = threading.Event()
    attempts: list[bool] = []
    """One entry per run of the job: whether it sent the client any text piece."""

    def sink(kind: str) -> TextSink:
        def put(text: str) -> None:
            if gone.is_set():
                raise ClientGone()
            if kind == "token":
                if any(attempts[:-1]):
                    return  # a retry: the client has this answer's text pieces already
                attempts[-1] = True
            loop.call_soon_threadsafe(queue.put_nowait, (kind, {"text": text}))

        return put

    def attempt() -> dict[str, Any]:
        attempts.append(False)
        return job(sink("token"), sink("status"))

    def run() -> None:
        if gone.is_set():  # the stream closed (client gone, server stopping) before a worker was free
            return
        try:
            final = ("done", retrying_once(attempt, "a streamed answer"))
        except ClientGone:
            return
        except Exception as exc:  # reported to the client as an `error` event
            final = ("error", error_event(exc))
        loop.call_soon_threadsafe(queue.put_nowait, final)

    loop.run_in_executor(None, run)
    try:
        while True:
            kind, data = await queue.get()
            yield event(kind, data)
            if kind in ("done", "error"):
                break
    finally:
        gone.set()  # a disconnect closes this generator: the worker's next piece raises ClientGone
