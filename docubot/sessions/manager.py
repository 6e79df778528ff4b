"""The session manager: one persistent conversation per (user, session), isolated by owner.

The user always comes from authentication; every lookup is by (id, user), so another user's id
behaves exactly like an unknown one. Each answered turn is stored in one transaction (question,
answer, running summary, new profile facts, usage), after the answer and only if it succeeded:
a crash, an error or a client that goes away mid-answer stores nothing.

Turns on one session are serialised in-process by a lock. Across processes, the turn is committed
only if the session still has the turn count it was answered from; otherwise the conversation is
reloaded and the question answered again on the new history (optimistic concurrency: no database
lock is held during the tens of seconds of an LLM call).
"""

from __future__ import annotations

import builtins
import json
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import Connection, case, delete, insert, select, tuple_, update

from docubot.cache.answers import erase_sessions, evict_expired
from docubot.calllog import CallLog
from docubot.chat import lexical
from docubot.chat.conversation import DEFAULT_POLICY, Conversation, TurnUsage, make_policy
from docubot.chat.memory import MessageFeatures, MessageMemory
from docubot.chat.policies import ConversationState
from docubot.chat.profile import Fact, UserProfile
from docubot.config import Settings
from docubot.db import Database
from docubot.llm import Message
from docubot.rag.answer import AskResult, DocuBot
from docubot.sessions.ids import new_session_id, validated
from docubot.sessions.tables import (
    session_facts,
    session_turn_vectors,
    session_turns,
    session_usage,
    sessions,
    turn_feedback,
)

TITLE_CHARS = 80
LIVE_CONVERSATIONS = 256
"""Conversations kept in memory (least recently used go first; they reload from the database)."""
COMMIT_ATTEMPTS = 10


class SessionNotFound(LookupError):
    """No such session for this user (unknown, expired, or owned by someone else)."""


class SessionBusy(RuntimeError):
    """Other processes kept appending turns to the session; the answer was not stored."""


@dataclass(frozen=True)
class SessionInfo:
    id: str
    user: str
    title: str
    created_at: float
    updated_at: float
    expires_at: float
    turns: int
    policy: str


@dataclass(frozen=True)
class AnsweredTurn:
    """An answer and the turn number it was committed as."""

    result: AskResult
    turn: int


@dataclass(frozen=True)
class SessionTurn:
    turn: int
    question: str
    answer: dict[str, Any]
    created_at: float
    feedback: dict[str, Any] | None = None
    """The owner's `{"rating", "comment", "updated_at"}` on this answer, if any."""


class SessionManager:
    """Creates, loads, answers in, and erases sessions (see the module doc)."""

    def __init__(self, settings: Settings, bot: DocuBot, db: Database) -> None:
        self.settings = settings
        self.bot = bot
        self.db = db
        self.ttl_s = settings.session_ttl_days * 86400
        self._live: OrderedDict[str, Conversation] = OrderedDict()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    # -- sessions -------------------------------------------------------------------------------
    def create(self, user: str, policy: str | None = None) -> SessionInfo:
        policy = policy or DEFAULT_POLICY
        make_policy(policy, self.bot, None)  # PolicyError for a bad name, before anything is stored
        now = time.time()
        row = {
            "id": new_session_id(),
            "user": user,
            "title": "",
            "policy": policy,
            "summary": "",
            "summarized_turns": 0,
            "turns": 0,
            "created_at": now,
            "updated_at": now,
            "expires_at": now + self.ttl_s,
        }
        with self.db.write() as conn:
            conn.execute(insert(sessions).values(**row))
        return _info(row)

    def list(self, user: str) -> list[SessionInfo]:
        """The user's live sessions, most recently used first."""
        with self.db.read() as conn:
            rows = conn.execute(
                select(sessions)
                .where(sessions.c.user == user, sessions.c.expires_at > time.time())
                .order_by(sessions.c.updated_at.desc())
            ).mappings()
            return [_info(r) for r in rows]

    def get(self, user: str, session_id: str) -> SessionInfo:
        with self.db.read() as conn:
            return _info(self._row(conn, user, session_id))

    def turns(self, user: str, session_id: str) -> builtins.list[SessionTurn]:
        with self.db.read() as conn:
            self._row(conn, user, session_id)
            rows = conn.execute(
                select(
                    session_turns, turn_feedback.c.rating, turn_feedback.c.comment, turn_feedback.c.updated_at
                )
                .outerjoin(
                    turn_feedback,
                    (turn_feedback.c.session_id == session_turns.c.session_id)
                    & (turn_feedback.c.turn == session_turns.c.turn),
                )
                .where(session_turns.c.session_id == session_id)
                .order_by(session_turns.c.turn)
            ).mappings()
            return [
                SessionTurn(
                    r["turn"],
                    r["question"],
                    json.loads(r["answer"]),
                    r["created_at"],
                    _feedback(r),
                )
                for r in rows
            ]

    def rename(self, user: str, session_id: str, title: str) -> SessionInfo:
        """Give the session the user's own title (whitespace collapsed, cut at TITLE_CHARS); the
        first question no longer names it."""
        with self.db.write() as conn:
            self._row(conn, user, session_id)
            conn.execute(update(sessions).where(sessions.c.id == session_id).values(title=_title(title)))
            return _info(self._row(conn, user, session_id))

    def delete(self, user: str, session_id: str) -> None:
        with self.db.write() as conn:
            self._row(conn, user, session_id)
            _delete_sessions(conn, [session_id])
        self._drop(session_id)

    # -- answering ------------------------------------------------------------------------------
    def send(
        self,
        user: str,
        session_id: str,
        text: str,
        on_text: Callable[[str], None] | None = None,
        on_status: Callable[[str], None] | None = None,
    ) -> AskResult:
        """Answer `text` in the session and store the turn; nothing is stored if anything fails."""
        return self.answer(user, session_id, text, on_text, on_status).result

    def answer(
        self,
        user: str,
        session_id: str,
        text: str,
        on_text: Callable[[str], None] | None = None,
        on_status: Callable[[str], None] | None = None,
    ) -> AnsweredTurn:
        """`send`, also returning the turn number the answer was committed as."""
        validated(session_id)
        with self._lock_for(session_id):
            for _ in range(COMMIT_ATTEMPTS):
                conversation, base_turns = self._conversation(user, session_id)
                facts_before = len(conversation.profile.facts)
                try:
                    result = conversation.send(text, on_text=on_text, on_status=on_status)
                except BaseException:
                    self._forget(session_id)
                    raise
                if self._commit(conversation, base_turns, facts_before, text, result):
                    return AnsweredTurn(result, base_turns + 1)
                self._forget(session_id)
                self._unless_erased(user, session_id)
                on_text = None  # another process appended a turn: answer again on the new history
                time.sleep(random.uniform(0, 0.05))
        raise SessionBusy(f"session {session_id} kept changing under this answer; try again")

    # -- retention and privacy ------------------------------------------------------------------
    def purge_expired(self, now: float | None = None) -> int:
        """Hard-delete every session past its expiry, with every copy of its text (call-log rows,
        cached answers), and every call-log row and cached answer older than the session TTL;
        returns how many sessions went."""
        moment = time.time() if now is None else now
        with self.db.write() as conn:
            ids = list(conn.execute(select(sessions.c.id).where(sessions.c.expires_at <= moment)).scalars())
            _delete_sessions(conn, ids)
        for session_id in ids:
            self._drop(session_id)
        self._erase_copies(ids, before=moment - self.ttl_s)
        return len(ids)

    def delete_user(self, user: str) -> dict[str, int]:
        """Erase everything stored about `user`: sessions, call-log rows, their cached answers…"""
        with self.db.write() as conn:
            ids = list(conn.execute(select(sessions.c.id).where(sessions.c.user == user)).scalars())
            _delete_sessions(conn, ids)
        for session_id in ids:
            self._drop(session_id)
        erasers = self.bot.components.user_erasers
        return {"sessions": len(ids), **{name: erase(user) for name, erase in erasers.items()}}

    def export_user(self, user: str) -> dict[str, Any]:
        """Everything stored about `user`, as JSON-ready data."""
        exported = []
        with self.db.read() as conn:
            rows = conn.execute(select(sessions).where(sessions.c.user == user)).mappings().all()
            for row in rows:
                exported.append(
                    {
                        **dict(row),
                        "turns": [
                            {**t, "answer": json.loads(t["answer"])}
                            for t in _rows(conn, session_turns, row["id"])
                        ],
                        "facts": _rows(conn, session_facts, row["id"]),
                        "feedback": _rows(conn, turn_feedback, row["id"]),
                        "usage": _rows(conn, session_usage, row["id"]),
                    }
                )
        calls = [c.__dict__ for c in CallLog(self.db).for_user(user)]
        return {"user": user, "exported_at": time.time(), "sessions": exported, "calls": calls}

    # -- internals ------------------------------------------------------------------------------
    def _unless_erased(self, user: str, session_id: str) -> None:
        """After a failed commit: if the session was erased while answering, erase what this answer
        wrote meanwhile (its call-log row, its cached answer) and raise SessionNotFound."""
        with self.db.read() as conn:
            found = conn.execute(
                select(sessions.c.id).where(sessions.c.id == session_id, sessions.c.user == user)
            ).first()
        if found is None:
            self._erase_copies([session_id])
            self._drop(session_id)
            raise SessionNotFound(f"no session {session_id}")

    def _erase_copies(self, session_ids: builtins.list[str], before: float = 0.0) -> None:
        """Delete the call-log rows and cached answers of `session_ids`, and those made before `before`."""
        CallLog(self.db).delete_expired(session_ids, before)
        erase_sessions(self.db, session_ids)
        if before > 0:
            evict_expired(self.db, created_before=before)

    def _row(self, conn: Connection, user: str, session_id: str) -> Any:
        validated(session_id)
        row = (
            conn.execute(
                select(sessions).where(
                    sessions.c.id == session_id,
                    sessions.c.user == user,
                    sessions.c.expires_at > time.time(),
                )
            )
            .mappings()
            .first()
        )
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return row

    def _conversation(self, user: str, session_id: str) -> tuple[Conversation, int]:
        """The live conversation, reloaded when the database has turns it does not."""
        with self.db.read() as conn:
            row = self._row(conn, user, session_id)
            live = self._live.get(session_id)
            if live is not None and len(live.state.messages) == 2 * row["turns"]:
                self._live.move_to_end(session_id)
                return live, row["turns"]
            conversation = self._load(conn, row)
        self._live[session_id] = conversation
        if len(self._live) > LIVE_CONVERSATIONS:
            self._live.popitem(last=False)
        return conversation, row["turns"]

    def _load(self, conn: Connection, row: Any) -> Conversation:
        session_id = row["id"]
        turns = conn.execute(
            select(session_turns.c.question, session_turns.c.answer, session_turns.c.created_at)
            .where(session_turns.c.session_id == session_id)
            .order_by(session_turns.c.turn)
        ).all()
        messages: list[Message] = []
        for question, answer, _ in turns:
            messages += [Message("user", question), Message("assistant", json.loads(answer)["resposta"])]
        facts = conn.execute(
            select(session_facts.c.kind, session_facts.c.value, session_facts.c.at)
            .where(session_facts.c.session_id == session_id)
            .order_by(session_facts.c.seq)
        ).all()
        usage = conn.execute(
            select(session_usage)
            .where(session_usage.c.session_id == session_id)
            .order_by(session_usage.c.turn)
        ).mappings()
        state = ConversationState(
            messages,
            row["summary"],
            row["summarized_turns"],
            times=[at for _, _, at in turns],
            memory=_load_memory(conn, session_id, messages),
        )
        return Conversation(
            self.bot,
            policy_name=row["policy"],
            state=state,
            profile=UserProfile([Fact(k, v, at) for k, v, at in facts]),
            ledger=[TurnUsage(**{k: v for k, v in u.items() if k != "session_id"}) for u in usage],
            user=row["user"],
            session_id=session_id,
        )

    def _commit(
        self, conversation: Conversation, base_turns: int, facts_before: int, text: str, result: AskResult
    ) -> bool:
        """Store the turn just answered, if the session is still at `base_turns`; one transaction."""
        session_id = conversation.session_id
        turn = base_turns + 1
        now = time.time()
        asked_at = conversation.state.times[-1] if len(conversation.state.times) == turn else now
        values: dict[str, Any] = {
            "turns": turn,
            "updated_at": now,
            "expires_at": now + self.ttl_s,
            "summary": conversation.state.summary,
            "summarized_turns": conversation.state.summarized_turns,
        }
        if base_turns == 0:  # named by its first question, unless the user renamed it already
            values["title"] = case((sessions.c.title == "", _title(text)), else_=sessions.c.title)
        with self.db.write() as conn:
            moved = conn.execute(
                update(sessions)
                .where(sessions.c.id == session_id, sessions.c.turns == base_turns)
                .values(**values)
            ).rowcount
            if moved != 1:
                return False
            conn.execute(
                insert(session_turns).values(
                    session_id=session_id,
                    turn=turn,
                    question=text,
                    answer=json.dumps(result.to_dict(), ensure_ascii=False),
                    created_at=asked_at,
                )
            )
            _save_memory(conn, str(session_id), conversation.state.memory)
            new_facts = conversation.profile.facts[facts_before:]
            if new_facts:
                conn.execute(
                    insert(session_facts),
                    [
                        {
                            "session_id": session_id,
                            "seq": facts_before + i,
                            "kind": f.kind,
                            "value": f.value,
                            "at": f.at,
                        }
                        for i, f in enumerate(new_facts)
                    ],
                )
            usage = conversation.ledger[-1]
            conn.execute(
                insert(session_usage).values(session_id=session_id, **{**usage.__dict__, "turn": turn})
            )
        conversation.state.memory.pending.clear()
        return True

    def _lock_for(self, session_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(session_id, threading.Lock())

    def _forget(self, session_id: str) -> None:
        """Drop the in-memory conversation: the next turn reloads it from the database."""
        self._live.pop(session_id, None)

    def _drop(self, session_id: str) -> None:
        """Forget a deleted session entirely, its lock included."""
        self._forget(session_id)
        with self._guard:
            self._locks.pop(session_id, None)


def _delete_sessions(conn: Connection, ids: list[str]) -> None:
    if not ids:
        return
    for table in (
        turn_feedback,
        session_turns,
        session_facts,
        session_usage,
        session_turn_vectors,
    ):  # explicit: no reliance on cascades
        conn.execute(delete(table).where(table.c.session_id.in_(ids)))
    conn.execute(delete(sessions).where(sessions.c.id.in_(ids)))


ROLES = ("user", "assistant")


def _load_memory(conn: Connection, session_id: str, messages: builtins.list[Message]) -> MessageMemory:
    """The stored vectors, token counts and term counts of the session's messages."""
    memory = MessageMemory()
    rows = conn.execute(
        select(session_turn_vectors).where(session_turn_vectors.c.session_id == session_id)
    ).mappings()
    for r in rows:
        position = 2 * (r["turn"] - 1) + ROLES.index(r["role"])
        if position >= len(messages):
            continue
        vector = None if r["vector"] is None else np.frombuffer(r["vector"], dtype=np.float32)
        terms = None if r["terms"] is None else lexical.loads(r["terms"])
        features = MessageFeatures(
            0, vector, r["embedding_model"], r["tokens"], r["tokenizer"], terms, r["analyzer"]
        )
        memory.restore(position, messages[position].content, features)
    return memory


def _save_memory(conn: Connection, session_id: str, memory: MessageMemory) -> None:
    """Store the features computed since the last save (replacing those of an older model)."""
    if not memory.pending:
        return
    keys = [(p // 2 + 1, ROLES[p % 2]) for p in sorted(memory.pending)]
    table = session_turn_vectors
    conn.execute(
        delete(table).where(table.c.session_id == session_id, tuple_(table.c.turn, table.c.role).in_(keys))
    )
    rows = []
    for position, (turn, role) in zip(sorted(memory.pending), keys, strict=True):
        f = memory.entries[position]
        rows.append(
            {
                "session_id": session_id,
                "turn": turn,
                "role": role,
                "embedding_model": f.embedding_model,
                "dim": None if f.vector is None else int(f.vector.shape[0]),
                "vector": None if f.vector is None else f.vector.astype(np.float32).tobytes(),
                "tokenizer": f.tokenizer,
                "tokens": f.tokens,
                "analyzer": f.analyzer,
                "terms": None if f.terms is None else lexical.dumps(f.terms),
            }
        )
    conn.execute(insert(table), rows)


def _rows(conn: Connection, table: Any, session_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(select(table).where(table.c.session_id == session_id)).mappings()
    return [{k: v for k, v in r.items() if k != "session_id"} for r in rows]


def _feedback(row: Any) -> dict[str, Any] | None:
    """A turn's feedback from its outer-joined columns (None when it has none)."""
    if row["rating"] is None:
        return None
    return {"rating": row["rating"], "comment": row["comment"], "updated_at": row["updated_at"]}


def _info(row: Any) -> SessionInfo:
    return SessionInfo(
        row["id"],
        row["user"],
        row["title"],
        row["created_at"],
        row["updated_at"],
        row["expires_at"],
        row["turns"],
        row["policy"],
    )


def _title(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
