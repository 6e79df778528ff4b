"""Streaming a blocking answer as Server-Sent Events.

The answer runs in a worker thread; its text pieces and status lines cross to the event loop
through a queue. When the client goes away the next piece raises `ClientGone` inside the worker,
so the session manager stores nothing: a turn is stored whole (the answer finished) or not at all.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

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

    def sink(kind: str) -> TextSink:
        def put(text: str) -> None:
            if gone.is_set():
                raise ClientGone()
            loop.call_soon_threadsafe(queue.put_nowait, (kind, {"text": text}))

        return put

    def run() -> None:
        if gone.is_set():  # the stream closed (client gone, server stopping) before a worker was free
            return
        try:
            final = ("done", job(sink("token"), sink("status")))
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
