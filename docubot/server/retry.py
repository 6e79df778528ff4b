"""One retry when PostgreSQL goes away under a request (a restart, a failover, a killed backend).

Every write DocuBot makes for a request is one transaction (a turn, a call-log row, a session), so a
connection lost half-way rolls the whole of it back and running the request again is safe: the
session keeps the whole turn or none of it. A request is retried once, after a short pause, on a
fresh connection (the pool checks connections before use); if it fails again the client gets 503
with JSON (`{"error": "the database is unavailable; try again …", "request_id": …}`), or for a
stream that started, an `error` event with status 503.

A connection lost during the COMMIT itself leaves it unknown whether the transaction went through;
the retry then answers again on whatever the database holds (a turn stored twice at worst, never a
half-written one).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TypeVar

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from docubot.db import lost_connection

RETRY_PAUSE_S = 0.5
"""Wait before the retry: long enough for a pooled connection to be replaced or a fail-over to start."""
T = TypeVar("T")
log = logging.getLogger(__name__)


def retrying_once(call: Callable[[], T], what: str) -> T:
    """`call()`, run once more if it lost the database connection."""
    try:
        return call()
    except Exception as exc:
        if not lost_connection(exc):
            raise
        log.warning("%s lost the database connection (%s); retrying once", what, _first_line(exc))
    time.sleep(RETRY_PAUSE_S)
    return call()


class RetryOnLostConnection:
    """ASGI middleware: a request that lost the database connection before its response started is
    run once more with the same body; if that loses it too, `give_up(scope, error)` is the answer
    (a 503 here, so that the connection stays open: an error raised on to uvicorn closes it)."""

    def __init__(self, app: ASGIApp, give_up: Callable[[Scope, BaseException], Response]) -> None:
        self.app = app
        self.give_up = give_up

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body: list[Message] = []
        """The request's body as the app read it, for the second run."""
        replay: list[Message] = []
        started = False

        async def receiving() -> Message:
            if replay:
                return replay.pop(0)
            message = await receive()
            if message["type"] == "http.request":
                body.append(message)
            return message

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        for attempt in (1, 2):
            try:
                await self.app(scope, receiving, sending)
                return
            except Exception as exc:
                if started or not lost_connection(exc):
                    raise
                if attempt == 2:
                    await self.give_up(scope, exc)(scope, receiving, send)
                    return
                what = f"{scope['method']} {scope['path']}"
                log.warning("%s lost the database connection (%s); retrying once", what, _first_line(exc))
            replay = list(body)
            await asyncio.sleep(RETRY_PAUSE_S)


def _first_line(exc: BaseException) -> str:
    """The driver's message, first line only (no SQL, no parameters)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
