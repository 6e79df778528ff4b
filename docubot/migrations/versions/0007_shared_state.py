"""State that used to be local files, shared through the database: the refusal calibration
(`calibration`, every backend) and PostgreSQL's full-text keyword index (`chunk_fts`, PostgreSQL
only: a `tsvector` per chunk in its language's configuration, with a GIN index).

`calibration.json` of an older data folder is read in when a calibration is first looked up
(`docubot/rag/threshold.py`), not here: the migration knows no data folder.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "calibration",
        sa.Column("embedding_model", sa.Text, primary_key=True),
        sa.Column("kind", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE TABLE chunk_fts ("
        " chunk_id TEXT PRIMARY KEY REFERENCES chunks (id) ON DELETE CASCADE,"
        " language TEXT NOT NULL,"
        " tokens INTEGER NOT NULL,"
        " tsv TSVECTOR NOT NULL)"
    )
    op.execute("CREATE INDEX chunk_fts_tsv ON chunk_fts USING gin (tsv)")
