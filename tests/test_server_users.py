"""`docubot users add|list|remove` and their keys at the API; the API over an empty store."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import httpx
import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.rag.answer import DocuBot
from docubot.server.app import create_app
from docubot.server.users import UserStore
from tests.corpus_fixtures import with_sample_corpus
from tests.servers import serving


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DOCUBOT_CONFIG", raising=False)
    monkeypatch.delenv("DOCUBOT_DATABASE_URL", raising=False)
    monkeypatch.setenv("DOCUBOT_LLM", "none")
    return tmp_path / "home"


def test_users_add_shows_the_key_once_and_stores_only_its_hash(home) -> None:
    runner = CliRunner()
    added = runner.invoke(app, ["users", "add", "anna", "--admin", "--json"])
    assert added.exit_code == 0, added.output
    data = json.loads(added.stdout)
    assert data["user"] == "anna" and data["admin"] is True and data["api_key"].startswith("dbk_")
    with sqlite3.connect(home / "docubot.db") as db:
        rows = db.execute("SELECT * FROM users").fetchall()
    assert len(rows) == 1 and hashlib.sha256(data["api_key"].encode()).hexdigest() in rows[0]
    assert data["api_key"] not in rows[0]
    listed = json.loads(runner.invoke(app, ["users", "list", "--json"]).stdout)
    assert [(u["name"], u["admin"]) for u in listed] == [("anna", True)]
    assert "api_key" not in listed[0] and data["api_key"] not in runner.invoke(app, ["users", "list"]).output


def test_users_add_refuses_duplicates_and_bad_names(home) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["users", "add", "anna"]).exit_code == 0
    duplicate = runner.invoke(app, ["users", "add", "anna"])
    assert duplicate.exit_code == 2 and "exists already" in duplicate.output
    bad = runner.invoke(app, ["users", "add", "../anna"])
    assert bad.exit_code == 2 and "invalid user name" in bad.output
    missing = runner.invoke(app, ["users", "remove", "nobody"])
    assert missing.exit_code == 2 and "no user" in missing.output


def test_a_removed_user_key_stops_working(sample_settings: Settings, embedder, tmp_path) -> None:
    settings = with_sample_corpus(sample_settings, f"sqlite:///{tmp_path / 'api.db'}")
    bot = DocuBot(settings, embedder=embedder)
    store = UserStore(bot.db)
    _, key = store.add("anna")
    app_ = create_app(settings, bot)
    with serving(app_) as url:
        headers = {"Authorization": f"Bearer {key}"}
        assert httpx.get(f"{url}/v1/sessions", headers=headers).status_code == 200
        store.remove("anna")
        assert httpx.get(f"{url}/v1/sessions", headers=headers).status_code == 401


def test_asking_an_empty_store_is_a_503(tmp_path, embedder) -> None:
    settings = Settings(home=tmp_path / "empty", llm="none")
    bot = DocuBot(settings, embedder=embedder)
    _, key = UserStore(bot.db).add("anna")
    app_ = create_app(settings, bot)
    with serving(app_) as url:
        client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60)
        assert client.get("/v1/health").json()["chunks"] == 0
        response = client.post("/v1/ask", json={"question": "Com exporto un informe a PDF?"})
        assert response.status_code == 503 and "ingest" in response.json()["error"]
        session_id = client.post("/v1/sessions").json()["id"]
        stream = client.post(f"/v1/sessions/{session_id}/messages", json={"content": "Hola?"}).text
        assert stream.startswith("event: error") and '"status": 503' in stream
        assert client.get(f"/v1/sessions/{session_id}").json()["turns"] == 0
