"""API users: a bearer key identifies each one; only its SHA-256 is stored.

Keys are 256 random bits, so a fast hash is enough (there is nothing to brute-force, unlike a
password) and a lookup by hash is a single indexed query. The key is shown once, at creation.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass

from sqlalchemy import Boolean, Column, Float, String, Table, delete, insert, select

from docubot.db import Database, metadata

KEY_PREFIX = "dbk_"
_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,100}")

users = Table(
    "users",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("admin", Boolean, nullable=False, default=False),
    Column("created_at", Float, nullable=False),
)


class UserError(ValueError):
    """A bad user name, or one that exists already / does not exist."""


@dataclass(frozen=True)
class User:
    name: str
    admin: bool
    created_at: float


class UserStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, name: str, admin: bool = False) -> tuple[User, str]:
        """Create a user; returns it with its API key (the only time the key exists in clear)."""
        if not _NAME.fullmatch(name):
            raise UserError(f"invalid user name {name!r}: 1-100 characters from A-Z a-z 0-9 _ . @ -")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        user = User(name, admin, time.time())
        with self.db.write() as conn:
            if conn.execute(select(users.c.name).where(users.c.name == name)).first():
                raise UserError(f"user {name!r} exists already")
            conn.execute(
                insert(users).values(name=name, key_hash=_hash(key), admin=admin, created_at=user.created_at)
            )
        return user, key

    def authenticate(self, key: str) -> User | None:
        if not key.startswith(KEY_PREFIX):
            return None
        with self.db.read() as conn:
            row = conn.execute(select(users).where(users.c.key_hash == _hash(key))).mappings().first()
        return User(row["name"], bool(row["admin"]), row["created_at"]) if row else None

    def list(self) -> list[User]:
        with self.db.read() as conn:
            rows = conn.execute(select(users).order_by(users.c.name)).mappings()
            return [User(r["name"], bool(r["admin"]), r["created_at"]) for r in rows]

    def remove(self, name: str) -> None:
        with self.db.write() as conn:
            if conn.execute(delete(users).where(users.c.name == name)).rowcount == 0:
                raise UserError(f"no user {name!r}")


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
