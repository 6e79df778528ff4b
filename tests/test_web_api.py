"""The endpoints and fields the web page uses, over a real uvicorn server (extractive answers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docubot.config import Settings
from tests.corpus_fixtures import with_sample_corpus
from tests.servers import serving
from tests.test_server import PDF, Api, post_message, start

BASE = "https://docs.nubelia.cat/"
EXPORT = ("wiki/guies/informes-i-exportacio", "Informes i exportació > Exportar informes", "2026.2")


@pytest.fixture
def api_settings(sample_settings, tmp_path) -> Settings:
    return with_sample_corpus(sample_settings, f"sqlite:///{tmp_path / 'web.db'}")


@pytest.fixture
def web(api_settings, embedder) -> Iterator[Api]:
    settings = api_settings.with_overrides(docs_base_url=BASE)
    app, keys = start(settings, embedder)
    with serving(app) as url:
        yield Api(url, settings, keys)


def test_answers_come_rendered_with_links_to_the_published_docs(web: Api) -> None:
    client = web.client("anna")
    session_id = client.post("/v1/sessions").json()["id"]
    done = post_message(client, session_id, PDF)[-1][1]
    assert "<em>Informes &gt; Exportar</em>" in done["html"]
    assert "<strong>L'exportació a PDF no està disponible.</strong>" in done["html"]
    assert done["sources"][0]["href"] == f"{BASE}wiki/guies/informes-i-exportacio#exportar-informes"
    [turn] = client.get(f"/v1/sessions/{session_id}").json()["messages"]
    assert turn["answer"]["html"] == done["html"] and turn["answer"]["sources"] == done["sources"]


def test_without_a_base_url_the_section_text_is_served_instead(api_settings, embedder) -> None:
    app, keys = start(api_settings, embedder)
    with serving(app) as url:
        client = Api(url, api_settings, keys).client("anna")
        session_id = client.post("/v1/sessions").json()["id"]
        done = post_message(client, session_id, PDF)[-1][1]
        assert {s["href"] for s in done["sources"]} == {None}
        url_, section, version = EXPORT
        params = {"url": url_, "section": section, "version": version}
        shown = client.get("/v1/sources/text", params=params)
        assert shown.status_code == 200, shown.text
        assert shown.json()["text"].startswith(
            "Qualsevol informe es pot exportar des de *Informes > Exportar*."
        )
        assert "<li><strong>CSV</strong>:" in shown.json()["html"]
        missing = client.get("/v1/sources/text", params={**params, "section": "Informes i exportació > Cap"})
        assert missing.status_code == 404 and "no indexed section" in missing.json()["error"]
        assert (
            Api(url, api_settings, keys).client(None).get("/v1/sources/text", params=params).status_code
            == 401
        )


def test_example_questions_come_from_the_corpus_and_are_answered(web: Api) -> None:
    client = web.client("anna")
    questions = client.get("/v1/examples").json()["questions"]
    assert questions == [
        "Com puc convidar membres?",
        "Com puc duplicar un projecte?",
        "Com puc connectar Slack?",
    ]
    for question in questions:
        assert client.post("/v1/ask", json={"question": question}).json()["outcome"] == "answered"
    assert web.client(None).get("/v1/examples").status_code == 401


def test_a_renamed_conversation_keeps_its_name_after_the_first_question(web: Api) -> None:
    """Before, the first answered turn overwrote any title with the question."""
    client = web.client("anna")
    session_id = client.post("/v1/sessions").json()["id"]
    renamed = client.patch(f"/v1/sessions/{session_id}", json={"title": "  Informes   en PDF "})
    assert renamed.status_code == 200 and renamed.json()["title"] == "Informes en PDF"
    post_message(client, session_id, PDF)
    assert client.get(f"/v1/sessions/{session_id}").json()["title"] == "Informes en PDF"

    other = client.post("/v1/sessions").json()["id"]
    post_message(client, other, PDF)
    assert client.get(f"/v1/sessions/{other}").json()["title"] == PDF  # not renamed: the question
    assert client.patch(f"/v1/sessions/{other}", json={"title": "x" * 300}).json()["title"] == "x" * 79 + "…"
    assert client.patch(f"/v1/sessions/{other}", json={"title": "   "}).status_code == 422
    assert web.client("biel").patch(f"/v1/sessions/{other}", json={"title": "meu"}).status_code == 404
    assert client.get(f"/v1/sessions/{other}").json()["title"] == "x" * 79 + "…"
