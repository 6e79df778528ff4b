"""Feedback on answers: the session owner's 👍/👎 on a turn, with an optional comment.

One row per turn (`turn_feedback`), replaced when given again and removed on request; it is
deleted with its turn, so with its session (delete, expiry) and with its user (erasure). Only the
owner of a live session can read or change it: any other (user, session) is simply not found.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from docubot.db import Database
from docubot.sessions.ids import validated
from docubot.sessions.manager import SessionNotFound
from docubot.sessions.tables import session_turns, sessions, turn_feedback

RATINGS = ("up", "down")
MAX_COMMENT_CHARS = 2000


class FeedbackError(ValueError):
    """A rating other than up/down, or a comment too long."""


class TurnNotFound(SessionNotFound):
    """The session is the user's, but has no such turn."""


@dataclass(frozen=True)
class Feedback:
    rating: str
    comment: str | None
    updated_at: float

    def to_dict(self) -> dict[str, Any]:
        return {"rating": self.rating, "comment": self.comment, "updated_at": self.updated_at}


def checked_feedback(rating: str, comment: str | None) -> tuple[str, str | None]:
    """The rating and the comment (stripped; empty means none), or FeedbackError saying what is wrong."""
    if rating not in RATINGS:
        raise FeedbackError(f"rating must be 'up' or 'down' (got {rating!r})")
    comment = (comment or "").strip() or None
    if comment is not None and len(comment) > MAX_COMMENT_CHARS:
        raise FeedbackError(f"comment is {len(comment)} characters long; at most {MAX_COMMENT_CHARS}")
    return rating, comment


class FeedbackStore:
    """Sets, removes and reads the feedback on the turns of a user's sessions."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def set(self, user: str, session_id: str, turn: int, rating: str, comment: str | None) -> Feedback:
        """Store (or replace) the user's feedback on a turn of their session."""
        rating, comment = checked_feedback(rating, comment)
        feedback = Feedback(rating, comment, time.time())
        row = {"session_id": session_id, "turn": turn, "user": user, **feedback.__dict__}
        changed = {"rating": rating, "comment": comment, "updated_at": feedback.updated_at}
        dialect = sqlite if self.db.is_sqlite else postgresql
        upsert = dialect.insert(turn_feedback).values(**row)
        upsert = upsert.on_conflict_do_update(index_elements=["session_id", "turn"], set_=changed)
        with self.db.write() as conn:
            _owned_turn(conn, user, session_id, turn)
            conn.execute(upsert)
        return feedback

    def clear(self, user: str, session_id: str, turn: int) -> None:
        """Remove the user's feedback on a turn of their session (nothing to remove is fine)."""
        with self.db.write() as conn:
            _owned_turn(conn, user, session_id, turn)
            conn.execute(
                delete(turn_feedback).where(
                    turn_feedback.c.session_id == session_id, turn_feedback.c.turn == turn
                )
            )


def _owned_turn(conn: Connection, user: str, session_id: str, turn: int) -> None:
    """SessionNotFound unless `session_id` is a live session of `user`; TurnNotFound unless it has `turn`."""
    validated(session_id)
    owned = conn.execute(
        select(sessions.c.id).where(
            sessions.c.id == session_id, sessions.c.user == user, sessions.c.expires_at > time.time()
        )
    ).first()
    if owned is None:
        raise SessionNotFound(f"no session {session_id}")
    found = conn.execute(
        select(session_turns.c.turn).where(
            session_turns.c.session_id == session_id, session_turns.c.turn == turn
        )
    ).first()
    if found is None:
        raise TurnNotFound(f"no turn {turn} in session {session_id}")
