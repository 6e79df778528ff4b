"""The corpus-change hook: every ingest that changes the store calls `corpus_changed`.

Cached answers are keyed by the corpus version, so an answer made before a change is never served
after it; the default listener also deletes those stale entries. Other components (in-process
caches) subscribe with `on_corpus_change`.
"""

from __future__ import annotations

from collections.abc import Callable

from docubot.cache.answers import evict_stale
from docubot.config import Settings
from docubot.db import Database

CorpusListener = Callable[[Settings, int], None]
_listeners: list[CorpusListener] = []


def on_corpus_change(listener: CorpusListener) -> CorpusListener:
    """Register `listener(settings, new_version)`; usable as a decorator."""
    _listeners.append(listener)
    return listener


def corpus_changed(settings: Settings, new_version: int) -> None:
    """Run every listener after the corpus moved to `new_version`."""
    for listener in _listeners:
        listener(settings, new_version)


@on_corpus_change
def evict_stale_answers(settings: Settings, new_version: int) -> None:
    """Delete cached answers of every older corpus version."""
    with Database(settings) as db:
        evict_stale(db, new_version)
