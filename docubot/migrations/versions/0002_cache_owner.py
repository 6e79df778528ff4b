"""Cached answers record whose question made them (`owner`) and in which session (`session_id`),
so erasing a user or purging a session also removes the shared entries made from their words."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("cached_answers", sa.Column("owner", sa.String(200)))
    op.add_column("cached_answers", sa.Column("session_id", sa.String(64)))
