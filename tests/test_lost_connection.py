"""A PostgreSQL connection lost in the middle of a request (issue 16): the request is retried once,
then answered 503 with JSON; a turn is stored whole or not at all.

The connections are lost for real: the test holds a lock the server's write must wait for, and
while the server's transaction waits, `pg_terminate_backend` kills its connection (what a restart,
a fail-over or an administrator does), once or twice; or the whole PostgreSQL server is stopped.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
import pytest

from docubot.config import Settings
from docubot.pgserver import LocalPostgres
from tests.corpus_fixtures import with_sample_corpus
from tests.servers import serving
from tests.test_reliability_server import Server, make_app, new_session
from tests.test_server import PDF, events


@pytest.fixture
def on_postgres(sample_settings: Settings, fresh_postgres_url: str) -> Settings:
    return with_sample_corpus(sample_settings, fresh_postgres_url)


def kill_waiting(url: str, statement: str, times: int, timeout_s: float = 60.0) -> int:
    """Terminate, `times` times, the connection whose transaction waits on a lock to run
    `statement…`; returns how many were terminated (fewer only on timeout)."""
    killed, deadline = 0, time.monotonic() + timeout_s
    with psycopg.connect(url, autocommit=True) as conn:
        while killed < times and time.monotonic() < deadline:
            waiting = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query LIKE %s",
                (statement + "%",),
            ).fetchall()
            for (pid,) in waiting:
                killed += bool(conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0])
            time.sleep(0.02)
    return killed


def in_background(call) -> tuple[threading.Thread, dict]:
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(response=call()), daemon=True)
    thread.start()
    return thread, out


def count(url: str, sql: str, *args: object) -> int:
    with psycopg.connect(url) as conn:
        return int(conn.execute(sql, args).fetchone()[0])


@pytest.mark.parametrize(("losses", "stored"), [(1, 1), (2, 0)])
def test_a_turn_whose_connection_is_lost_while_committing_is_retried_once_then_503(
    on_postgres: Settings, embedder, losses: int, stored: int
) -> None:
    url = on_postgres.database_url
    app, keys = make_app(on_postgres, embedder)
    with serving(app) as base:
        client = Server(base, keys).client()
        session_id = new_session(client)
        with psycopg.connect(url) as holder:  # the session row stays locked until the rollback
            holder.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE", (session_id,))
            thread, out = in_background(
                lambda: client.post(f"/v1/sessions/{session_id}/messages", json={"content": PDF})
            )
            assert kill_waiting(url, "UPDATE sessions", losses) == losses
            if losses == 2:
                thread.join(timeout=60)  # both attempts lost: the answer is over before the lock goes
            holder.rollback()
        thread.join(timeout=60)
        name, data = events(out["response"])[-1]
        if stored:
            assert name == "done" and data["turn"] == 1, data
        else:
            assert name == "error" and data["status"] == 503, data
            assert "the database is unavailable" in data["error"] and data["request_id"]
        session = client.get(f"/v1/sessions/{session_id}").json()
    assert session["turns"] == len(session["messages"]) == stored
    assert count(url, "SELECT COUNT(*) FROM session_turns WHERE session_id = %s", session_id) == stored


@pytest.mark.parametrize(("losses", "status"), [(1, 200), (2, 503)])
def test_a_request_whose_connection_is_lost_is_retried_once_then_answered_503_json(
    on_postgres: Settings, embedder, losses: int, status: int
) -> None:
    url = on_postgres.database_url
    question = f"Com exporto un informe a PDF? ({losses})"
    app, keys = make_app(on_postgres, embedder)
    with serving(app) as base:
        client = Server(base, keys).client()
        with psycopg.connect(url) as holder:  # the call log cannot be written until the rollback
            holder.execute("LOCK TABLE calls IN SHARE MODE")
            thread, out = in_background(lambda: client.post("/v1/ask", json={"question": question}))
            assert kill_waiting(url, "INSERT INTO calls", losses) == losses
            if losses == 2:
                thread.join(timeout=60)
            holder.rollback()
        thread.join(timeout=60)
    response = out["response"]
    assert response.status_code == status and response.headers["content-type"] == "application/json"
    if status == 503:
        body = response.json()
        assert "the database is unavailable" in body["error"]
        assert body["request_id"] == response.headers["x-request-id"]
    else:
        assert response.json()["outcome"] == "answered"
    logged = count(url, "SELECT COUNT(*) FROM calls WHERE question = %s", question)
    assert logged == (1 if status == 200 else 0)  # the lost attempts' rows were rolled back


def test_a_stopped_database_gives_503_json_and_a_restarted_one_serves_again(
    sample_settings: Settings, embedder, tmp_path: Path
) -> None:
    server = LocalPostgres(tmp_path / "pg")
    try:
        settings = with_sample_corpus(sample_settings, server.start())
        app, keys = make_app(settings, embedder)
        with serving(app) as base:
            client = Server(base, keys).client()
            assert client.post("/v1/ask", json={"question": PDF}).status_code == 200
            server.stop()
            down = client.post("/v1/ask", json={"question": PDF})
            assert down.status_code == 503 and "the database is unavailable" in down.json()["error"]
            listed = client.get("/v1/sessions")  # authentication itself needs the database
            assert listed.status_code == 503 and listed.headers["content-type"] == "application/json"
            server.start()  # same port, same data: the pool reconnects, no restart of DocuBot
            assert client.post("/v1/ask", json={"question": PDF}).status_code == 200
    finally:
        server.remove()
