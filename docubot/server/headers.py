"""Per-request id and security headers on every response.

Each request gets a random id, kept in `request.state.request_id` and sent back as `X-Request-ID`:
a client quotes it, and the server log line of a failed request carries it. The page may only run
its own script and style (no inline code), cannot be framed, and no response is content-sniffed.
"""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
DOCS_POLICY = "frame-ancestors 'none'"
"""The OpenAPI pages (/docs, /redoc) are FastAPI's own, with inline script: only framing is refused."""
DOCS_PATHS = ("/docs", "/redoc")


def request_id(request: Request) -> str:
    """The id of the request being served."""
    return str(getattr(request.state, "request_id", "-"))


def response_headers(path: str, rid: str) -> dict[str, str]:
    """The headers every response to `path` gets: its request id and the security headers."""
    return {
        "x-request-id": rid,
        "content-security-policy": DOCS_POLICY if path.startswith(DOCS_PATHS) else PAGE_POLICY,
        "x-content-type-options": "nosniff",
        "x-frame-options": "DENY",
        "referrer-policy": "no-referrer",
    }


class SecurityHeaders:
    """ASGI middleware: gives each request an id and adds it and the security headers to the response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = secrets.token_hex(8)
        scope.setdefault("state", {})["request_id"] = rid
        added = [(k.encode(), v.encode()) for k, v in response_headers(scope["path"], rid).items()]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *added]
            await send(message)

        await self.app(scope, receive, send_with_headers)
