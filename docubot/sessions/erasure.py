"""Erasing a user: every store holding data about a user registers how to delete it."""

from __future__ import annotations

from collections.abc import Callable

from docubot.config import Settings

Eraser = Callable[[Settings, str], int]
"""(settings, user) → how many rows went."""
_erasers: dict[str, Eraser] = {}


def on_user_erase(name: str) -> Callable[[Eraser], Eraser]:
    """Register `eraser` under `name` (its count is reported under that name)."""

    def register(eraser: Eraser) -> Eraser:
        _erasers[name] = eraser
        return eraser

    return register


def erase_everywhere(settings: Settings, user: str) -> dict[str, int]:
    return {name: eraser(settings, user) for name, eraser in _erasers.items()}


@on_user_erase("call_log")
def _erase_calls(settings: Settings, user: str) -> int:
    from docubot.calllog import CallLog

    log = CallLog(settings.db_path)
    try:
        return log.delete_user(user)
    finally:
        log.close()


@on_user_erase("cached_answers")
def _erase_cached_answers(settings: Settings, user: str) -> int:
    from docubot.cache.answers import erase_user

    return erase_user(settings, user)
