"""The HTTP API under a real uvicorn server, over the sample store (extractive answers unless said)."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from docubot.calllog import CallLog
from docubot.config import Settings
from docubot.db import Database
from docubot.llm import ChatRequest, StreamEvent, Usage
from docubot.rag.answer import DocuBot
from docubot.rag.prompt import REFUSAL_TEXT
from docubot.server.app import create_app
from docubot.server.users import UserStore
from tests.corpus_fixtures import with_sample_corpus
from tests.fakes import grounded_reply
from tests.servers import serving

PDF = "Com exporto un informe a PDF?"
PLANS_URL = "wiki/administracio/plans-i-facturacio"


@dataclass
class Api:
    url: str
    settings: Settings
    keys: dict[str, str]

    def client(self, user: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[user]}"} if user else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def events(response: httpx.Response) -> list[tuple[str, dict]]:
    """The SSE events of a streamed response, in order."""
    out = []
    for block in response.text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


@pytest.fixture
def api_settings(sample_settings: Settings, tmp_path: Path) -> Settings:
    return with_sample_corpus(sample_settings, f"sqlite:///{tmp_path / 'api.db'}")


def start(settings: Settings, embedder, model=None, users=("anna", "biel")) -> tuple[object, dict[str, str]]:
    bot = DocuBot(settings, embedder=embedder, chat_model=model)
    store = UserStore(bot.db)
    keys = {name: store.add(name, admin=name == "admin")[1] for name in users if not _exists(store, name)}
    app = create_app(settings, bot)
    return app, keys


def _exists(store: UserStore, name: str) -> bool:
    return any(u.name == name for u in store.list())


@pytest.fixture
def api(api_settings: Settings, embedder) -> Iterator[Api]:
    app, keys = start(api_settings, embedder, users=("anna", "biel", "admin"))
    with serving(app) as url:
        yield Api(url, api_settings, keys)


def post_message(client: httpx.Client, session_id: str, content: str) -> list[tuple[str, dict]]:
    response = client.post(f"/v1/sessions/{session_id}/messages", json={"content": content})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return events(response)


# -- basics -------------------------------------------------------------------------------------------


def test_health_needs_no_key_and_everything_else_does(api: Api) -> None:
    anonymous = api.client(None)
    health = anonymous.get("/v1/health").json()
    assert health["status"] == "ok" and health["chunks"] == 141 and health["provider"] == "none/extractive"
    for method, path in [("GET", "/v1/sessions"), ("POST", "/v1/sessions"), ("POST", "/v1/ask")]:
        response = anonymous.request(method, path, json={})
        assert response.status_code == 401 and response.json() == {"error": "missing or unknown API key"}
    wrong = httpx.get(f"{api.url}/v1/sessions", headers={"Authorization": "Bearer dbk_not-a-key"})
    assert wrong.status_code == 401
    assert anonymous.get("/docs").status_code == 200
    paths = anonymous.get("/openapi.json").json()["paths"]
    assert {"/v1/ask", "/v1/sessions", "/v1/sessions/{session_id}/messages", "/v1/ingest"} <= set(paths)


def test_stateless_ask_returns_the_contract(api: Api) -> None:
    answer = api.client("anna").post("/v1/ask", json={"question": PDF}).json()
    assert set(answer) >= {"categoria", "resposta", "fonts", "confianca", "sources", "outcome", "cache"}
    assert answer["fonts"] == ["wiki/guies/informes-i-exportacio"] and "PDF" in answer["resposta"]
    assert CallLog(Database(api.settings)).last(1)[0].user == "anna"


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"question": "   "}, 400, "empty"),
        ({"question": "x" * 3000}, 400, "limit is 2000"),
        ({}, 422, "question"),
        ({"question": PDF, "filters": {"version": 3}}, 422, "filters"),
    ],
)
def test_bad_questions_get_clear_errors(api: Api, body, status, message) -> None:
    response = api.client("anna").post("/v1/ask", json=body)
    assert response.status_code == status and message in response.json()["error"]


def test_bodies_over_the_limit_get_413_announced_or_not(api: Api) -> None:
    big = json.dumps({"question": "a" * 70_000})
    client = api.client("anna")
    assert (
        client.post("/v1/ask", content=big, headers={"Content-Type": "application/json"}).status_code == 413
    )
    chunked = client.post("/v1/ask", content=iter([big[:40_000].encode(), big[40_000:].encode()]))
    assert chunked.status_code == 413 and "limit" in chunked.json()["error"]


# -- sessions -------------------------------------------------------------------------------------------


def test_a_session_streams_tokens_then_the_contract(api: Api) -> None:
    client = api.client("anna")
    created = client.post("/v1/sessions", json={})
    assert created.status_code == 201
    session_id = created.json()["id"]
    stream = post_message(client, session_id, PDF)
    names = [name for name, _ in stream]
    assert names[0] == "status" and "token" in names and names[-1] == "done"
    done = stream[-1][1]
    assert "".join(d["text"] for n, d in stream if n == "token") == done["resposta"]
    assert done["turn"] == 1 and done["sources"][0]["section"].startswith("Informes i exportació")
    detail = client.get(f"/v1/sessions/{session_id}").json()
    assert detail["turns"] == 1 and detail["messages"][0]["question"] == PDF
    assert [s["id"] for s in client.get("/v1/sessions").json()] == [session_id]
    assert client.delete(f"/v1/sessions/{session_id}").status_code == 204
    assert client.get(f"/v1/sessions/{session_id}").status_code == 404


def test_a_bad_policy_is_a_422(api: Api) -> None:
    response = api.client("anna").post("/v1/sessions", json={"policy": "forever"})
    assert response.status_code == 422 and "unknown policy" in response.json()["error"]


def test_the_isolation_case_over_http(api: Api) -> None:
    anna, biel = api.client("anna"), api.client("biel")
    a = anna.post("/v1/sessions").json()["id"]
    post_message(anna, a, "Faig servir el pla Business. Puc exportar a CSV?")
    b = biel.post("/v1/sessions").json()["id"]
    stream = post_message(biel, b, "Quin pla faig servir jo?")
    assert stream[-1][1]["resposta"] == REFUSAL_TEXT
    seen = json.dumps([stream, biel.get("/v1/sessions").json(), biel.get(f"/v1/sessions/{b}").json()])
    assert "Business" not in seen


def test_another_users_session_is_a_404_and_stays_intact(api: Api) -> None:
    anna, biel = api.client("anna"), api.client("biel")
    a = anna.post("/v1/sessions").json()["id"]
    post_message(anna, a, PDF)
    assert biel.get(f"/v1/sessions/{a}").status_code == 404
    assert biel.delete(f"/v1/sessions/{a}").status_code == 404
    sent = biel.post(f"/v1/sessions/{a}/messages", json={"content": "Què hi ha aquí?"})
    assert sent.status_code == 404 and sent.json() == {"error": f"no session {a}"}
    assert anna.get(f"/v1/sessions/{a}").json()["turns"] == 1


@pytest.mark.parametrize("hostile", ["..%2F..%2Fetc%2Fpasswd", "a" * 10_000, "%C3%B1and%C3%BA-1234", "abc"])
def test_hostile_session_ids_are_404s_without_a_trace(api: Api, hostile: str) -> None:
    response = api.client("anna").get(f"/v1/sessions/{hostile}")
    assert response.status_code == 404
    assert "error" in response.json() and "Traceback" not in response.text


def test_a_restart_between_turns_keeps_the_context(api_settings: Settings, embedder) -> None:
    app, keys = start(api_settings, embedder)
    with serving(app) as url:
        client = Api(url, api_settings, keys).client("anna")
        session_id = client.post("/v1/sessions").json()["id"]
        post_message(client, session_id, "Com exporto un projecte a CSV?")
    app.state.users.db.close()  # a new process: fresh connections, nothing in memory
    app, _ = start(api_settings, embedder)
    with serving(app) as url:
        client = Api(url, api_settings, keys).client("anna")
        done = post_message(client, session_id, "I això està disponible al pla Starter?")[-1][1]
    assert done["turn"] == 2 and PLANS_URL in {s["url"] for s in done["sources"]}
    assert "CSV" in (CallLog(Database(api_settings)).last(1)[0].retrieval_question or "")


class SlowModel:
    """Streams a valid contract in small pieces, slowly, so a client can leave half-way."""

    name = "fake/slow"
    context_window = 4096

    def __init__(self) -> None:
        self.finished = threading.Event()

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def stream(self, request: ChatRequest):
        text = grounded_reply(request.messages[-1].content)
        for start in range(0, len(text), 8):
            time.sleep(0.1)
            yield StreamEvent(text=text[start : start + 8])
        self.finished.set()
        yield StreamEvent(usage=Usage(10, 10))


def test_a_client_leaving_mid_stream_stores_no_half_turn(api_settings: Settings, embedder) -> None:
    model = SlowModel()
    app, keys = start(api_settings, embedder, model)
    with serving(app) as url:
        client = Api(url, api_settings, keys).client("anna")
        session_id = client.post("/v1/sessions").json()["id"]
        with client.stream("POST", f"/v1/sessions/{session_id}/messages", json={"content": PDF}) as response:
            for line in response.iter_lines():
                if line.startswith("event: token"):
                    break  # leave after the first piece of text
        time.sleep(2.0)
        assert not model.finished.is_set()  # the answer was abandoned, not finished in the background
        assert client.get(f"/v1/sessions/{session_id}").json()["turns"] == 0
        done = post_message(client, session_id, PDF)[-1][1]
        assert done["turn"] == 1 and done["outcome"] == "answered"


# -- ingest ---------------------------------------------------------------------------------------------


def test_ingest_is_for_admins_and_only_the_configured_folder(api_settings, embedder, tmp_path) -> None:
    home = tmp_path / "home"
    shutil.copytree(api_settings.home, home)
    docs = Path(__file__).resolve().parents[1] / "examples" / "docs_nubelia"
    settings = api_settings.with_overrides(home=home, docs_dir=docs)
    app, keys = start(settings, embedder, users=("anna", "admin"))
    with serving(app) as url:
        api = Api(url, settings, keys)
        assert api.client("anna").post("/v1/ingest").status_code == 403
        report = api.client("admin").post("/v1/ingest", json={"dry_run": True})
        assert report.status_code == 200 and report.json()["dry_run"] and report.json()["chunks"] == 141
    app, keys = start(api_settings.with_overrides(home=home), embedder, users=())
    with serving(app) as url:
        admin = httpx.post(f"{url}/v1/ingest", headers={"Authorization": f"Bearer {api.keys['admin']}"})
        assert admin.status_code == 409 and "DOCUBOT_DOCS_DIR" in admin.json()["error"]
