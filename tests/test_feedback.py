"""👍/👎 feedback on answers through the HTTP API, on SQLite and PostgreSQL: stored with the turn,
shown with the session, the owner's only, and erased with the turn, the session and the user."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from sqlalchemy import delete, func, select
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.rag.answer import DocuBot
from docubot.server.app import create_app
from docubot.server.users import UserStore
from docubot.sessions import SessionManager
from docubot.sessions.feedback import MAX_COMMENT_CHARS
from docubot.sessions.tables import session_turns, turn_feedback
from tests.corpus_fixtures import with_sample_corpus
from tests.servers import serving


@dataclass
class Api:
    url: str
    settings: Settings
    keys: dict[str, str]

    def client(self, user: str | None = "anna") -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[user]}"} if user else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


@pytest.fixture(params=["sqlite", "postgres"])
def api(request: pytest.FixtureRequest, sample_settings: Settings, embedder, tmp_path) -> Iterator[Api]:
    """The API over a copy of the sample corpus in a fresh SQLite file or PostgreSQL database."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'api.db'}"
    else:
        url = request.getfixturevalue("fresh_postgres_url")
    settings = with_sample_corpus(sample_settings, url)
    bot = DocuBot(settings, embedder=embedder)
    users = UserStore(bot.db)
    keys = {name: users.add(name)[1] for name in ("anna", "biel")}
    with serving(create_app(settings, bot)) as base:
        yield Api(base, settings, keys)
    bot.db.close()


def session_with_turns(client: httpx.Client, *questions: str) -> str:
    session_id = client.post("/v1/sessions").json()["id"]
    for question in questions:
        response = client.post(f"/v1/sessions/{session_id}/messages", json={"content": question})
        assert response.status_code == 200 and "event: done" in response.text, response.text
    return session_id


def cli_env(settings: Settings) -> dict[str, str]:
    """The environment that points `docubot` at the API's data folder and database."""
    return {
        "DOCUBOT_HOME": str(settings.home),
        "DOCUBOT_DATABASE_URL": settings.database_url or "",
        "DOCUBOT_LLM": "none",
    }


def feedback_rows(settings: Settings) -> int:
    with Database(settings) as db, db.read() as conn:
        return int(conn.execute(select(func.count()).select_from(turn_feedback)).scalar_one())


def turns_feedback(client: httpx.Client, session_id: str) -> list[dict | None]:
    return [m["feedback"] for m in client.get(f"/v1/sessions/{session_id}").json()["messages"]]


def test_feedback_is_stored_shown_with_the_turn_replaced_and_removed(api: Api) -> None:
    anna = api.client()
    sid = session_with_turns(anna, "Com exporto un informe a PDF?", "Com convido un membre?")
    path = f"/v1/sessions/{sid}/turns/1/feedback"
    given = anna.put(path, json={"rating": "down", "comment": "  Falta el pas del menú Informes.  "})
    assert given.status_code == 200, given.text
    body = given.json()
    assert body["rating"] == "down" and body["comment"] == "Falta el pas del menú Informes."
    assert isinstance(body["updated_at"], float)
    assert turns_feedback(anna, sid) == [body, None]
    shown = CliRunner().invoke(app, ["sessions", "show", sid, "--user", "anna"], env=cli_env(api.settings))
    assert shown.exit_code == 0 and "👎 Falta el pas del menú Informes." in shown.stdout, shown.output

    replaced = anna.put(path, json={"rating": "up", "comment": None}).json()
    assert replaced["rating"] == "up" and replaced["comment"] is None
    assert replaced["updated_at"] >= body["updated_at"]
    assert anna.put(f"/v1/sessions/{sid}/turns/2/feedback", json={"rating": "up"}).status_code == 200
    assert [f and f["rating"] for f in turns_feedback(anna, sid)] == ["up", "up"]
    assert feedback_rows(api.settings) == 2

    assert anna.delete(path).status_code == 204
    assert [f and f["rating"] for f in turns_feedback(anna, sid)] == [None, "up"]
    assert anna.delete(path).status_code == 204  # removing what is not there is fine


def test_only_the_sessions_owner_can_give_or_remove_feedback(api: Api) -> None:
    anna, biel = api.client("anna"), api.client("biel")
    sid = session_with_turns(anna, "Com exporto un informe a PDF?")
    path = f"/v1/sessions/{sid}/turns/1/feedback"
    assert anna.put(path, json={"rating": "down", "comment": "no"}).status_code == 200
    for response in (
        biel.put(path, json={"rating": "up"}),
        biel.delete(path),
        anna.put("/v1/sessions/s_unknown000000000000000000/turns/1/feedback", json={"rating": "up"}),
        anna.put("/v1/sessions/..%2F..%2Fetc/turns/1/feedback", json={"rating": "up"}),
    ):
        assert response.status_code == 404, response.text
    assert biel.put(path, json={"rating": "up"}).json()["error"] == f"no session {sid}"
    missing = anna.put(f"/v1/sessions/{sid}/turns/2/feedback", json={"rating": "up"})
    assert missing.status_code == 404 and missing.json()["error"] == f"no turn 2 in session {sid}"
    assert anna.put(f"/v1/sessions/{sid}/turns/0/feedback", json={"rating": "up"}).status_code == 404
    assert api.client(None).put(path, json={"rating": "up"}).status_code == 401
    [kept] = turns_feedback(anna, sid)
    assert kept is not None and (kept["rating"], kept["comment"]) == ("down", "no")


def test_a_bad_rating_or_an_overlong_comment_is_refused_and_changes_nothing(api: Api) -> None:
    anna = api.client()
    sid = session_with_turns(anna, "Com exporto un informe a PDF?")
    path = f"/v1/sessions/{sid}/turns/1/feedback"
    bad = anna.put(path, json={"rating": "meh"})
    assert bad.status_code == 422 and bad.json()["error"] == "rating must be 'up' or 'down' (got 'meh')"
    long = anna.put(path, json={"rating": "down", "comment": "x" * (MAX_COMMENT_CHARS + 1)})
    assert long.status_code == 422
    assert long.json()["error"] == f"comment is {MAX_COMMENT_CHARS + 1} characters long; at most 2000"
    missing = anna.put(path, json={"comment": "hola"})
    assert missing.status_code == 422 and "rating" in missing.json()["error"]
    assert anna.put(f"/v1/sessions/{sid}/turns/one/feedback", json={"rating": "up"}).status_code == 422
    assert turns_feedback(anna, sid) == [None] and feedback_rows(api.settings) == 0
    assert anna.put(path, json={"rating": "down", "comment": "x" * MAX_COMMENT_CHARS}).status_code == 200


def test_feedback_is_erased_with_its_turn_its_session_and_its_user(api: Api, embedder) -> None:
    anna, biel = api.client("anna"), api.client("biel")
    first = session_with_turns(anna, "Com exporto un informe a PDF?", "Com convido un membre?")
    second = session_with_turns(anna, "Com restableixo la contrasenya?")
    kept = session_with_turns(biel, "Com convido un membre?")
    for client, sid, turn in ((anna, first, 1), (anna, first, 2), (anna, second, 1), (biel, kept, 1)):
        response = client.put(f"/v1/sessions/{sid}/turns/{turn}/feedback", json={"rating": "down"})
        assert response.status_code == 200
    assert feedback_rows(api.settings) == 4

    with Database(api.settings) as db:
        with db.write() as conn:  # a turn that goes takes its feedback with it (foreign-key cascade)
            conn.execute(
                delete(session_turns).where(session_turns.c.session_id == first, session_turns.c.turn == 2)
            )
        assert feedback_rows(api.settings) == 3
        assert anna.delete(f"/v1/sessions/{first}").status_code == 204
        assert feedback_rows(api.settings) == 2

        sessions = SessionManager(api.settings, DocuBot(api.settings, embedder=embedder, db=db), db)
        [exported] = sessions.export_user("anna")["sessions"]
        assert [(f["turn"], f["rating"]) for f in exported["feedback"]] == [(1, "down")]
        sessions.delete_user("anna")
    assert feedback_rows(api.settings) == 1
    assert turns_feedback(biel, kept)[0]["rating"] == "down"  # nobody else lost anything
