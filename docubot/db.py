"""The deployment's database: chunks and vectors, the call log, sessions, users, answer caches.

By default it is the data folder's SQLite file (WAL); when `DOCUBOT_DATABASE_URL` names a
PostgreSQL server, that one. Everything goes through SQLAlchemy Core, so the two backends share
one code path, and the schema is Alembic's (`docubot/migrations`), brought to the newest revision
whenever a `Database` is opened.

Transactions come from `Database.read()` and `Database.write()`. On SQLite a read starts with a
deferred `BEGIN`, so in WAL mode it never waits for a writer; a write starts with
`BEGIN IMMEDIATE`, so concurrent writers queue for the lock instead of failing half-way. Keep
writes short: compute first, then write. Never open a second connection while holding a write:
it would wait for the first.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, MetaData, create_engine, event
from sqlalchemy.exc import OperationalError

from docubot.config import Settings

metadata = MetaData()
"""Every table of the database registers here (the migrations, not this, create them)."""

_READ_ONLY = "docubot_read_only"
"""Execution option of `Database.read()` connections (SQLite: deferred BEGIN). Any other
transaction, raw `engine.begin()` included, is taken as a write: slower to start, never wrong."""


class DatabaseError(RuntimeError):
    """The database URL is unusable (unknown scheme, missing driver)."""


def database_url(settings: Settings) -> str:
    """The SQLAlchemy URL of the deployment's database."""
    url = settings.database_url
    if not url:
        settings.db_path.parent.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{settings.db_path}"
    if url.startswith(("postgres://", "postgresql://")):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    if url.startswith(("postgresql+psycopg://", "sqlite:///")):
        return url
    raise DatabaseError(
        f"unsupported database URL {url.split('://')[0]}://…: use postgresql:// or sqlite:///"
    )


class Database:
    """One engine on the deployment's database, migrated to the newest schema when opened.

    Create one per process (whoever composes the components) and pass it on; `close()` it at exit.
    """

    def __init__(self, settings: Settings) -> None:
        from docubot.migrations import upgrade

        self.settings = settings
        """What it was opened with; `open_store(db)` reads the vector-store choice from it."""
        self.url = database_url(settings)
        self.is_sqlite = self.url.startswith("sqlite")
        self.engine = _sqlite_engine(self.url) if self.is_sqlite else _postgres_engine(self.url)
        upgrade(self)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A transaction that only reads: never waits for a writer (SQLite: deferred BEGIN)."""
        with self.engine.connect() as conn:
            conn.execution_options(**{_READ_ONLY: True})
            with conn.begin():
                yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A transaction that writes, committed on exit, rolled back on error (SQLite: BEGIN IMMEDIATE)."""
        with self.engine.begin() as conn:
            yield conn

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def lost_connection(exc: BaseException) -> bool:
    """Whether `exc` is PostgreSQL going away under a request (a restart, a failover, a killed backend,
    a refused connection): worth one retry on a fresh connection. SQLite's operational errors (locked
    after the 30 s busy timeout, disk full) are not: retrying them only doubles the wait."""
    if not isinstance(exc, OperationalError):
        return False
    return exc.connection_invalidated or type(exc.orig).__module__.startswith("psycopg")


def journal_mode(db: Database) -> str:
    """SQLite's journal mode (`wal` unless the file system refused it); "" on PostgreSQL."""
    if not db.is_sqlite:
        return ""
    with db.read() as conn:
        return str(conn.exec_driver_sql("PRAGMA journal_mode").scalar_one()).lower()


def _sqlite_engine(url: str) -> Engine:
    engine = create_engine(
        url,
        connect_args={"timeout": 30, "check_same_thread": False},
        pool_size=10,
        max_overflow=40,
        pool_timeout=60,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy, not the driver, starts transactions
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=30000"):
            dbapi_conn.execute(f"PRAGMA {pragma}")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        read_only = conn.get_execution_options().get(_READ_ONLY, False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine


def _postgres_engine(url: str) -> Engine:
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise DatabaseError("PostgreSQL needs psycopg: pip install 'docubot[postgres]'") from exc
    return create_engine(url, pool_size=10, max_overflow=40, pool_timeout=60, pool_pre_ping=True)
