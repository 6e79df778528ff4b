"""The call log: one row per question answered, in the deployment's database.

It is how one tells a retrieval failure (wrong chunks, low similarities) from a generation
failure (right chunks, wrong answer): `docubot logs`.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import (
    Column,
    ColumnElement,
    Float,
    Integer,
    Select,
    Table,
    Text,
    case,
    delete,
    func,
    insert,
    select,
)

from docubot.db import Database, metadata

calls = Table(
    "calls",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("ts", Float, nullable=False),
    Column("question", Text, nullable=False),
    Column("filters", Text, nullable=False),
    Column("retrieved", Text, nullable=False),
    Column("prompt_version", Text, nullable=False),
    Column("provider", Text, nullable=False),
    Column("tokens_in", Integer, nullable=False),
    Column("tokens_out", Integer, nullable=False),
    Column("retrieval_ms", Float, nullable=False),
    Column("first_token_ms", Float),
    Column("total_ms", Float, nullable=False),
    Column("answer", Text, nullable=False),
    Column("outcome", Text, nullable=False),
    Column("grounded", Integer),
    Column("error", Text),
    Column("attempts", Integer, nullable=False, server_default="1"),
    Column("retrieval_question", Text),
    Column("user", Text),
    Column("session_id", Text),
    Column("cache", Text),
    Column("checks", Text),
)
_JSON_FIELDS = ("filters", "retrieved", "answer", "checks")


@dataclass
class CallRecord:
    question: str
    filters: dict[str, Any]
    retrieved: list[dict[str, Any]]
    prompt_version: str
    provider: str
    outcome: str
    answer: dict[str, Any]
    tokens_in: int = 0
    tokens_out: int = 0
    retrieval_ms: float = 0.0
    first_token_ms: float | None = None
    total_ms: float = 0.0
    grounded: bool | None = None
    error: str | None = None
    attempts: int = 1
    retrieval_question: str | None = None
    """The standalone rewrite of a follow-up, when retrieval used one."""
    user: str | None = None
    session_id: str | None = None
    cache: str | None = None
    """exact | semantic when the answer was served from a cache."""
    checks: list[dict[str, Any]] | None = None
    """Each check made on the way (refusal decision, focus, quotes, claims, words); None in calls
    logged before checks were."""
    ts: float = field(default_factory=time.time)
    id: int | None = None


class CallLog:
    """The `calls` table of the deployment's database (the caller owns `db`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(self, call: CallRecord) -> int:
        data = asdict(call)
        data.pop("id")
        for key in _JSON_FIELDS:
            data[key] = None if data[key] is None else json.dumps(data[key], ensure_ascii=False)
        if data["grounded"] is not None:
            data["grounded"] = int(data["grounded"])
        with self.db.write() as conn:
            call.id = int(conn.execute(insert(calls).values(**data).returning(calls.c.id)).scalar_one())
        return call.id

    def last(self, n: int = 20) -> list[CallRecord]:
        """The `n` most recent calls, newest first."""
        return self._records(select(calls).order_by(calls.c.id.desc()).limit(n))

    def for_user(self, user: str) -> list[CallRecord]:
        """Every call asked for `user`, oldest first."""
        return self._records(select(calls).where(calls.c.user == user).order_by(calls.c.id))

    def _records(self, query: Select[Any]) -> list[CallRecord]:
        with self.db.read() as conn:
            rows = conn.execute(query).mappings().all()
        out = []
        for row in rows:
            data = dict(row)
            for key in _JSON_FIELDS:
                data[key] = None if data[key] is None else json.loads(data[key])
            data["grounded"] = None if data["grounded"] is None else bool(data["grounded"])
            out.append(CallRecord(**data))
        return out

    def cache_counts(self) -> dict[str, int]:
        """How many calls were answered: in all, from the exact cache, from the semantic cache."""
        with self.db.read() as conn:
            total, exact, semantic = conn.execute(
                select(
                    func.count(),
                    _count_where(calls.c.cache == "exact"),
                    _count_where(calls.c.cache == "semantic"),
                )
            ).one()
        return {"calls": int(total), "exact": int(exact), "semantic": int(semantic)}

    def delete_user(self, user: str) -> int:
        """Erase every call asked for `user`; returns how many rows went."""
        with self.db.write() as conn:
            return int(conn.execute(delete(calls).where(calls.c.user == user)).rowcount or 0)

    def delete_expired(self, session_ids: list[str], before: float) -> int:
        """Erase the calls of `session_ids` and every call made before `before` (retention)."""
        with self.db.write() as conn:
            condition = (calls.c.ts <= before) | calls.c.session_id.in_(session_ids)
            return int(conn.execute(delete(calls).where(condition)).rowcount or 0)


def _count_where(condition: ColumnElement[bool]) -> ColumnElement[int]:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)
