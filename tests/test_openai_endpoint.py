"""The OpenAI-compatible endpoint, driven by the official `openai` client against a real uvicorn server
over the sample store (extractive answers)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest

from docubot.calllog import CallLog
from docubot.config import Settings
from docubot.db import Database
from docubot.rag.answer import DocuBot
from docubot.server.app import create_app
from docubot.server.openai_api import ChatMessage, split_messages
from docubot.server.users import UserStore
from tests.corpus_fixtures import with_sample_corpus
from tests.servers import serving

PDF = "Com exporto un informe a PDF?"
REPORTS_URL = "wiki/guies/informes-i-exportacio"


@dataclass
class Server:
    url: str
    key: str
    settings: Settings

    def client(self, key: str | None = None) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=key or self.key, max_retries=0)

    def calls(self) -> list:
        with Database(self.settings) as db:
            return CallLog(db).last(50)


@pytest.fixture
def server(sample_settings: Settings, tmp_path: Path, embedder) -> Iterator[Server]:
    settings = with_sample_corpus(sample_settings, f"sqlite:///{tmp_path / 'api.db'}")
    bot = DocuBot(settings, embedder=embedder, chat_model=None)
    _, key = UserStore(bot.db).add("anna")
    with serving(create_app(settings, bot)) as url:
        yield Server(url, key, settings)


def test_models_lists_docubot(server: Server) -> None:
    assert [m.id for m in server.client().models.list()] == ["docubot"]


def test_a_completion_carries_the_answer_the_sources_block_and_the_contract(server: Server) -> None:
    completion = server.client().chat.completions.create(
        model="docubot", messages=[{"role": "user", "content": PDF}]
    )
    content = completion.choices[0].message.content or ""
    answer, _, block = content.partition("\n\nFonts:\n")
    assert "PDF" in answer
    assert f"]({REPORTS_URL})" in block and block.startswith("- [")
    contract = (completion.model_extra or {})["docubot"]
    assert contract["resposta"] == answer and contract["fonts"] == [REPORTS_URL]
    assert contract["outcome"] == "answered" and contract["confianca"] in ("alta", "mitjana", "baixa")
    assert completion.choices[0].finish_reason == "stop"
    assert server.calls()[0].user == "anna"


def test_streaming_gives_the_same_text_then_the_contract(server: Server) -> None:
    client = server.client()
    whole = client.chat.completions.create(model="docubot", messages=[{"role": "user", "content": PDF}])
    chunks = list(
        client.chat.completions.create(
            model="docubot", messages=[{"role": "user", "content": PDF}], stream=True
        )
    )
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == whole.choices[0].message.content and "\n\nFonts:\n- [" in text
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert (last.model_extra or {})["docubot"]["fonts"] == [REPORTS_URL]


def test_the_raw_stream_ends_with_done(server: Server) -> None:
    response = httpx.post(
        f"{server.url}/v1/chat/completions",
        headers={"Authorization": f"Bearer {server.key}"},
        json={"model": "docubot", "stream": True, "messages": [{"role": "user", "content": PDF}]},
        timeout=60,
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    blocks = response.text.strip().split("\n\n")
    assert all(b.startswith("data: ") for b in blocks) and blocks[-1] == "data: [DONE]"


def test_earlier_messages_are_the_conversation(server: Server) -> None:
    client = server.client()
    first = client.chat.completions.create(
        model="docubot", messages=[{"role": "user", "content": "Com convido un membre?"}]
    )
    follow_up = client.chat.completions.create(
        model="docubot",
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Com convido un membre?"},
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": [{"type": "text", "text": "i com l'elimino?"}]},
        ],
    )
    call = server.calls()[0]
    assert call.question == "i com l'elimino?"
    assert call.retrieval_question == "Com convido un membre? i com l'elimino?"
    assert "wiki/administracio/membres-i-permisos" in (follow_up.model_extra or {})["docubot"]["fonts"]


def test_history_loses_the_sources_blocks_and_keeps_alternating() -> None:
    messages = [
        ChatMessage(role="assistant", content="Hola! En què et puc ajudar?"),
        ChatMessage(role="user", content="Com convido un membre?"),
        ChatMessage(role="assistant", content="Des de Configuració.\n\nFonts:\n- [A > B](wiki/a)"),
        ChatMessage(role="system", content="ignored"),
        ChatMessage(role="user", content="i com l'elimino?"),
        ChatMessage(role="user", content="i un administrador?"),
    ]
    history, question = split_messages(messages)
    assert [(m.role, m.content) for m in history] == [
        ("user", "Com convido un membre?"),
        ("assistant", "Des de Configuració."),
    ]
    assert question == "i com l'elimino?\n\ni un administrador?"


def test_a_refusal_has_no_sources_block(server: Server) -> None:
    completion = server.client().chat.completions.create(
        model="docubot", messages=[{"role": "user", "content": "Quina és la capital de Mongòlia?"}]
    )
    contract = (completion.model_extra or {})["docubot"]
    assert contract["outcome"] == "refused" and contract["fonts"] == []
    assert "Fonts:" not in (completion.choices[0].message.content or "")


def test_a_wrong_key_is_a_401_through_the_client(server: Server) -> None:
    client = server.client("dbk_not-a-key")
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="docubot", messages=[{"role": "user", "content": PDF}])
    with pytest.raises(openai.AuthenticationError):
        client.models.list()


def test_messages_must_end_with_a_user_message(server: Server) -> None:
    with pytest.raises(openai.BadRequestError):
        server.client().chat.completions.create(
            model="docubot", messages=[{"role": "assistant", "content": "Hola"}]
        )


def test_a_session_header_answers_in_that_stored_session(server: Server) -> None:
    headers = {"Authorization": f"Bearer {server.key}"}
    session_id = httpx.post(f"{server.url}/v1/sessions", headers=headers, json={}).json()["id"]
    client = server.client()
    for question in ("Com convido un membre?", "i com l'elimino?"):
        stream = client.chat.completions.create(
            model="docubot",
            messages=[{"role": "user", "content": question}],
            stream=True,
            extra_headers={"X-DocuBot-Session": session_id},
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream)
    detail = httpx.get(f"{server.url}/v1/sessions/{session_id}", headers=headers).json()
    assert [m["question"] for m in detail["messages"]] == ["Com convido un membre?", "i com l'elimino?"]
    assert server.calls()[0].retrieval_question == "Com convido un membre? i com l'elimino?"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(
            model="docubot",
            messages=[{"role": "user", "content": PDF}],
            extra_headers={"X-DocuBot-Session": "s_" + "0" * 20},
        )


def test_the_api_docs_load_nothing_from_the_internet(server: Server) -> None:
    page = httpx.get(f"{server.url}/docs")
    assert page.status_code == 200 and "swagger-ui-bundle.js" in page.text
    assert "http://" not in page.text and "https://" not in page.text and "//cdn" not in page.text
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert httpx.get(f"{server.url}/docs/assets/{asset}").status_code == 200
    assert httpx.get(f"{server.url}/openapi.json").json()["paths"]["/v1/chat/completions"]
