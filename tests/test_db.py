"""The Database object: reads never wait for a writer on SQLite (issue 14.2), writes queue, URLs."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from docubot.config import Settings
from docubot.db import Database, DatabaseError, database_url
from docubot.server.users import UserStore
from docubot.store.sql import SQLStore

PATIENCE_S = 5.0
"""Far below the 30 s busy timeout a read used to wait for the write lock."""


@contextmanager
def another_writer(settings: Settings) -> Iterator[sqlite3.Connection]:
    """Another process holding the write lock, with an uncommitted write."""
    conn = sqlite3.connect(settings.db_path, isolation_level=None, timeout=0)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO meta VALUES ('held', 'by another writer')")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


def in_thread(job: Callable[[], Any], timeout: float) -> tuple[bool, Any]:
    """(finished within `timeout`, its result or exception)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(job())
        except Exception as exc:  # reported to the test, not lost in the thread
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    return not thread.is_alive(), outcome[0] if outcome else None


def test_reads_complete_while_another_connection_holds_a_write(settings: Settings, db: Database) -> None:
    """Authentication and searches must not queue behind an ingest or a turn being committed."""
    users, store = UserStore(db), SQLStore(db)
    _, key = users.add("anna")
    with another_writer(settings):
        started = time.perf_counter()
        done, user = in_thread(lambda: users.authenticate(key), PATIENCE_S)
        assert done, "authentication waited for the write lock"
        assert user is not None and user.name == "anna"
        done, count = in_thread(store.count, PATIENCE_S)
        assert done and count == 0
        done, version = in_thread(store.corpus_version, PATIENCE_S)
        assert done and version == 0
        assert time.perf_counter() - started < PATIENCE_S


def test_a_write_waits_for_the_lock_then_commits(settings: Settings, db: Database) -> None:
    store = SQLStore(db)
    with another_writer(settings) as writer:
        done, _ = in_thread(store.bump_corpus_version, 0.5)
        assert not done  # queued behind the other writer, not failed
        writer.execute("ROLLBACK")
        deadline = time.monotonic() + PATIENCE_S
        while store.corpus_version() != 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert store.corpus_version() == 1


def test_a_failed_write_rolls_back(db: Database) -> None:
    store = SQLStore(db)
    with pytest.raises(RuntimeError), db.write() as conn:
        conn.exec_driver_sql("INSERT INTO meta VALUES ('corpus_version', '7')")
        raise RuntimeError("crash")
    assert store.corpus_version() == 0


def test_database_urls(settings: Settings) -> None:
    assert database_url(settings) == f"sqlite:///{settings.db_path}"
    pg = settings.with_overrides(database_url="postgres://u@h/d")
    assert database_url(pg) == "postgresql+psycopg://u@h/d"
    with pytest.raises(DatabaseError, match="unsupported database URL mysql://"):
        Database(settings.with_overrides(database_url="mysql://u@h/d"))
