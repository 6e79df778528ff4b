"""The call log: one row per question answered, in the data folder's SQLite file.

It is how one tells a retrieval failure (wrong chunks, low similarities) from a generation
failure (right chunks, wrong answer): `docubot logs`.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from docubot.store.sqlite import connect

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    question TEXT NOT NULL,
    filters TEXT NOT NULL,
    retrieved TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    provider TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    retrieval_ms REAL NOT NULL,
    first_token_ms REAL,
    total_ms REAL NOT NULL,
    answer TEXT NOT NULL,
    outcome TEXT NOT NULL,
    grounded INTEGER,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    retrieval_question TEXT,
    user TEXT,
    session_id TEXT,
    cache TEXT
);
"""
_ADDED_COLUMNS = {"retrieval_question": "TEXT", "user": "TEXT", "session_id": "TEXT", "cache": "TEXT"}
"""Columns added after the first release: created on older files when opened."""


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
    ts: float = field(default_factory=time.time)
    id: int | None = None


class CallLog:
    def __init__(self, db_path: Path) -> None:
        self._conn = connect(db_path)
        self._conn.executescript(_SCHEMA)
        existing = {row[1] for row in self._conn.execute("PRAGMA table_info(calls)")}
        for name, kind in _ADDED_COLUMNS.items():
            if name not in existing:
                self._conn.execute(f"ALTER TABLE calls ADD COLUMN {name} {kind}")

    def record(self, call: CallRecord) -> int:
        data = asdict(call)
        data.pop("id")
        for key in ("filters", "retrieved", "answer"):
            data[key] = json.dumps(data[key], ensure_ascii=False)
        columns = ", ".join(data)
        cursor = self._conn.execute(
            f"INSERT INTO calls ({columns}) VALUES ({', '.join('?' * len(data))})", list(data.values())
        )
        call.id = int(cursor.lastrowid or 0)
        return call.id

    def last(self, n: int = 20) -> list[CallRecord]:
        """The `n` most recent calls, newest first."""
        return self._records("SELECT * FROM calls ORDER BY id DESC LIMIT ?", (n,))

    def for_user(self, user: str) -> list[CallRecord]:
        """Every call asked for `user`, oldest first."""
        return self._records("SELECT * FROM calls WHERE user = ? ORDER BY id", (user,))

    def _records(self, query: str, params: tuple[object, ...]) -> list[CallRecord]:
        cursor = self._conn.execute(query, params)
        names = [d[0] for d in cursor.description]
        out = []
        for row in cursor.fetchall():
            data = dict(zip(names, row, strict=True))
            for key in ("filters", "retrieved", "answer"):
                data[key] = json.loads(data[key])
            data["grounded"] = None if data["grounded"] is None else bool(data["grounded"])
            out.append(CallRecord(**data))
        return out

    def cache_counts(self) -> dict[str, int]:
        """How many calls were answered: in all, from the exact cache, from the semantic cache."""
        total, exact, semantic = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(cache = 'exact'), 0), COALESCE(SUM(cache = 'semantic'), 0) "
            "FROM calls"
        ).fetchone()
        return {"calls": int(total), "exact": int(exact), "semantic": int(semantic)}

    def delete_user(self, user: str) -> int:
        """Erase every call asked for `user`; returns how many rows went."""
        return self._conn.execute("DELETE FROM calls WHERE user = ?", (user,)).rowcount

    def delete_expired(self, session_ids: list[str], before: float) -> int:
        """Erase the calls of `session_ids` and every call made before `before` (retention)."""
        marks = ", ".join("?" * len(session_ids)) or "NULL"
        query = f"DELETE FROM calls WHERE ts <= ? OR session_id IN ({marks})"
        return self._conn.execute(query, (before, *session_ids)).rowcount

    def close(self) -> None:
        self._conn.close()
