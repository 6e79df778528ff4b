"""Reliability of the HTTP API (issue 14) under a real uvicorn server: security headers, errors that
are JSON with the right status and an id to quote (and a log line with it), validation before a
stream starts, the committed turn number, and a shutdown under load that takes seconds."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
import uvicorn
from sqlalchemy.exc import DataError, IntegrityError, OperationalError

from docubot.config import Settings
from docubot.db import Database
from docubot.llm import ChatRequest, StreamEvent, Usage
from docubot.rag.answer import DocuBot
from docubot.server.app import create_app
from docubot.server.run import server_config
from docubot.server.users import UserStore
from tests.corpus_fixtures import with_sample_corpus
from tests.fakes import ScriptedModel
from tests.servers import free_port, serving
from tests.test_reliability import TurnModel
from tests.test_server import PDF, events

STATIC = Path(__file__).resolve().parents[1] / "docubot" / "server" / "static"


class Server:
    """A running app and an authenticated client per user."""

    def __init__(self, url: str, keys: dict[str, str]) -> None:
        self.url = url
        self.keys = keys

    def client(self, user: str = "anna") -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.keys[user]}"}, timeout=60
        )


def make_app(settings: Settings, embedder, model=None) -> tuple[object, dict[str, str]]:
    """The app over the sample store, with two users of names unique to the test."""
    bot = DocuBot(settings, embedder=embedder, chat_model=model)
    store, tag = UserStore(bot.db), uuid.uuid4().hex[:8]
    keys = {name: store.add(f"{name}-{tag}")[1] for name in ("anna", "biel")}
    return create_app(settings, bot), keys


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, sample_settings: Settings, tmp_path) -> Settings:
    """Sessions, users and caches (on) in a fresh SQLite file or in the test PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'api.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    return with_sample_corpus(sample_settings, url).with_overrides(cache_enabled=True)


@pytest.fixture
def sqlite_settings(sample_settings: Settings, tmp_path) -> Settings:
    return with_sample_corpus(sample_settings, f"sqlite:///{tmp_path / 'api.db'}")


def served(settings: Settings, embedder, model=None):
    app, keys = make_app(settings, embedder, model)
    return serving(app), keys


def new_session(client: httpx.Client, policy: str | None = None) -> str:
    return str(client.post("/v1/sessions", json={"policy": policy} if policy else {}).json()["id"])


# -- security headers -------------------------------------------------------------------------------


class _InlineCode(HTMLParser):
    """Collects what a strict CSP would block: inline scripts, style elements, style and on* attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "script":
            self._in_script = True
            if "src" not in names:
                self.found.append("inline <script>")
        if tag == "style":
            self.found.append("<style>")
        self.found += [f"{tag} {n}=" for n in names if n == "style" or n.startswith("on")]

    def handle_endtag(self, tag: str) -> None:
        self._in_script = self._in_script and tag != "script"

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.found.append("script body")


def test_responses_carry_security_headers_and_the_page_runs_no_inline_code(sqlite_settings, embedder) -> None:
    parser = _InlineCode()
    parser.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    assert parser.found == []  # so the strict policy below breaks nothing
    context, _ = served(sqlite_settings, embedder)
    with context as url:
        for path in ("/", "/static/app.js", "/v1/health"):
            headers = httpx.get(url + path).headers
            policy = headers["content-security-policy"]
            assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
            assert "unsafe-inline" not in policy
            assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"
            assert len(headers["x-request-id"]) == 16
        docs = httpx.get(url + "/docs")
        assert docs.status_code == 200 and "frame-ancestors 'none'" in docs.headers["content-security-policy"]


# -- 5: failed turns are logged, the client gets an id ------------------------------------------------


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (OperationalError("INSERT INTO session_turns", {}, Exception("database or disk is full")), 503),
        (DataError("INSERT INTO session_turns", {}, Exception("invalid byte sequence")), 500),
        (IntegrityError("INSERT INTO session_turns", {}, Exception("duplicate key value")), 500),
        (RuntimeError("boom"), 500),
    ],
)
def test_a_failed_turn_is_logged_with_the_id_the_client_gets(
    sqlite_settings, embedder, caplog, error, status
):
    context, keys = served(sqlite_settings, embedder, ScriptedModel([error]))
    with context as url, caplog.at_level(logging.INFO, logger="docubot"):
        client = Server(url, keys).client()
        response = client.post(f"/v1/sessions/{new_session(client)}/messages", json={"content": PDF})
        name, data = events(response)[-1]
    rid = response.headers["x-request-id"]
    assert name == "error" and data["status"] == status and data["request_id"] == rid
    assert (
        rid in data["error"] and type(error).__name__ not in data["error"] and "INSERT" not in data["error"]
    )
    logged = [r for r in caplog.records if rid in r.getMessage()]
    assert logged and logged[0].levelno == logging.ERROR and logged[0].exc_info[1] is error


def test_an_unexpected_error_outside_a_stream_is_json_with_an_id(sqlite_settings, embedder, caplog) -> None:
    context, keys = served(sqlite_settings, embedder, ScriptedModel([RuntimeError("boom")]))
    with context as url, caplog.at_level(logging.INFO, logger="docubot"):
        response = Server(url, keys).client().post("/v1/ask", json={"question": PDF})
    assert response.status_code == 500 and response.headers["content-type"] == "application/json"
    rid = response.json()["request_id"]
    assert rid == response.headers["x-request-id"] and "RuntimeError" not in response.text
    assert any(rid in r.getMessage() for r in caplog.records)


# -- 4 over HTTP: a failing summary -------------------------------------------------------------------


def test_a_turn_whose_summary_fails_still_streams_its_answer(sqlite_settings, embedder) -> None:
    context, keys = served(sqlite_settings, embedder, TurnModel(failing_summaries=99))
    with context as url:
        client = Server(url, keys).client()
        session_id = new_session(client, "sliding_window:1")
        for question in (PDF, "Com restableixo la contrasenya?", "Com convido un membre?"):
            response = client.post(f"/v1/sessions/{session_id}/messages", json={"content": question})
            name, data = events(response)[-1]
            assert response.status_code == 200 and name == "done" and data["outcome"] == "answered", data
        assert data["turn"] == 3


# -- 7 and 13: validation before the stream, JSON errors ---------------------------------------------


def test_bad_input_gets_a_json_4xx_before_any_stream_on_both_databases(backend, embedder) -> None:
    context, keys = served(backend, embedder)
    with context as url:
        client = Server(url, keys).client()
        session_id = new_session(client)
        cases = [
            ("/v1/ask", {"question": "Com exporto\x00 un informe a PDF?"}, 400, "control characters"),
            (
                f"/v1/sessions/{session_id}/messages",
                {"content": "Com exporto\x00 un informe?"},
                400,
                "control",
            ),
            (f"/v1/sessions/{session_id}/messages", {"content": "   \n "}, 400, "empty"),
            ("/v1/ask", {"question": PDF, "filters": {"colour": "red"}}, 422, "unknown filter field"),
        ]
        for path, body, status, message in cases:
            response = client.post(path, json=body)
            assert response.status_code == status, (path, body, response.text)
            assert response.headers["content-type"] == "application/json"
            assert message in response.json()["error"]
        assert client.get(f"/v1/sessions/{session_id}").json()["turns"] == 0


def test_a_content_free_message_is_answered_with_please_ask(sqlite_settings, embedder) -> None:
    context, keys = served(sqlite_settings, embedder)
    with context as url:
        client = Server(url, keys).client()
        session_id = new_session(client)
        done = events(client.post(f"/v1/sessions/{session_id}/messages", json={"content": "..."}))[-1][1]
    assert done["outcome"] == "empty_question" and "escriu una pregunta" in done["resposta"]


# -- 12: the turn number of the done event -------------------------------------------------------------


def test_each_done_event_names_the_turn_its_answer_was_stored_as(sqlite_settings, embedder) -> None:
    context, keys = served(sqlite_settings, embedder)
    with context as url:
        client = Server(url, keys).client()
        session_id = new_session(client)
        questions = [f"Com exporto l'informe número {n} a PDF?" for n in range(24)]

        def send(question: str) -> tuple[str, int]:
            with Server(url, keys).client() as own:
                response = own.post(f"/v1/sessions/{session_id}/messages", json={"content": question})
            return question, events(response)[-1][1]["turn"]

        with ThreadPoolExecutor(8) as pool:
            reported = dict(pool.map(send, questions))
        stored = {
            m["question"]: m["turn"] for m in client.get(f"/v1/sessions/{session_id}").json()["messages"]
        }
    assert reported == stored


# -- clean shutdown under load -----------------------------------------------------------------------------


class SlowModel:
    """Streams a valid contract in 200 pieces over 10 seconds: an answer still running at shutdown."""

    name = "fake/slow"
    context_window = 4096

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        text = json.dumps(
            {
                "fonts": [1],
                "resposta": "Informes > Exportar. " * 40,
                "categoria": "informes",
                "confianca": "alta",
            }
        )
        size = len(text) // 200 + 1
        for start in range(0, len(text), size):
            time.sleep(0.05)
            yield StreamEvent(text=text[start : start + size])
        yield StreamEvent(usage=Usage(10, 10))


def test_the_server_stops_within_five_seconds_with_streams_in_flight(sqlite_settings, embedder) -> None:
    model = SlowModel()
    app, keys = make_app(sqlite_settings, embedder, model)
    port = free_port()
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    client = Server(url, keys).client()
    session_ids = [new_session(client) for _ in range(12)]
    streaming = threading.Semaphore(0)

    def listen(session_id: str) -> None:
        try:
            with (
                Server(url, keys).client() as own,
                own.stream("POST", f"/v1/sessions/{session_id}/messages", json={"content": PDF}) as response,
            ):
                for line in response.iter_lines():
                    if line.startswith("event: token"):
                        streaming.release()
        except httpx.HTTPError:
            pass  # the server went away: expected

    listeners = [threading.Thread(target=listen, args=(s,), daemon=True) for s in session_ids]
    for listener in listeners:
        listener.start()
    assert streaming.acquire(timeout=30)  # answers are streaming
    started = time.monotonic()
    server.should_exit = True
    thread.join(timeout=30)
    stopped_in = time.monotonic() - started
    assert not thread.is_alive() and stopped_in < 5.0, stopped_in
    with Database(sqlite_settings) as db, db.read() as conn:
        turns = conn.exec_driver_sql("SELECT COUNT(*) FROM session_turns").scalar_one()
    assert turns == 0  # no answer was cut short and stored half-way
