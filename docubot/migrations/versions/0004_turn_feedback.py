"""Feedback on answers: `turn_feedback`, the session owner's 👍/👎 and optional comment per turn,
deleted with the turn (cascade) and so with its session and its user."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "turn_feedback",
        sa.Column("session_id", sa.String(64), primary_key=True),
        sa.Column("turn", sa.Integer, primary_key=True),
        sa.Column("user", sa.String(200), nullable=False),
        sa.Column("rating", sa.String(8), nullable=False),
        sa.Column("comment", sa.Text),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id", "turn"], ["session_turns.session_id", "session_turns.turn"], ondelete="CASCADE"
        ),
        sa.CheckConstraint("rating IN ('up', 'down')", name="turn_feedback_rating"),
    )
    op.create_index("turn_feedback_user", "turn_feedback", ["user"])
