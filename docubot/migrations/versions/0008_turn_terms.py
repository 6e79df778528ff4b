"""`session_turn_vectors.analyzer` and `.terms`: each stored message's BM25 term counts, so a
restored session's history selection tokenises only the new question; rows without them are
tokenised once on the next turn and saved."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("session_turn_vectors", sa.Column("analyzer", sa.String(200)))
    op.add_column("session_turn_vectors", sa.Column("terms", sa.Text))
