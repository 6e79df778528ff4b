"""Sessions on both backends (SQLite file and a real PostgreSQL): persistence after every turn,
isolation between users, restarts, concurrency, expiry, erasure and export."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from docubot.chat.policies import PolicyError
from docubot.config import Settings
from docubot.llm import ChatRequest, StreamEvent, Usage
from docubot.rag.answer import DocuBot
from docubot.rag.prompt import REFUSAL_TEXT
from docubot.sessions import InvalidSessionId, SessionManager, SessionNotFound
from tests.corpus_fixtures import with_sample_corpus
from tests.fakes import grounded_reply

PLANS_URL = "wiki/administracio/plans-i-facturacio"


class EchoModel:
    """Thread-safe stand-in for the LLM: answers "Resposta a: <question> <quote>" (`grounded_reply`;
    with `echo_prompt`, the whole prompt it was sent) and rewrites follow-ups to themselves."""

    name = "fake/echo"
    context_window = 4096

    def __init__(self, echo_prompt: bool = False) -> None:
        self.echo_prompt = echo_prompt
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        last = request.messages[-1].content
        prompt = "\n".join([request.system, *(m.content for m in request.messages)])
        with self._lock:
            self.prompts.append(prompt)
        if request.system.startswith("Resumeix"):
            text = "L'usuari ha fet preguntes sobre Nubelia."
        elif request.system.startswith("Reescriu"):
            question = last.rsplit("Última pregunta: ", 1)[-1].split("\n")[0]
            text = json.dumps({"pregunta": question})
        elif self.echo_prompt:
            text = json.dumps({"fonts": [1], "resposta": prompt, "categoria": "altres", "confianca": "alta"})
        else:
            text = grounded_reply(last)
        yield StreamEvent(text=text)
        yield StreamEvent(usage=Usage(self.count_tokens(prompt), self.count_tokens(text)))


@pytest.fixture(params=["sqlite", "postgres"])
def db_settings(request, sample_settings: Settings, tmp_path) -> Settings:
    """The sample store, with sessions in a fresh SQLite file or in the test PostgreSQL server."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    return with_sample_corpus(sample_settings, url)


@pytest.fixture
def users() -> tuple[str, str]:
    """Two user ids unique to the test (the PostgreSQL database is shared by the whole run)."""
    tag = uuid.uuid4().hex[:8]
    return f"anna-{tag}", f"biel-{tag}"


def manager(settings: Settings, embedder, model=None) -> SessionManager:
    bot = DocuBot(settings, embedder=embedder, chat_model=model)
    return SessionManager(settings, bot, bot.db)


def test_a_session_keeps_every_turn(db_settings, embedder, users) -> None:
    anna, _ = users
    sessions = manager(db_settings, embedder)
    info = sessions.create(anna)
    assert info.turns == 0 and info.user == anna and info.policy == "sliding_window:4"
    first = sessions.send(anna, info.id, "Com exporto un informe a PDF?")
    sessions.send(anna, info.id, "Com restableixo la contrasenya?")
    turns = sessions.turns(anna, info.id)
    assert [(t.turn, t.question) for t in turns] == [
        (1, "Com exporto un informe a PDF?"),
        (2, "Com restableixo la contrasenya?"),
    ]
    assert turns[0].answer["resposta"] == first.answer.resposta
    assert turns[0].answer["sources"] and turns[0].answer["outcome"] == "answered"
    stored = sessions.get(anna, info.id)
    assert stored.turns == 2 and stored.title == "Com exporto un informe a PDF?"
    assert stored.expires_at == pytest.approx(stored.updated_at + 30 * 86400)
    assert [s.id for s in sessions.list(anna)] == [info.id]


def test_a_bad_policy_is_refused_before_anything_is_stored(db_settings, embedder, users) -> None:
    sessions = manager(db_settings, embedder)
    with pytest.raises(PolicyError):
        sessions.create(users[0], policy="forever")
    assert sessions.list(users[0]) == []


# -- isolation --------------------------------------------------------------------------------------


def test_another_users_session_is_not_found_and_stays_intact(db_settings, embedder, users) -> None:
    anna, biel = users
    sessions = manager(db_settings, embedder)
    info = sessions.create(anna)
    sessions.send(anna, info.id, "Com exporto un informe a PDF?")
    for attempt in (
        lambda: sessions.get(biel, info.id),
        lambda: sessions.turns(biel, info.id),
        lambda: sessions.delete(biel, info.id),
        lambda: sessions.send(biel, info.id, "Quin pla faig servir jo?"),
    ):
        with pytest.raises(SessionNotFound):
            attempt()
    assert sessions.get(anna, info.id).turns == 1
    assert sessions.list(biel) == []


def test_the_isolation_case_of_the_original_design(db_settings, embedder, users) -> None:
    anna, biel = users
    sessions = manager(db_settings, embedder)
    a, b = sessions.create(anna), sessions.create(biel)
    sessions.send(anna, a.id, "Faig servir el pla Business. Puc exportar a CSV?")
    answer = sessions.send(biel, b.id, "Quin pla faig servir jo?")
    assert answer.answer.resposta == REFUSAL_TEXT
    assert "Business" not in json.dumps([t.answer for t in sessions.turns(biel, b.id)], ensure_ascii=False)


def test_nothing_of_one_users_conversation_reaches_anothers_prompt(db_settings, embedder, users) -> None:
    anna, biel = users
    model = EchoModel(echo_prompt=True)
    sessions = manager(db_settings, embedder, model)
    a, b = sessions.create(anna), sessions.create(biel)
    sessions.send(anna, a.id, "Em dic Ferran Quintana. Com exporto un projecte a CSV?")
    sessions.send(anna, a.id, "Com restableixo la contrasenya?")
    assert "Quintana" in model.prompts[-1]  # anna's own later prompts carry her history
    model.prompts.clear()
    sessions.send(biel, b.id, "Com restableixo la contrasenya?")
    assert model.prompts and not any(
        "Quintana" in p or "CSV" in p.split("<documentacio>")[0] for p in model.prompts
    )


def test_a_thousand_sessions_of_a_hundred_users_list_exactly_their_own(db_settings, embedder) -> None:
    sessions = manager(db_settings, embedder)
    tag = uuid.uuid4().hex[:8]
    owned: dict[str, set[str]] = {f"u{n}-{tag}": set() for n in range(100)}
    for _ in range(10):
        for user in owned:
            owned[user].add(sessions.create(user).id)
    assert all({s.id for s in sessions.list(user)} == ids for user, ids in owned.items())


@pytest.mark.parametrize(
    "hostile", ["../../etc/passwd", "a" * 10_000, "ñandú-12345", "", "abc", "x" * 65, "id with spaces"]
)
def test_hostile_session_ids_are_rejected_before_any_lookup(db_settings, embedder, users, hostile) -> None:
    sessions = manager(db_settings, embedder)
    with pytest.raises(InvalidSessionId):
        sessions.get(users[0], hostile)
    with pytest.raises(InvalidSessionId):
        sessions.send(users[0], hostile, "Hola")


def test_a_new_session_id_never_looks_like_a_cli_option() -> None:
    """CI once failed because a random id began with "-" and `sessions show <id>` read it as an option."""
    from docubot.sessions.ids import new_session_id

    ids = [new_session_id() for _ in range(5_000)]
    assert not [i for i in ids if i.startswith("-")]
    assert len(set(ids)) == len(ids)


# -- persistence ----------------------------------------------------------------------------------------


def test_a_restart_between_turns_keeps_the_context(db_settings, embedder, users) -> None:
    anna, _ = users
    info = manager(db_settings, embedder).create(anna)
    manager(db_settings, embedder).send(anna, info.id, "Com exporto un projecte a CSV?")
    restarted = manager(db_settings, embedder)  # a new process: fresh connections, nothing in memory
    result = restarted.send(anna, info.id, "I això està disponible al pla Starter?")
    call = restarted.bot.call_log.last(1)[0]
    assert call.retrieval_question and "CSV" in call.retrieval_question  # "això" resolved from turn 1
    assert PLANS_URL in {s.url for s in result.sources}
    assert restarted.get(anna, info.id).turns == 2


def test_profile_summary_and_usage_survive_a_restart(db_settings, embedder, users) -> None:
    anna, _ = users
    info = manager(db_settings, embedder, EchoModel()).create(anna, policy="last_turns:1")
    first = manager(db_settings, embedder, EchoModel())
    first.send(anna, info.id, "Faig servir el pla Business. Com convido un membre?")
    first.send(anna, info.id, "Com restableixo la contrasenya?")
    model = EchoModel(echo_prompt=True)
    again = manager(db_settings, embedder, model)
    again.send(anna, info.id, "Com exporto un informe a PDF?")
    assert "pla: Business" in model.prompts[-1]  # the profile outlived the process and the policy
    exported = again.export_user(anna)["sessions"][0]
    assert [u["turn"] for u in exported["usage"]] == [1, 2, 3]
    assert all(u["policy"] == "last_turns:1" and u["input_tokens"] > 0 for u in exported["usage"])
    assert {f["kind"]: f["value"] for f in exported["facts"]}["pla"] == "Business"


def test_a_client_that_goes_away_mid_answer_stores_nothing(db_settings, embedder, users) -> None:
    anna, _ = users
    sessions = manager(db_settings, embedder, EchoModel())
    info = sessions.create(anna)

    def gone(_: str) -> None:
        raise ConnectionResetError("client disconnected")

    with pytest.raises(ConnectionResetError):
        sessions.send(anna, info.id, "Com exporto un informe a PDF?", on_text=gone)
    assert sessions.get(anna, info.id).turns == 0 and sessions.turns(anna, info.id) == []
    sessions.send(anna, info.id, "Com restableixo la contrasenya?")
    assert [t.turn for t in sessions.turns(anna, info.id)] == [1]


# -- concurrency ---------------------------------------------------------------------------------------


def _check_turns(sessions: SessionManager, user: str, session_id: str, expected: set[str]) -> None:
    turns = sessions.turns(user, session_id)
    assert [t.turn for t in turns] == list(range(1, len(expected) + 1))  # no gap, no duplicate
    assert {t.question for t in turns} == expected  # none lost
    mixed = [
        (t.question, t.answer["resposta"])
        for t in turns
        if not t.answer["resposta"].startswith(f"Resposta a: {t.question} ")
        and t.answer["resposta"] != REFUSAL_TEXT
    ]
    assert mixed == []  # no answer stored under another question
    assert sum(t.answer["resposta"] != REFUSAL_TEXT for t in turns) >= len(turns) // 2
    assert sessions.get(user, session_id).turns == len(expected)


def test_eight_writers_on_one_session_lose_and_duplicate_nothing(db_settings, embedder, users) -> None:
    anna, _ = users
    sessions = manager(db_settings, embedder, EchoModel())
    info = sessions.create(anna)
    questions = [f"Com exporto l'informe número {n} a PDF?" for n in range(24)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda q: sessions.send(anna, info.id, q), questions))
    _check_turns(sessions, anna, info.id, set(questions))


def test_eight_writers_on_eight_sessions(db_settings, embedder, users) -> None:
    anna, _ = users
    sessions = manager(db_settings, embedder, EchoModel())
    ids = [sessions.create(anna).id for _ in range(8)]
    work = [(i, f"Com restableixo la contrasenya {n}?") for i in ids for n in range(3)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda job: sessions.send(anna, job[0], job[1]), work))
    for i in ids:
        _check_turns(sessions, anna, i, {q for s, q in work if s == i})


def test_two_processes_writing_one_session_never_reuse_a_turn_number(db_settings, embedder, users) -> None:
    """Two managers stand for two server processes: only the database orders their turns."""
    anna, _ = users
    first, second = manager(db_settings, embedder, EchoModel()), manager(db_settings, embedder, EchoModel())
    info = first.create(anna)
    questions = [f"Com convido el membre número {n}?" for n in range(16)]
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(
                lambda pair: (first, second)[pair[0] % 2].send(anna, info.id, pair[1]), enumerate(questions)
            )
        )
    _check_turns(first, anna, info.id, set(questions))


# -- retention and privacy -----------------------------------------------------------------------------


def test_expired_sessions_disappear_and_are_purged(db_settings, embedder, users) -> None:
    anna, _ = users
    sessions = manager(db_settings, embedder)
    old, fresh = sessions.create(anna), sessions.create(anna)
    sessions.send(anna, old.id, "Com exporto un informe a PDF?")
    short = manager(db_settings.with_overrides(session_ttl_days=1e-9), embedder)
    short.send(anna, fresh.id, "Com restableixo la contrasenya?")  # its expiry is now in the past
    assert {s.id for s in sessions.list(anna)} == {old.id}
    with pytest.raises(SessionNotFound):
        sessions.get(anna, fresh.id)
    assert sessions.purge_expired() >= 1
    assert sessions.purge_expired(now=sessions.get(anna, old.id).expires_at + 1) >= 1
    assert sessions.list(anna) == []


def test_deleting_a_user_erases_everything_and_export_shows_it_first(db_settings, embedder, users) -> None:
    anna, biel = users
    settings = db_settings.with_overrides(cache_enabled=True)
    sessions = manager(settings, embedder)
    keep = sessions.create(biel)
    sessions.send(biel, keep.id, "Com exporto un informe a PDF?")
    for _ in range(2):
        info = sessions.create(anna)
        sessions.send(anna, info.id, "Faig servir el pla Business. Com convido un membre?")
        sessions.send(anna, info.id, "Com restableixo la contrasenya?")
    exported = sessions.export_user(anna)
    assert len(exported["sessions"]) == 2 and all(len(s["turns"]) == 2 for s in exported["sessions"])
    assert len(exported["calls"]) == 4 and {c["user"] for c in exported["calls"]} == {anna}
    json.dumps(exported)  # JSON-ready
    erased = sessions.delete_user(anna)
    assert erased["sessions"] == 2 and erased["call_log"] == 4 and erased["cached_answers"] >= 1
    assert sessions.list(anna) == [] and sessions.bot.call_log.for_user(anna) == []
    assert sessions.export_user(anna)["sessions"] == []
    assert sessions.get(biel, keep.id).turns == 1  # nobody else lost anything


# -- command line ------------------------------------------------------------------------------------


def test_the_sessions_command_lists_shows_exports_and_erases(
    sample_settings, embedder, tmp_path, monkeypatch
):
    from typer.testing import CliRunner

    from docubot.cli import app

    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("DOCUBOT_HOME", str(sample_settings.home))
    monkeypatch.setenv("DOCUBOT_DATABASE_URL", url)
    sessions = manager(with_sample_corpus(sample_settings, url), embedder)
    info = sessions.create("carla")
    sessions.send("carla", info.id, "Com exporto un informe a PDF?")
    runner = CliRunner()

    listed = json.loads(runner.invoke(app, ["sessions", "list", "--user", "carla", "--json"]).stdout)
    assert [s["id"] for s in listed] == [info.id]
    shown = runner.invoke(app, ["sessions", "show", info.id, "--user", "carla"])
    assert shown.exit_code == 0 and "Com exporto un informe a PDF?" in shown.stdout
    other = runner.invoke(app, ["sessions", "show", info.id, "--user", "dani"])
    assert other.exit_code == 2 and "no session" in other.stderr
    hostile = runner.invoke(app, ["sessions", "show", "../../etc/passwd", "--user", "carla"])
    assert (
        hostile.exit_code == 2
        and "invalid session id" in hostile.stderr
        and "Traceback" not in hostile.output
    )
    out = tmp_path / "carla.json"
    assert runner.invoke(app, ["sessions", "export", "--user", "carla", "-o", str(out)]).exit_code == 0
    assert (
        json.loads(out.read_text())["sessions"][0]["turns"][0]["question"] == "Com exporto un informe a PDF?"
    )
    erased = runner.invoke(app, ["sessions", "delete", "--user", "carla", "--all"])
    assert erased.exit_code == 0 and "1 sessions" in erased.stdout
    assert json.loads(runner.invoke(app, ["sessions", "list", "--user", "carla", "--json"]).stdout) == []
