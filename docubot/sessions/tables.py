"""The session tables, in the deployment's database (SQLite file or PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
)

from docubot.db import metadata

sessions = Table(
    "sessions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("user", String(200), nullable=False),
    Column("title", Text, nullable=False, default=""),
    Column("policy", String(100), nullable=False),
    Column("summary", Text, nullable=False, default=""),
    Column("summarized_turns", Integer, nullable=False, default=0),
    Column("turns", Integer, nullable=False, default=0),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Index("sessions_user", "user", "updated_at"),
    Index("sessions_expiry", "expires_at"),
)


def _session_fk() -> ForeignKey:
    return ForeignKey("sessions.id", ondelete="CASCADE")


session_turns = Table(
    "session_turns",
    metadata,
    Column("session_id", String(64), _session_fk(), primary_key=True),
    Column("turn", Integer, primary_key=True),
    Column("question", Text, nullable=False),
    Column("answer", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)
"""One row per answered turn: the question and the whole answer (contract, sources, outcome)."""

session_facts = Table(
    "session_facts",
    metadata,
    Column("session_id", String(64), _session_fk(), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("kind", String(50), nullable=False),
    Column("value", Text, nullable=False),
    Column("at", Float, nullable=False),
)
"""The user-profile facts gathered in the session, in order."""

session_usage = Table(
    "session_usage",
    metadata,
    Column("session_id", String(64), _session_fk(), primary_key=True),
    Column("turn", Integer, primary_key=True),
    Column("policy", String(100), nullable=False),
    Column("input_tokens", Integer, nullable=False),
    Column("output_tokens", Integer, nullable=False),
    Column("calls", Integer, nullable=False),
    Column("latency_ms", Float, nullable=False),
    Column("outcome", String(40), nullable=False),
    Column("rewrite", Text),
)
"""The usage ledger: every model call a turn made."""

turn_feedback = Table(
    "turn_feedback",
    metadata,
    Column("session_id", String(64), primary_key=True),
    Column("turn", Integer, primary_key=True),
    Column("user", String(200), nullable=False),
    Column("rating", String(8), nullable=False),
    Column("comment", Text),
    Column("updated_at", Float, nullable=False),
    ForeignKeyConstraint(
        ["session_id", "turn"], ["session_turns.session_id", "session_turns.turn"], ondelete="CASCADE"
    ),
    CheckConstraint("rating IN ('up', 'down')", name="turn_feedback_rating"),
    Index("turn_feedback_user", "user"),
)
"""The owner's 👍/👎 on a turn, with an optional comment: one row per turn, erased with it."""

session_turn_vectors = Table(
    "session_turn_vectors",
    metadata,
    Column("session_id", String(64), _session_fk(), primary_key=True),
    Column("turn", Integer, primary_key=True),
    Column("role", String(10), primary_key=True),
    Column("embedding_model", String(200)),
    Column("dim", Integer),
    Column("vector", LargeBinary),
    Column("tokenizer", String(200)),
    Column("tokens", Integer),
    Column("analyzer", String(200)),
    Column("terms", Text),
)
"""Per message of a turn (role user/assistant): its vector under `embedding_model` (float32 bytes),
its token count under `tokenizer` and its BM25 term counts under `analyzer` (a JSON object), so
history selection never embeds, counts or tokenises it again. Any may be missing (a message counted
but not yet embedded); another model's or analyzer's are recomputed."""
