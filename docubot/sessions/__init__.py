"""Persistent, isolated conversations: one per (authenticated user, session id)."""

from docubot.sessions.ids import InvalidSessionId
from docubot.sessions.manager import SessionBusy, SessionInfo, SessionManager, SessionNotFound, SessionTurn

__all__ = [
    "InvalidSessionId",
    "SessionBusy",
    "SessionInfo",
    "SessionManager",
    "SessionNotFound",
    "SessionTurn",
]
