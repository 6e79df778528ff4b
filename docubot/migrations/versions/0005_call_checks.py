"""The call log records each check made on an answer (`calls.checks`, JSON): the refusal
decision, the focused context, and the quotes, claims and words of every attempt."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("calls", sa.Column("checks", sa.Text))
