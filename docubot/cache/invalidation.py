"""The corpus-change hook: every ingest that changes the store calls `corpus_changed`.

Answers cached under an older corpus version must never be served again; the default listener
deletes them from the `answer_cache` table of the data folder's SQLite file. Other components
(in-process caches) subscribe with `on_corpus_change`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from docubot.store.sqlite import connect

CorpusListener = Callable[[Path, int], None]
_listeners: list[CorpusListener] = []

ANSWER_CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS answer_cache (
    key TEXT PRIMARY KEY,
    corpus_version INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer_json TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS answer_cache_version ON answer_cache (corpus_version);
"""


def on_corpus_change(listener: CorpusListener) -> CorpusListener:
    """Register `listener(db_path, new_version)`; usable as a decorator."""
    _listeners.append(listener)
    return listener


def corpus_changed(db_path: Path, new_version: int) -> None:
    """Run every listener after the corpus moved to `new_version`."""
    for listener in _listeners:
        listener(db_path, new_version)


@on_corpus_change
def evict_stale_answers(db_path: Path, new_version: int) -> None:
    """Delete cached answers of every older corpus version."""
    conn = connect(db_path)
    try:
        conn.executescript(ANSWER_CACHE_SCHEMA)
        conn.execute("DELETE FROM answer_cache WHERE corpus_version < ?", (new_version,))
    finally:
        conn.close()
