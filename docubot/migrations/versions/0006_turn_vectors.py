"""`session_turn_vectors`: each stored turn's message vectors and token counts (history selection
reuses them instead of embedding and counting the whole history again); erased with the session."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_turn_vectors",
        sa.Column(
            "session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("turn", sa.Integer, primary_key=True),
        sa.Column("role", sa.String(10), primary_key=True),
        sa.Column("embedding_model", sa.String(200)),
        sa.Column("dim", sa.Integer),
        sa.Column("vector", sa.LargeBinary),
        sa.Column("tokenizer", sa.String(200)),
        sa.Column("tokens", sa.Integer),
    )
