"""PostgreSQL with pgvector: the `vector` extension and a `chunks.embedding_vec` column.

PostgreSQL only, and only where the extension can be created (it ships with the server, and the
role may create it); otherwise nothing changes here and `open_store` says what is missing. The
column is filled from the float32 blobs (which stay: they are the portable copy) by the store.
SQLite is unaffected.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql" or not _create_extension(bind):
        return
    op.execute("ALTER TABLE chunks ADD COLUMN IF NOT EXISTS embedding_vec vector")
    op.execute(
        "CREATE INDEX IF NOT EXISTS chunks_vec_missing ON chunks (rowid) WHERE embedding_vec IS NULL"
    )


def _create_extension(bind: sa.Connection) -> bool:
    """Create `vector` if the server has it and the role may; False (and no harm done) otherwise."""
    available = bind.execute(sa.text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).first()
    if available is None:
        return False
    try:
        with bind.begin_nested():
            bind.execute(sa.text("CREATE EXTENSION IF NOT EXISTS vector"))
    except sa.exc.DBAPIError:
        return False
    return True
