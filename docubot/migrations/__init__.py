"""The database schema's history (Alembic), applied on every open: `upgrade(db)`.

A new schema change is a new file in `versions/` (next number, `down_revision` = the previous
one) using `alembic.op`; the table definitions in the code follow the newest revision. The first
revision is the schema of the release before migrations existed: it creates only what is missing,
so a database made by that release (no `alembic_version` table) is adopted, stamped, and upgraded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

if TYPE_CHECKING:
    from docubot.db import Database

FOLDER = Path(__file__).parent
PG_LOCK_ID = 0x0D0C_B07
"""PostgreSQL advisory lock that serialises processes migrating the same database at once."""


def alembic_config() -> Config:
    """A Config pointing at this package's scripts (no alembic.ini)."""
    config = Config()
    config.set_main_option("script_location", str(FOLDER))
    return config


def head() -> str:
    """The newest revision."""
    return str(ScriptDirectory.from_config(alembic_config()).get_current_head())


def current(db: Database) -> str | None:
    """The revision the database is at (None: never migrated)."""
    with db.read() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(db: Database) -> None:
    """Bring the database to the newest revision, in one write transaction (none when it is there)."""
    if current(db) == head():
        return  # the common case: no write lock taken just to open
    config = alembic_config()
    with db.write() as conn:
        if not db.is_sqlite:
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_LOCK_ID})")
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
