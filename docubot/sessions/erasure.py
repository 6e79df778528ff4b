"""Erasing a user: every store holding data about a user registers how to delete it."""

from __future__ import annotations

from collections.abc import Callable

from docubot.db import Database

Eraser = Callable[[Database, str], int]
"""(db, user) → how many rows went."""
_erasers: dict[str, Eraser] = {}


def on_user_erase(name: str) -> Callable[[Eraser], Eraser]:
    """Register `eraser` under `name` (its count is reported under that name)."""

    def register(eraser: Eraser) -> Eraser:
        _erasers[name] = eraser
        return eraser

    return register


def erase_everywhere(db: Database, user: str) -> dict[str, int]:
    return {name: eraser(db, user) for name, eraser in _erasers.items()}


@on_user_erase("call_log")
def _erase_calls(db: Database, user: str) -> int:
    from docubot.calllog import CallLog

    return CallLog(db).delete_user(user)


@on_user_erase("cached_answers")
def _erase_cached_answers(db: Database, user: str) -> int:
    from docubot.cache.answers import erase_user

    return erase_user(db, user)
