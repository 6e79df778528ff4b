"""`docubot db migrate-to postgresql://…`: the data folder's SQLite database copied into PostgreSQL.

Every table is copied as rows, in foreign-key order, in one transaction on the target: chunks with
their float32 vectors (nothing is embedded again: the pgvector store fills its `vector` column from
them when it opens), corpus facts, call log, costs, sessions, users, answer caches, calibration, and
any table a later release adds. The counts of every table are compared before the commit; on any
difference nothing is committed. The target must be empty (a database `docubot` only migrated).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, MetaData, Table, func, inspect, select

from docubot.config import Settings
from docubot.db import Database, metadata
from docubot.rag.threshold import calibration_path, import_calibration_file

BATCH = 1000
SKIPPED = {"alembic_version"}
"""Alembic's own: the target is migrated to the newest revision when it opens."""


class MoveError(RuntimeError):
    """The source or target is unusable, or the counts differ after the copy (nothing committed)."""


@dataclass(frozen=True)
class TableCount:
    table: str
    source: int
    target: int

    @property
    def ok(self) -> bool:
        return self.source == self.target


def migrate_to(settings: Settings, url: str) -> list[TableCount]:
    """Copy the data folder's SQLite database (`settings.home`) into the PostgreSQL database at
    `url`; returns the row count of each table on both sides. Raises MoveError, with nothing
    committed, when the target is not empty or a count differs."""
    _register_tables()
    if not url.startswith(("postgres://", "postgresql://", "postgresql+psycopg://")):
        raise MoveError(f"migrate-to copies into PostgreSQL: {url.split('://')[0]}:// is not postgresql://")
    source_settings = settings.with_overrides(database_url=None)
    if not source_settings.db_path.exists():
        raise MoveError(f"no SQLite database to copy: {source_settings.db_path} does not exist")
    with Database(source_settings) as source, Database(settings.with_overrides(database_url=url)) as target:
        if calibration_path(settings).exists():
            with source.write() as conn:
                import_calibration_file(settings, conn)
        with source.read() as reading, target.write() as writing:
            tables = _tables(reading, writing)
            _check_empty(writing, tables)
            counts = [TableCount(t.name, _copy(reading, writing, t), _count(writing, t)) for t in tables]
            _advance_sequences(writing, tables)
            if not all(c.ok for c in counts):
                raise MoveError("counts differ after the copy; nothing was committed: " + _summary(counts))
    return counts


def _register_tables() -> None:
    """Import every module that defines tables, so they are all in `metadata`."""
    import docubot.cache.answers
    import docubot.calllog
    import docubot.rag.threshold
    import docubot.server.users
    import docubot.sessions.tables
    import docubot.store.sql  # noqa: F401


def _tables(source: Connection, target: Connection) -> list[Table]:
    """The source's tables in foreign-key order: the code's definitions (types converted both
    ways: SQLite integers to booleans, text to timestamps), else reflected from the target."""
    names = set(inspect(source).get_table_names()) - SKIPPED
    missing = names - set(inspect(target).get_table_names())
    if missing:
        raise MoveError(f"the target has no table {', '.join(sorted(missing))}: is it an older release?")
    reflected = MetaData()
    unknown = sorted(names - set(metadata.tables))
    if unknown:
        reflected.reflect(target, only=unknown)
    ordered = [t for t in metadata.sorted_tables if t.name in names]
    return ordered + [reflected.tables[name] for name in unknown]


def _check_empty(target: Connection, tables: list[Table]) -> None:
    full = [f"{t.name} ({n} rows)" for t in tables if (n := _count(target, t))]
    if full:
        raise MoveError(f"the target database is not empty: {', '.join(full)}; migrate-to fills an empty one")


def _copy(source: Connection, target: Connection, table: Table) -> int:
    """Copy every row of `table`; returns how many the source has."""
    rows = source.execute(select(table).execution_options(yield_per=BATCH)).mappings()
    copied = 0
    for part in rows.partitions(BATCH):
        target.execute(table.insert(), [dict(row) for row in part])
        copied += len(part)
    return copied


def _count(conn: Connection, table: Table) -> int:
    return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def _advance_sequences(target: Connection, tables: list[Table]) -> None:
    """Move each serial column's sequence past the ids copied in, so new rows get new ids."""
    for table in tables:
        for column in table.primary_key.columns:
            sequence = target.exec_driver_sql(
                f"SELECT pg_get_serial_sequence('{table.name}', '{column.name}')"
            ).scalar_one()
            if sequence:
                target.exec_driver_sql(
                    f"SELECT setval('{sequence}', COALESCE((SELECT max(\"{column.name}\") "
                    f'FROM "{table.name}"), 0) + 1, false)'
                )


def _summary(counts: list[TableCount]) -> str:
    return ", ".join(f"{c.table} {c.source}→{c.target}" for c in counts if not c.ok)
