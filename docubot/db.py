"""The relational database of a deployment: sessions, users, answer caches.

By default it is the data folder's SQLite file (WAL, shared with the vector store); when
`DOCUBOT_DATABASE_URL` names a PostgreSQL server, that one. Everything goes through SQLAlchemy
Core, so the two backends share one code path. SQLite write transactions start with
`BEGIN IMMEDIATE`, so concurrent writers queue instead of failing half-way (so never open a
second connection while holding one: it would wait for the first).
"""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import Engine, MetaData, Table, create_engine, event

from docubot.config import Settings

metadata = MetaData()
"""Every table of the relational database registers here."""

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


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
    raise DatabaseError(f"unsupported database URL {url.split('://')[0]}://…: use postgresql:// or sqlite:///")


def engine_for(settings: Settings) -> Engine:
    """The shared engine for the settings' database (one per URL and process), tables created."""
    url = database_url(settings)
    with _lock:
        if url not in _engines:
            engine = _sqlite_engine(url) if url.startswith("sqlite") else _postgres_engine(url)
            metadata.create_all(engine)
            _engines[url] = engine
        return _engines[url]


def ensure_tables(engine: Engine, *tables: Table) -> None:
    """Create tables registered after the engine was first opened (idempotent)."""
    metadata.create_all(engine, tables=list(tables))


def dispose_engines() -> None:
    """Close every pooled connection (tests, server shutdown)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()


def _sqlite_engine(url: str) -> Engine:
    engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy, not the driver, starts transactions
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=30000"):
            dbapi_conn.execute(f"PRAGMA {pragma}")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _postgres_engine(url: str) -> Engine:
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise DatabaseError("PostgreSQL needs psycopg: pip install 'docubot[postgres]'") from exc
    return create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)
