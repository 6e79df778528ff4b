"""The schema of the release before migrations: chunks and vectors, call log, sessions, users, caches.

Only what is missing is created, and the call log gains the columns added after its first
release: a database made by an earlier release (no `alembic_version`) is adopted as it is.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

METADATA_TEXT = ("url", "page_title", "section_title", "section_path", "version", "date", "source_path")
CALL_COLUMNS_ADDED_LATER = ("retrieval_question", "user", "session_id", "cache")


def upgrade() -> None:
    existing = set(sa.inspect(op.get_bind()).get_table_names())
    for name, create in _TABLES.items():
        if name not in existing:
            create()
    if "calls" in existing:
        _complete_calls()


def _meta() -> None:
    op.create_table(
        "meta", sa.Column("key", sa.Text, primary_key=True), sa.Column("value", sa.Text, nullable=False)
    )


def _chunks() -> None:
    op.create_table(
        "chunks",
        sa.Column("rowid", sa.Integer, primary_key=True),
        sa.Column("id", sa.Text, nullable=False, unique=True),
        sa.Column("text", sa.Text, nullable=False),
        *(sa.Column(name, sa.Text) for name in METADATA_TEXT),
        sa.Column("chunk_index", sa.Integer),
        sa.Column("content_hash", sa.Text),
        sa.Column("chunker_version", sa.Text),
        sa.Column("latest", sa.Integer),
        sa.Column("embedding", sa.LargeBinary, nullable=False),
    )
    op.create_index("chunks_hash", "chunks", ["content_hash"])


def _calls() -> None:
    op.create_table(
        "calls",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("ts", sa.Float, nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("filters", sa.Text, nullable=False),
        sa.Column("retrieved", sa.Text, nullable=False),
        sa.Column("prompt_version", sa.Text, nullable=False),
        sa.Column("provider", sa.Text, nullable=False),
        sa.Column("tokens_in", sa.Integer, nullable=False),
        sa.Column("tokens_out", sa.Integer, nullable=False),
        sa.Column("retrieval_ms", sa.Float, nullable=False),
        sa.Column("first_token_ms", sa.Float),
        sa.Column("total_ms", sa.Float, nullable=False),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("grounded", sa.Integer),
        sa.Column("error", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="1"),
        *(sa.Column(name, sa.Text) for name in CALL_COLUMNS_ADDED_LATER),
    )


def _complete_calls() -> None:
    present = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("calls")}
    for name in CALL_COLUMNS_ADDED_LATER:
        if name not in present:
            op.add_column("calls", sa.Column(name, sa.Text))


def _sessions() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("user", sa.String(200), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("policy", sa.String(100), nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("summarized_turns", sa.Integer, nullable=False),
        sa.Column("turns", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_index("sessions_user", "sessions", ["user", "updated_at"])
    op.create_index("sessions_expiry", "sessions", ["expires_at"])


def _session_id() -> sa.Column:
    return sa.Column(
        "session_id", sa.String(64), sa.ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
    )


def _session_turns() -> None:
    op.create_table(
        "session_turns",
        _session_id(),
        sa.Column("turn", sa.Integer, primary_key=True),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def _session_facts() -> None:
    op.create_table(
        "session_facts",
        _session_id(),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(50), nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )


def _session_usage() -> None:
    op.create_table(
        "session_usage",
        _session_id(),
        sa.Column("turn", sa.Integer, primary_key=True),
        sa.Column("policy", sa.String(100), nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("calls", sa.Integer, nullable=False),
        sa.Column("latency_ms", sa.Float, nullable=False),
        sa.Column("outcome", sa.String(40), nullable=False),
        sa.Column("rewrite", sa.Text),
    )


def _users() -> None:
    op.create_table(
        "users",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("admin", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def _cached_answers() -> None:
    op.create_table(
        "cached_answers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(64), nullable=False, unique=True),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("context_key", sa.String(64), nullable=False),
        sa.Column("corpus_version", sa.Integer, nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("embedding", sa.LargeBinary, nullable=False),
        sa.Column("result", sa.Text, nullable=False),
        sa.Column("tokens", sa.Integer, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("exact_hits", sa.Integer, nullable=False),
        sa.Column("semantic_hits", sa.Integer, nullable=False),
    )
    op.create_index("cached_answers_lookup", "cached_answers", ["context_key", "corpus_version", "scope"])


_TABLES = {
    "meta": _meta,
    "chunks": _chunks,
    "calls": _calls,
    "sessions": _sessions,
    "session_turns": _session_turns,
    "session_facts": _session_facts,
    "session_usage": _session_usage,
    "users": _users,
    "cached_answers": _cached_answers,
}
