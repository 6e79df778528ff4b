"""Feedback on answers over HTTP: 👍/👎 and an optional comment on a turn of one's own session.

`PUT /v1/sessions/{id}/turns/{turn}/feedback` with `{"rating": "up"|"down", "comment": str|null}`
stores or replaces it (200, `{"rating", "comment", "updated_at"}`); `DELETE` on the same path
removes it (204). Another user's session, an unknown one or a missing turn is a 404, as for
sessions; a bad rating or an over-long comment is a 422 saying which. `GET /v1/sessions/{id}`
returns each turn's feedback (`"feedback": {…} | null`).

Annotations here are evaluated when defined (no `from __future__ import annotations`): the routes
are closures over the app's auth dependency, which FastAPI must see as a real `Annotated` type.
"""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import Response
from pydantic import BaseModel, Field

from docubot.db import Database
from docubot.server.users import User
from docubot.sessions.feedback import MAX_COMMENT_CHARS, FeedbackError, FeedbackStore


class FeedbackBody(BaseModel):
    rating: str = Field(description="`up` (👍) or `down` (👎).", examples=["down"])
    comment: str | None = Field(
        None, description=f"Optional, at most {MAX_COMMENT_CHARS} characters.", examples=["Falta el pas 3."]
    )


def feedback_router(db: Database, current_user: Callable[..., User]) -> APIRouter:
    """The feedback routes over the app's database; `current_user` is its bearer-key dependency."""
    router = APIRouter(prefix="/v1/sessions/{session_id}/turns/{turn}/feedback", tags=["feedback"])
    authenticated = Annotated[User, Depends(current_user)]
    store = FeedbackStore(db)

    @router.put("")
    def set_feedback(session_id: str, turn: int, body: FeedbackBody, user: authenticated) -> dict[str, Any]:
        """Rate an answer 👍 (`up`) or 👎 (`down`), with an optional comment; replaces earlier feedback."""
        try:
            return store.set(user.name, session_id, turn, body.rating, body.comment).to_dict()
        except FeedbackError as exc:
            raise HTTPException(422, str(exc)) from exc

    @router.delete("", status_code=204)
    def clear_feedback(session_id: str, turn: int, user: authenticated) -> Response:
        """Remove the feedback on an answer."""
        store.clear(user.name, session_id, turn)
        return Response(status_code=204)

    return router
