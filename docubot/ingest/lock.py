"""The ingest lock: one ingest at a time per corpus, on every machine that shares it.

On SQLite the corpus is the data folder, and the lock a file in it (`<home>/ingest.lock`). On
PostgreSQL it is the database, and the lock a session-level advisory lock held on a connection of
its own (autocommit, so no transaction stays open): two servers or machines ingesting into one
database are serialised, and a crashed ingest releases it with its connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from filelock import FileLock, Timeout
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from docubot.config import Settings
from docubot.db import database_url

PG_INGEST_LOCK = 0x0D0C_1A6E
"""Advisory lock key of ingests (the migrations use another)."""


class LockHeld(RuntimeError):
    """Another ingest holds the lock; the message says where."""


@contextmanager
def ingest_lock(settings: Settings) -> Iterator[None]:
    """Hold the corpus's ingest lock for the block; LockHeld at once if another ingest has it."""
    url = database_url(settings)
    if url.startswith("sqlite"):
        with _file_lock(settings):
            yield
    else:
        with _advisory_lock(url):
            yield


@contextmanager
def _file_lock(settings: Settings) -> Iterator[None]:
    settings.home.mkdir(parents=True, exist_ok=True)
    lock = FileLock(settings.home / "ingest.lock")
    try:
        lock.acquire(timeout=0)
    except Timeout as exc:
        raise LockHeld(f"{settings.home} (lock {lock.lock_file})") from exc
    try:
        yield
    finally:
        lock.release()


@contextmanager
def _advisory_lock(url: str) -> Iterator[None]:
    engine = create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            taken = conn.exec_driver_sql(f"SELECT pg_try_advisory_lock({PG_INGEST_LOCK})").scalar()
            if not taken:
                raise LockHeld(f"database {engine.url.render_as_string(hide_password=True)} (advisory lock)")
            try:
                yield
            finally:
                conn.exec_driver_sql(f"SELECT pg_advisory_unlock({PG_INGEST_LOCK})")
    finally:
        engine.dispose()
