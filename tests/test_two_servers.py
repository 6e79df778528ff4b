"""Two DocuBot servers, two processes on two loopback ports, each with its own data folder, on one
PostgreSQL (issue 16): a session continues from one to the other, an ingest through one is answered
from by the other at once, `docubot logs` and `docubot cost report` see the calls of both, and a
server killed mid-stream loses nothing it had answered while the other keeps serving.

Extractive answers (`DOCUBOT_LLM=none`): the point is the shared state, not the model.
"""

from __future__ import annotations

import json
import shutil
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.server.users import UserStore
from tests.conftest import isolate_environment, markdown
from tests.corpus_fixtures import MODELS_DIR, SAMPLE_DOCS, with_sample_corpus
from tests.servers import DocuBotServer, docubot_env
from tests.test_server import PDF, events

NEW_PAGE = "guies/zefiroscopi.md"
NEW_URL = "wiki/guies/zefiroscopi"
NEW_QUESTION = "Com activo el zefiroscopi d'un projecte?"


@dataclass
class Pair:
    a: DocuBotServer
    b: DocuBotServer
    key: str
    """An admin's key: valid on both servers (users live in the database)."""
    database_url: str
    docs: Path
    folder: Path

    def client(self, server: DocuBotServer) -> httpx.Client:
        return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=120)


@pytest.fixture(scope="module")
def pair(sample_home: Path, postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """Servers A and B: own data folders, one database holding the sample corpus, one docs folder."""
    folder = tmp_path_factory.mktemp("two-servers")
    name = f"t{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    database_url = postgres_url.rsplit("/", 1)[0] + f"/{name}"
    sample = Settings(home=sample_home, llm="none", models_dir=MODELS_DIR)
    with_sample_corpus(sample, database_url)  # chunks and vectors copied, not embedded again
    docs = folder / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)  # the same pages: an ingest embeds only what is new
    with Database(sample.with_overrides(database_url=database_url)) as db:
        _, key = UserStore(db).add("ops", admin=True)
    servers = [
        DocuBotServer(
            docubot_env(
                folder / f"home-{side}",
                llm="none",
                database_url=database_url,
                docs_dir=str(docs),
                models_dir=str(MODELS_DIR),
            ),
            folder / f"server-{side}.log",
        )
        for side in ("a", "b")
    ]
    try:
        for server in servers:
            server.start()
        for server in servers:
            server.wait_ready()
        yield Pair(servers[0], servers[1], key, database_url, docs, folder)
    finally:
        for server in servers:
            server.stop()
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def turn(client: httpx.Client, session_id: str, question: str) -> dict:
    """Stream one turn; the data of its final event (asserted to be `done`)."""
    response = client.post(f"/v1/sessions/{session_id}/messages", json={"content": question})
    name, data = events(response)[-1]
    assert response.status_code == 200 and name == "done", (name, data)
    return data


def test_a_session_started_on_one_server_continues_on_the_other(pair: Pair) -> None:
    with pair.client(pair.a) as a, pair.client(pair.b) as b:
        session_id = a.post("/v1/sessions").json()["id"]
        first = turn(a, session_id, PDF)
        assert first["turn"] == 1 and first["outcome"] == "answered"
        seen_by_b = b.get(f"/v1/sessions/{session_id}").json()
        assert [m["question"] for m in seen_by_b["messages"]] == [PDF]
        assert seen_by_b["messages"][0]["answer"]["resposta"] == first["resposta"]
        follow_up = turn(b, session_id, "I a CSV?")  # a follow-up: B rewrites it from A's turn
        assert follow_up["turn"] == 2 and follow_up["outcome"] == "answered"
        assert [m["turn"] for m in a.get(f"/v1/sessions/{session_id}").json()["messages"]] == [1, 2]
        assert session_id in [s["id"] for s in b.get("/v1/sessions").json()]


def test_an_ingest_through_one_server_is_answered_from_by_the_other_at_once(pair: Pair) -> None:
    with pair.client(pair.a) as a, pair.client(pair.b) as b:
        before = b.post("/v1/ask", json={"question": NEW_QUESTION}).json()
        assert NEW_URL not in before["fonts"]
        (pair.docs / NEW_PAGE).write_text(
            f"<!-- url: {NEW_URL} | versio: 2026.2 | actualitzat: 2026-11-30 -->\n"
            + markdown(
                "El zefiroscopi",
                [
                    (
                        "Activar el zefiroscopi",
                        "Per activar el zefiroscopi d'un projecte, obre el projecte, ves a "
                        "*Configuració > Zefiroscopi* i prem **Activa el zefiroscopi**. Només els "
                        "administradors del projecte poden activar el zefiroscopi.",
                    )
                ],
                intro="El zefiroscopi mostra, per a cada projecte, les tasques que canvien de "
                "responsable més de tres vegades en una setmana.",
            ),
            encoding="utf-8",
        )
        report = a.post("/v1/ingest", json={}).json()
        assert report["added"] >= 1, report
        health_a, health_b = a.get("/v1/health").json(), b.get("/v1/health").json()
        assert health_b["corpus_version"] == health_a["corpus_version"]
        assert health_b["chunks"] == health_a["chunks"]
        after = b.post("/v1/ask", json={"question": NEW_QUESTION}).json()
        assert after["outcome"] == "answered" and NEW_URL in after["fonts"], after
        assert "Configuració > Zefiroscopi" in after["resposta"]


def test_logs_and_cost_report_see_the_calls_of_both_servers(
    pair: Pair, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    asked = {pair.a: f"Com exporto un informe a PDF? ({uuid.uuid4().hex[:6]})", pair.b: ""}
    asked[pair.b] = f"Com restableixo la contrasenya? ({uuid.uuid4().hex[:6]})"
    for server, question in asked.items():
        with pair.client(server) as client:
            assert client.post("/v1/ask", json={"question": question}).status_code == 200
    isolate_environment(monkeypatch, tmp_path)
    env = {"DOCUBOT_DATABASE_URL": pair.database_url, "DOCUBOT_HOME": str(tmp_path / "third-home")}
    logs = CliRunner().invoke(app, ["logs", "--json", "--last", "1000"], env=env)
    assert logs.exit_code == 0, logs.output
    logged = [c["question"] for c in json.loads(logs.stdout)]
    assert set(asked.values()) <= set(logged)
    report = CliRunner().invoke(app, ["cost", "report", "--json"], env=env)
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["totals"]["calls"] == len(logged)


def test_a_server_killed_mid_stream_loses_nothing_answered_and_the_other_keeps_serving(pair: Pair) -> None:
    """Runs last in the module: server A does not come back."""
    with pair.client(pair.a) as a:
        session_ids = [a.post("/v1/sessions").json()["id"] for _ in range(40)]
    answered: dict[str, dict] = {}
    first_done = threading.Event()

    def listen(session_id: str) -> None:
        try:
            with (
                pair.client(pair.a) as own,
                own.stream("POST", f"/v1/sessions/{session_id}/messages", json={"content": PDF}) as response,
            ):
                for line in response.iter_lines():
                    if line.startswith("data: ") and '"turn"' in line:
                        answered[session_id] = json.loads(line[6:])
                        first_done.set()
        except httpx.HTTPError:
            pass  # cut off by the kill

    listeners = [threading.Thread(target=listen, args=(s,), daemon=True) for s in session_ids]
    for listener in listeners:
        listener.start()
    assert first_done.wait(timeout=120)
    pair.a.kill()
    for listener in listeners:
        listener.join(timeout=60)
    assert answered  # at least one answer reached its client before the kill
    with pair.client(pair.b) as b:
        for session_id in session_ids:
            stored = b.get(f"/v1/sessions/{session_id}").json()
            assert stored["turns"] == len(stored["messages"]) <= 1  # a whole turn or none
            if session_id in answered:  # what a client was told is stored is stored
                assert stored["turns"] == 1
                assert stored["messages"][0]["answer"]["resposta"] == answered[session_id]["resposta"]
        continued = next(iter(answered))
        assert turn(b, continued, "I a CSV?")["turn"] == 2
        fresh = b.post("/v1/sessions").json()["id"]
        assert turn(b, fresh, PDF)["turn"] == 1
