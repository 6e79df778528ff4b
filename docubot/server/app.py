"""The HTTP API and the web chat page.

Every endpoint but `/v1/health`, the page and the docs needs `Authorization: Bearer <key>`; the key
names the user, and nothing in a request body or URL can claim another identity. Errors are JSON
`{"error": "..."}` with the matching status; an unexpected one is logged with the request id, which
the client gets too (`request_id`, and the `X-Request-ID` header of every response).
"""

from __future__ import annotations

import logging
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from docubot.chat.policies import PolicyError
from docubot.config import Settings
from docubot.ingest.files import DocsFolderError
from docubot.ingest.pipeline import IngestError, ingest
from docubot.rag.answer import DocuBot, EmptyStoreError, QuestionError, TurnContext
from docubot.rag.question import checked_question
from docubot.rag.retrieve import LATEST
from docubot.server.feedback import feedback_router
from docubot.server.gaps_page import gaps_router
from docubot.server.headers import SecurityHeaders, request_id, response_headers
from docubot.server.limits import BodyLimit
from docubot.server.offline_docs import serve_docs_offline
from docubot.server.openai_api import openai_router
from docubot.server.retry import RetryOnLostConnection
from docubot.server.sources import for_page
from docubot.server.sse import TextSink, stream_job
from docubot.server.users import User, UserStore
from docubot.server.web import web_router
from docubot.sessions import InvalidSessionId, SessionBusy, SessionManager, SessionNotFound
from docubot.store.base import EmbeddingModelMismatch, StoreError

STATIC = Path(str(files("docubot.server") / "static"))
_bearer = HTTPBearer(auto_error=False)
log = logging.getLogger(__name__)


def current_user(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
) -> User:
    """The user the bearer key belongs to; 401 without a valid key."""
    store: UserStore = request.app.state.users
    user = store.authenticate(credentials.credentials) if credentials else None
    if user is None:
        raise HTTPException(401, "missing or unknown API key", headers={"WWW-Authenticate": "Bearer"})
    return user


Authenticated = Annotated[User, Depends(current_user)]


class AskBody(BaseModel):
    question: str = Field(min_length=1)
    version: str = LATEST
    filters: dict[str, str | list[str]] | None = None


class NewSession(BaseModel):
    policy: str | None = None


class MessageBody(BaseModel):
    content: str = Field(min_length=1)


class IngestBody(BaseModel):
    force: bool = False
    dry_run: bool = False


_ERRORS: dict[type[Exception], int] = {
    SessionNotFound: 404,
    InvalidSessionId: 404,  # a hostile id reveals nothing more than an unknown one
    QuestionError: 400,
    PolicyError: 422,
    EmptyStoreError: 503,
    SessionBusy: 409,
    IngestError: 409,
    DocsFolderError: 400,
    EmbeddingModelMismatch: 503,  # before StoreError: the first match wins
    StoreError: 422,  # e.g. an unknown filter field
}
"""Errors whose message is meant for the client, and their status."""


def create_app(settings: Settings, bot: DocuBot | None = None) -> FastAPI:
    """The API over one shared DocuBot (models loaded once per process)."""
    bot = bot or DocuBot(settings)
    sessions = SessionManager(settings, bot, bot.db)
    app = FastAPI(title="DocuBot", version="1", description="Answers from your documentation, with sources.")
    app.state.users = UserStore(bot.db)
    app.add_middleware(RetryOnLostConnection, give_up=_unavailable)  # innermost: replays a request
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)
    app.add_middleware(SecurityHeaders)

    for error, status in _ERRORS.items():
        app.add_exception_handler(error, _json_error(status))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        """Runs outside the middleware stack: adds the headers the middleware would have."""
        rid, path = request_id(request), request.url.path
        body = _error_body(exc, rid, f"{request.method} {path}")
        return JSONResponse(body, _server_status(exc), headers=response_headers(path, rid))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return JSONResponse({"error": f"invalid request: {problems}"}, 422)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/v1/health")
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "chunks": bot.store.count(),
            "corpus_version": bot.store.corpus_version(),
            "provider": bot.provider,
        }

    @app.post("/v1/ask")
    def ask(body: AskBody, user: Authenticated) -> dict[str, Any]:
        """A stateless answer: the JSON contract, sources and outcome."""
        result = bot.ask(
            body.question, version=body.version, filters=body.filters, context=TurnContext(user=user.name)
        )
        return result.to_dict()

    @app.post("/v1/sessions", status_code=201)
    def create_session(user: Authenticated, body: NewSession | None = None) -> dict[str, Any]:
        return sessions.create(user.name, body.policy if body else None).__dict__

    @app.get("/v1/sessions")
    def list_sessions(user: Authenticated) -> list[dict[str, Any]]:
        return [s.__dict__ for s in sessions.list(user.name)]

    @app.get("/v1/sessions/{session_id}")
    def get_session(session_id: str, user: Authenticated) -> dict[str, Any]:
        """The session and its turns; each answer also carries `html` and its sources' `href`."""
        info = sessions.get(user.name, session_id)
        turns = sessions.turns(user.name, session_id)
        base_url = settings.docs_base_url
        return {
            **info.__dict__,
            "messages": [{**t.__dict__, "answer": for_page(t.answer, base_url)} for t in turns],
        }

    @app.delete("/v1/sessions/{session_id}", status_code=204)
    def delete_session(session_id: str, user: Authenticated) -> Response:
        sessions.delete(user.name, session_id)
        return Response(status_code=204)

    @app.post("/v1/sessions/{session_id}/messages")
    def send_message(
        session_id: str, body: MessageBody, user: Authenticated, request: Request
    ) -> StreamingResponse:
        """Streams `status` and `token` events, then `done` with the contract, sources and turn (and,
        for the web page, the answer rendered as `html` and each source's `href`)."""
        sessions.get(user.name, session_id)  # 404 and 400 before the stream starts
        checked_question(body.content, settings.max_question_chars)
        rid = request_id(request)

        def answer(on_text: TextSink, on_status: TextSink) -> dict[str, Any]:
            done = sessions.answer(user.name, session_id, body.content, on_text=on_text, on_status=on_status)
            return {**for_page(done.result.to_dict(), settings.docs_base_url), "turn": done.turn}

        def failed(exc: BaseException) -> dict[str, Any]:
            return _error_event(exc, rid, f"turn in session {session_id}")

        return StreamingResponse(
            stream_job(answer, failed),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.post("/v1/ingest")
    def ingest_docs(user: Authenticated, body: IngestBody | None = None) -> dict[str, Any]:
        """Re-ingest the configured docs folder (DOCUBOT_DOCS_DIR); admins only."""
        if not user.admin:
            raise HTTPException(403, "ingesting needs an admin key")
        if settings.docs_dir is None:
            raise HTTPException(409, "no docs folder configured on the server (DOCUBOT_DOCS_DIR)")
        options = body or IngestBody()
        report = ingest(
            settings.docs_dir,
            settings,
            bot.store,
            bot.embedder,
            force=options.force,
            dry_run=options.dry_run,
            corpus_listeners=bot.components.corpus_listeners,
            db=bot.db,
        )
        return report.summary()

    app.include_router(openai_router(bot, sessions, current_user, _error_event))
    app.include_router(web_router(bot, sessions, current_user))
    app.include_router(feedback_router(bot.db, current_user))
    app.include_router(gaps_router(bot, app.state.users))
    serve_docs_offline(app)
    return app


def _json_error(status: int) -> Any:
    async def handle(_: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": str(exc)}, status)

    return handle


def _error_event(exc: BaseException, rid: str, what: str) -> dict[str, Any]:
    """The `error` event of a failed stream: a known error's message, else an id to quote (logged)."""
    status = next((code for kind, code in _ERRORS.items() if isinstance(exc, kind)), None)
    if status is not None:
        log.info("request %s: %s failed: %s", rid, what, exc)
        return {"error": str(exc), "status": status, "request_id": rid}
    return {**_error_body(exc, rid, what), "status": _server_status(exc)}


def _error_body(exc: BaseException, rid: str, what: str) -> dict[str, Any]:
    """Log a server-side failure with its traceback; the client gets only the id to quote."""
    log.error("request %s: %s failed", rid, what, exc_info=exc)
    reason = "the database is unavailable; try again" if _server_status(exc) == 503 else "internal error"
    return {"error": f"{reason} (request id {rid})", "request_id": rid}


def _unavailable(scope: Scope, exc: BaseException) -> JSONResponse:
    """The 503 of a request that lost the database connection twice (logged with its request id)."""
    rid = str(scope.get("state", {}).get("request_id", "-"))
    return JSONResponse(_error_body(exc, rid, f"{scope['method']} {scope['path']}"), 503)


def _server_status(exc: BaseException) -> int:
    """503 when the database is locked, full or unreachable (worth a retry), else 500."""
    return 503 if isinstance(exc, OperationalError) else 500
