"""Session ids: random, URL-safe, validated before any lookup (never used to build a path)."""

from __future__ import annotations

import re
import secrets

_VALID = re.compile(r"[A-Za-z0-9_-]{8,64}")


class InvalidSessionId(ValueError):
    """A session id with characters outside [A-Za-z0-9_-] or a length outside 8..64."""


def new_session_id() -> str:
    """A fresh random id that never starts with "-", so a CLI never reads it as an option."""
    return "s" + secrets.token_urlsafe(16)


def validated(session_id: str) -> str:
    if not isinstance(session_id, str) or not _VALID.fullmatch(session_id):
        shown = session_id[:40] + "…" if isinstance(session_id, str) and len(session_id) > 40 else session_id
        raise InvalidSessionId(f"invalid session id {shown!r}: use 8-64 characters from A-Z a-z 0-9 _ -")
    return session_id
