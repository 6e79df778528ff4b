"""Alembic migrations: a database of the release before them opens and migrates without loss; a new
one gets exactly the tables the code defines, on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

import docubot.cache.answers
import docubot.calllog
import docubot.server.users
import docubot.sessions.tables
import docubot.store.sql  # noqa: F401  (every module defining tables: they register in `metadata`)
from docubot.cache.answers import AnswerCache
from docubot.calllog import CallLog
from docubot.config import Settings
from docubot.db import Database, metadata
from docubot.migrations import current, head
from docubot.rag.answer import DocuBot
from docubot.server.users import UserStore
from docubot.sessions import SessionManager
from docubot.store.pgvector import PG_ONLY

LEGACY = Path(__file__).parent / "fixtures" / "legacy-c38c875.db"
"""Made by tests/fixtures/make_legacy_db.py with the code of commit c38c875."""


def all_rows(path: Path, like: Path | None = None) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table but alembic's, in a stable order; with `like`, only the tables
    and columns `like` has (later migrations add columns)."""
    with sqlite3.connect(like or path) as conn:
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        columns = {n: [c[1] for c in conn.execute(f'PRAGMA table_info("{n}")')] for n in names}
    selects = {n: "SELECT " + ", ".join(f'"{c}"' for c in columns[n]) + f' FROM "{n}"' for n in names}
    with sqlite3.connect(path) as conn:
        return {
            name: sorted(conn.execute(selects[name]).fetchall(), key=repr)
            for name in names
            if name != "alembic_version"
        }


@pytest.fixture
def legacy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A data folder holding a copy of the previous release's database."""
    monkeypatch.setenv("DOCUBOT_CONFIG", str(tmp_path / "no-such-config.toml"))
    settings = Settings(home=tmp_path / "home", llm="none")
    settings.home.mkdir()
    shutil.copyfile(LEGACY, settings.db_path)
    return settings


def test_a_database_of_the_previous_release_opens_and_migrates_without_loss(
    legacy: Settings, embedder
) -> None:
    before = all_rows(legacy.db_path)
    assert "alembic_version" not in before and len(before) == 9
    with Database(legacy) as db:
        assert current(db) == head()
        assert all_rows(legacy.db_path, like=LEGACY) == before  # every row of every table, unchanged
        bot = DocuBot(legacy, embedder=embedder, chat_model=None, db=db)
        assert bot.store.count() == 4 and bot.store.corpus_version() == 1
        [hit] = bot.store.query(embedder.embed_query("Com connecto Slack?"), k=1)
        assert hit.metadata["url"] == "wiki/slack" and hit.metadata["latest"] is True
        [user] = UserStore(db).list()
        assert (user.name, user.admin) == ("anna", True)
        sessions = SessionManager(legacy, bot, db)
        [info] = sessions.list("anna")
        assert [t.question for t in sessions.turns("anna", info.id)] == [
            "Com creo un projecte nou?",
            "I com descarrego les factures en PDF?",
        ]
        assert [c.cache for c in CallLog(db).last(10)] == ["exact", None, None, None]
        assert AnswerCache(legacy, embedder, db).stats(1).exact_hits == 1
        # the old entry was made under the previous prompt version, so it no longer serves; the
        # migrated table caches what the new code answers
        assert bot.ask("Com connecto Slack?").cache is None
        assert bot.ask("Com connecto Slack?").cache == "exact"


def test_opening_twice_changes_nothing(legacy: Settings) -> None:
    Database(legacy).close()
    migrated = all_rows(legacy.db_path)
    with Database(legacy) as db:
        assert current(db) == head()
    assert all_rows(legacy.db_path) == migrated


def test_the_first_releases_call_log_gains_its_later_columns(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    with sqlite3.connect(settings.db_path) as conn:
        conn.execute(
            "CREATE TABLE calls (id INTEGER PRIMARY KEY, ts REAL NOT NULL, question TEXT NOT NULL, "
            "filters TEXT NOT NULL, retrieved TEXT NOT NULL, prompt_version TEXT NOT NULL, "
            "provider TEXT NOT NULL, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL, "
            "retrieval_ms REAL NOT NULL, first_token_ms REAL, total_ms REAL NOT NULL, answer TEXT NOT NULL, "
            "outcome TEXT NOT NULL, grounded INTEGER, error TEXT, attempts INTEGER NOT NULL DEFAULT 1)"
        )
        conn.execute(
            "INSERT INTO calls (ts, question, filters, retrieved, prompt_version, provider, tokens_in, "
            "tokens_out, retrieval_ms, total_ms, answer, outcome) "
            "VALUES (1.0, 'Hola?', '{}', '[]', 'v1', 'none/extractive', 0, 0, 1.0, 2.0, '{}', 'refused')"
        )
    with Database(settings) as db:
        [call] = CallLog(db).last()
        assert (call.question, call.outcome, call.user, call.cache) == ("Hola?", "refused", None, None)
        assert call.checks is None  # logged before checks were
        assert current(db) == head()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_new_database_has_exactly_the_tables_of_the_code(
    backend: str, settings: Settings, request: pytest.FixtureRequest
) -> None:
    if backend == "postgres":
        settings = settings.with_overrides(database_url=request.getfixturevalue("fresh_postgres_url"))
    with Database(settings) as db:
        assert current(db) == head()
        with db.read() as conn:
            # pgvector's column and indexes exist on PostgreSQL only (migration 0003), outside `metadata`
            shared = {"include_name": lambda name, *_: name not in PG_ONLY}
            assert compare_metadata(MigrationContext.configure(conn, opts=shared), metadata) == []
