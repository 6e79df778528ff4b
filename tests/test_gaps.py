"""`docubot gaps` and the admin page `/admin/gaps`: refused and low-confidence questions from the call
log and 👎 answers from the sessions, grouped by topic (real e5); erased users never show."""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from pathlib import Path

import httpx
import numpy as np
import pytest
from typer.testing import CliRunner

from docubot.calllog import CallLog, CallRecord, calls
from docubot.cli import app
from docubot.components import Components
from docubot.config import Settings
from docubot.db import Database
from docubot.gaps import cluster, medoid
from docubot.rag.answer import DocuBot
from docubot.server.app import create_app
from docubot.server.users import UserStore
from tests.servers import serving

TOPICS: dict[str, list[str]] = {
    "offline": [
        "Es pot fer servir l'aplicació mòbil sense connexió?",
        "L'app del mòbil funciona sense internet?",
        "Puc treballar des del telèfon quan no tinc cobertura?",
        "Hi ha mode fora de línia a l'aplicació per a mòbils?",
        "Com faig servir Nubelia al mòbil sense connexió a internet?",
        "L'aplicació d'Android guarda les dades per treballar sense connexió?",
        "Si perdo la connexió al mòbil, puc continuar treballant a l'app?",
        "Funciona l'app per a iPhone en mode avió?",
    ],
    "dark_mode": [
        "Com activo el mode fosc?",
        "Hi ha un tema fosc a la interfície?",
        "Puc canviar els colors de la interfície a fosc?",
        "On es posa el mode nit?",
        "Es pot tenir la pantalla amb fons negre en lloc de blanc?",
        "Com canvio el tema de la interfície a fosc?",
        "Teniu mode fosc per cansar menys la vista?",
        "Com passo la interfície al tema fosc?",
    ],
    "trello": [
        "Com importo els meus taulers de Trello?",
        "Puc migrar els projectes des de Trello?",
        "Hi ha un importador de Trello?",
        "Com porto les targetes de Trello a Nubelia?",
        "Es poden importar dades d'un tauler de Trello?",
        "Vull passar tots els taulers de Trello cap aquí, com ho faig?",
        "Importació des de Trello: és possible?",
    ],
    "residency": [
        "On s'emmagatzemen les meves dades?",
        "En quin país són els servidors?",
        "Les dades es guarden a la Unió Europea?",
        "On estan allotjats els servidors de Nubelia?",
        "Puc triar que les dades es guardin a Europa?",
        "A quin centre de dades es desen les dades dels clients?",
        "Les meves dades surten de la UE?",
    ],
}
LOW_CONFIDENCE = [
    "Com es configura el tema fosc de la interfície?",
    "Es pot posar la interfície en mode fosc?",
]
NOW = time.time()


@pytest.fixture
def home(sample_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(sample_home, copy)
    with Database(Settings(home=copy)) as db, db.write() as connection:
        connection.execute(calls.delete())  # other tests' questions to the shared sample home
    for name in ("DOCUBOT_CONFIG", "DOCUBOT_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCUBOT_HOME", str(copy))
    return copy


def call(question: str, outcome: str, confidence: str, hours_ago: float, user: str = "anna") -> CallRecord:
    answer = {"categoria": "altres", "resposta": "…", "fonts": [], "confianca": confidence}
    return CallRecord(
        question, {}, [], "v1", "none/extractive", outcome, answer, user=user, ts=NOW - hours_ago * 3600
    )


def seed(home: Path) -> None:
    """30 refused questions from four topics, two low-confidence answers, and calls that must not count."""
    records = [
        call(q, "refused", "baixa", hours_ago=i)
        for i, q in enumerate(q for questions in TOPICS.values() for q in questions)
    ]
    records += [call(q, "answered", "baixa", hours_ago=0.5) for q in LOW_CONFIDENCE]
    records += [
        call("Com exporto un informe a PDF?", "answered", "alta", hours_ago=1),  # answered well
        call("?", "empty_question", "baixa", hours_ago=1),  # content-free: no gap in the docs
        call("Com exporto a Excel?", "refused", "baixa", hours_ago=40 * 24),  # older than 30 days
        call("Quina és la recepta de la paella?", "refused", "baixa", hours_ago=2, user="eva"),
    ]
    with Database(Settings(home=home)) as db:
        log = CallLog(db)
        for record in records:
            log.record(record)
        components = Components.from_settings(Settings(home=home), db=db)
        for erase in components.user_erasers.values():  # what erasing the user eva runs
            erase("eva")


def gaps(*args: str) -> dict:
    result = CliRunner().invoke(app, ["gaps", "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def topic_of(question: str) -> str:
    if question in LOW_CONFIDENCE:
        return "dark_mode"
    return next(t for t, questions in TOPICS.items() if question in questions)


def test_gaps_groups_the_seeded_questions_into_their_topics(home: Path, tmp_path: Path) -> None:
    seed(home)
    plot = tmp_path / "gaps.png"
    report = gaps("--plot", str(plot))
    assert report["questions"] == 32
    assert report["sources"] == {"refused": 30, "low_confidence": 2, "thumbs_down": 0}
    members = [[topic_of(q) for q in c["questions"]] for c in report["clusters"]]
    big = [c for c in report["clusters"] if c["count"] >= 5]
    assert len(big) == 4
    assert {topic_of(c["representative"]) for c in big} == set(TOPICS)
    written = Counter({topic: len(questions) for topic, questions in TOPICS.items()})
    written["dark_mode"] += len(LOW_CONFIDENCE)
    for c in big:  # each topic's group holds (nearly) all the questions written from it
        assert abs(c["count"] - written[topic_of(c["representative"])]) <= 2, (c["count"], written)
    sizes = [c["count"] for c in report["clusters"]]
    assert sum(sizes) == 32
    # the examples listed (up to five per group, closest first) are of the group's topic
    assert all(Counter(m).most_common(1)[0][1] >= len(m) - 1 for m in members)
    dark = next(c for c in big if topic_of(c["representative"]) == "dark_mode")
    assert dark["reasons"].get("low_confidence") == 2
    assert all(c["nearest_page"]["url"] and 0 < c["nearest_page"]["similarity"] < 1 for c in big), big
    assert plot.read_bytes().startswith(b"\x89PNG")
    everything = gaps("--days", "60")
    assert everything["questions"] == 33  # the 40-day-old refusal; never eva's erased one
    asked = {q for c in everything["clusters"] for q in c["questions"]}
    assert "Com exporto a Excel?" in asked and "Quina és la recepta de la paella?" not in asked


def test_clustering_purity_on_the_real_embeddings(embedder) -> None:
    labels = [t for t, questions in TOPICS.items() for _ in questions]
    vectors = np.stack([embedder.embed_query(q) for questions in TOPICS.values() for q in questions])
    groups = cluster(vectors, 0.86)
    purity = sum(Counter(labels[i] for i in g).most_common(1)[0][1] for g in groups) / len(labels)
    assert purity >= 0.95
    assert sorted({Counter(labels[i] for i in g).most_common(1)[0][0] for g in groups[:4]}) == sorted(TOPICS)
    assert all(
        labels[medoid(vectors, g)] == Counter(labels[i] for i in g).most_common(1)[0][0] for g in groups
    )


def test_clustering_stops_at_the_threshold() -> None:
    vectors = np.array([[1.0, 0.0], [0.99, 0.141], [0.0, 1.0]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert cluster(vectors, 0.95) == [[0, 1], [2]]
    assert cluster(vectors, -1.0) == [[0, 1, 2]]
    assert cluster(np.empty((0, 2), dtype=np.float32), 0.5) == []


PDF = "Com exporto un informe a PDF?"
PAELLA = "Quina és la recepta de la paella?"
INJECTED = "<script>alert('x')</script> Com faig la paella valenciana?"


def ask_and_rate(client: httpx.Client, question: str, comment: str | None) -> dict:
    """Ask in a new session, give the answer a 👎; returns the stored answer."""
    session_id = client.post("/v1/sessions").json()["id"]
    streamed = client.post(f"/v1/sessions/{session_id}/messages", json={"content": question})
    assert "event: done" in streamed.text, streamed.text
    rated = client.put(
        f"/v1/sessions/{session_id}/turns/1/feedback", json={"rating": "down", "comment": comment}
    )
    assert rated.status_code == 200, rated.text
    return client.get(f"/v1/sessions/{session_id}").json()["messages"][0]["answer"]


def test_thumbs_down_answers_join_the_report_and_the_admin_page_shows_it(
    home: Path, sample_settings: Settings, embedder
) -> None:
    settings = sample_settings.with_overrides(home=home)
    bot = DocuBot(settings, embedder=embedder)
    users = UserStore(bot.db)
    keys = {name: users.add(name, admin=name == "docs")[1] for name in ("anna", "eva", "docs")}
    with serving(create_app(settings, bot)) as url:
        client = {
            name: httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60)
            for name, key in keys.items()
        }
        assert (
            ask_and_rate(client["anna"], PDF, "El botó <b>Exportar</b> ja no hi és")["outcome"] == "answered"
        )
        assert ask_and_rate(client["anna"], PAELLA, "Cal documentar-ho")["outcome"] == "refused"
        ask_and_rate(client["anna"], INJECTED, None)
        ask_and_rate(client["eva"], "Com canvio el logotip de l'empresa?", "comentari privat d'eva")
        erased = CliRunner().invoke(app, ["sessions", "delete", "--all", "--user", "eva"])
        assert erased.exit_code == 0, erased.output

        report = gaps()
        # the refused paella turn is in the call log and got a 👎: it counts once, as a 👎
        assert report["sources"] == {"refused": 0, "low_confidence": 0, "thumbs_down": 3}
        pdf = next(c for c in report["clusters"] if c["representative"] == PDF)
        assert pdf["reasons"] == {"thumbs_down": 1} and pdf["comments"] == [
            "El botó <b>Exportar</b> ja no hi és"
        ]
        assert pdf["nearest_page"]["url"] == "wiki/guies/informes-i-exportacio"
        paella = next(c for c in report["clusters"] if PAELLA in c["questions"])
        assert "Cal documentar-ho" in paella["comments"]
        text = json.dumps(report, ensure_ascii=False)
        assert "eva" not in text and "logotip" not in text  # erased with its user

        anonymous = httpx.get(f"{url}/admin/gaps")
        assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"].startswith("Basic")
        assert client["anna"].get("/admin/gaps").status_code == 403
        assert httpx.get(f"{url}/admin/gaps", auth=("x", keys["anna"])).status_code == 403
        assert httpx.get(f"{url}/admin/gaps", auth=("x", "dbk_wrong")).status_code == 401
        for page in (
            client["docs"].get("/admin/gaps?days=7"),
            httpx.get(f"{url}/admin/gaps", auth=("docs", keys["docs"])),
        ):
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            html = page.text
            assert f"<td>{PDF}" in html and "wiki/guies/informes-i-exportacio" in html
            assert "El botó &lt;b&gt;Exportar&lt;/b&gt; ja no hi és" in html and "<b>Exportar" not in html
            assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html and "<script" not in html
            assert "logotip" not in html and "3 questions" in html
            assert "script-src 'self'" in page.headers["content-security-policy"]
        assert 'value="7"' in client["docs"].get("/admin/gaps?days=7").text
        assert client["docs"].get("/admin/gaps?days=0").status_code == 422
        css = httpx.get(f"{url}/admin/gaps.css")
        assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    bot.db.close()
