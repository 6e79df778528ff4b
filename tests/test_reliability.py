"""Reliability and privacy (issue 14) on the real stores, SQLite and PostgreSQL: summaries that fail,
cache writes that race or fail, control characters, erasure and retention of every copy of a user's
words, and an erasure racing an answer. Fake models only steer control flow."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select, text

from docubot.cache.answers import cached_answers
from docubot.calllog import CallLog
from docubot.config import Settings
from docubot.db import Database
from docubot.llm import ChatRequest, ProviderError, StreamEvent, Usage
from docubot.rag.answer import DocuBot, QuestionError, TurnContext
from docubot.rag.question import EMPTY_QUESTION_TEXT, is_content_free
from docubot.sessions import SessionManager, SessionNotFound
from tests.corpus_fixtures import with_sample_corpus
from tests.fakes import grounded_reply

PDF = "Com exporto un informe a PDF?"
PDF_REWORDED = "Com puc exportar un informe a PDF, si us plau?"


class TurnModel:
    """Thread-safe stand-in for the LLM: a valid contract echoing the question, a fixed summary
    (or a ProviderError for each summary request while `failing_summaries` lasts), and optionally
    a gate that holds every answer until released."""

    name = "fake/turns"
    context_window = 4096

    def __init__(self, failing_summaries: int = 0, hold: bool = False) -> None:
        self.failing_summaries = failing_summaries
        self.summary_calls = 0
        self.started = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def stream(self, request: ChatRequest) -> Iterator[StreamEvent]:
        last = request.messages[-1].content
        if request.system.startswith("Resumeix"):
            with self._lock:
                self.summary_calls += 1
                failing = self.summary_calls <= self.failing_summaries
            if failing:
                raise ProviderError("summary provider overloaded", transient=True)
            reply = "L'usuari demana per informes i contrasenyes (resum del model)."
        elif request.system.startswith("Reescriu"):
            question = last.rsplit("Última pregunta: ", 1)[-1].split("\n")[0]
            reply = json.dumps({"pregunta": question})
        else:
            self.started.set()
            self.release.wait(30)
            reply = grounded_reply(last)
        yield StreamEvent(text=reply)
        yield StreamEvent(usage=Usage(10, 10))


@pytest.fixture(params=["sqlite", "postgres"])
def db_settings(request, sample_settings: Settings, tmp_path) -> Settings:
    """The sample store with the answer cache on; the database a fresh SQLite file or the test
    PostgreSQL server (its cache table emptied first: the server is shared by the whole run)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'reliability.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    return with_sample_corpus(sample_settings, url).with_overrides(cache_enabled=True)


@pytest.fixture
def users() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"anna-{tag}", f"biel-{tag}"


def manager(settings: Settings, embedder, model=None) -> SessionManager:
    bot = DocuBot(settings, embedder=embedder, chat_model=model)
    assert bot.cache is not None
    bot.cache.clear()
    return SessionManager(settings, bot, bot.db)


def cache_rows(settings: Settings, embedder) -> list[dict]:
    with Database(settings) as db, db.read() as conn:
        return [dict(r) for r in conn.execute(select(cached_answers)).mappings()]


def calls_of(settings: Settings, user: str) -> list:
    with Database(settings) as db:
        return CallLog(db).for_user(user)


# -- 4: a failing summary ----------------------------------------------------------------------------


def test_a_summary_the_provider_fails_falls_back_to_a_rule_summary(db_settings, embedder, users) -> None:
    anna, _ = users
    model = TurnModel(failing_summaries=99)
    sessions = manager(db_settings, embedder, model)
    info = sessions.create(anna, policy="sliding_window:1")
    questions = [PDF, "Com restableixo la contrasenya?", "Com convido un membre a l'espai de treball?"]
    results = [sessions.send(anna, info.id, q) for q in questions]  # the third turn folds the first
    assert model.summary_calls == 2  # the transient failure was retried once
    assert [r.outcome for r in results] == ["answered"] * 3
    summary = sessions.export_user(anna)["sessions"][0]["summary"]
    assert summary == f"L'usuari va preguntar: {PDF}"
    assert sessions.get(anna, info.id).turns == 3


def test_a_summary_that_fails_once_is_retried_and_kept(db_settings, embedder, users) -> None:
    anna, _ = users
    model = TurnModel(failing_summaries=1)
    sessions = manager(db_settings, embedder, model)
    info = sessions.create(anna, policy="sliding_window:1")
    for question in (PDF, "Com restableixo la contrasenya?", "Com convido un membre?"):
        sessions.send(anna, info.id, question)
    assert sessions.export_user(anna)["sessions"][0]["summary"].endswith("(resum del model).")


# -- 6: concurrent first askers, failing cache writes ---------------------------------------------------


def test_concurrent_first_askers_of_one_question_all_get_their_answer(db_settings, embedder) -> None:
    bot = DocuBot(db_settings, embedder=embedder, chat_model=None)
    assert bot.cache is not None
    bot.cache.clear()
    barrier = threading.Barrier(16)

    def ask(_: int) -> str:
        barrier.wait()
        return bot.ask(PDF).outcome

    with ThreadPoolExecutor(16) as pool:
        outcomes = list(pool.map(ask, range(48)))
    assert outcomes == ["answered"] * 48
    assert [r["question"] for r in cache_rows(db_settings, embedder)] == [PDF]


def test_a_cache_write_that_fails_never_fails_the_answer(db_settings, embedder, caplog) -> None:
    bot = DocuBot(db_settings, embedder=embedder, chat_model=None)
    assert bot.cache is not None
    bot.cache.clear()
    dialect = bot.db.engine.dialect.name
    statements = {
        "sqlite": [
            "CREATE TRIGGER refuse_cache BEFORE INSERT ON cached_answers "
            "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        ],
        "postgresql": [
            "CREATE FUNCTION refuse_cache() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'disk full'; END $$",
            "CREATE TRIGGER refuse_cache BEFORE INSERT ON cached_answers "
            "FOR EACH ROW EXECUTE FUNCTION refuse_cache()",
        ],
    }[dialect]
    with bot.db.engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))
    try:
        result = bot.ask(PDF)
    finally:
        with bot.db.engine.begin() as conn:
            conn.execute(
                text("DROP TRIGGER refuse_cache" + (" ON cached_answers" if dialect != "sqlite" else ""))
            )
            if dialect != "sqlite":
                conn.execute(text("DROP FUNCTION refuse_cache()"))
    assert result.outcome == "answered" and "PDF" in result.answer.resposta
    assert any("could not cache" in r.getMessage() for r in caplog.records)
    assert bot.ask(PDF).cache is None  # nothing was cached, and asking again still works


# -- 7: control characters --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["Com exporto\x00 un informe a PDF?", "Com exporto un informe\x1b[31m a PDF?"]
)
def test_control_characters_are_refused_before_anything_is_stored(db_settings, embedder, users, bad) -> None:
    anna, _ = users
    sessions = manager(db_settings, embedder)
    info = sessions.create(anna)
    with pytest.raises(QuestionError, match="control characters"):
        sessions.send(anna, info.id, bad)
    with pytest.raises(QuestionError, match="control characters"):
        sessions.bot.ask(bad, context=TurnContext(user=anna))
    assert sessions.get(anna, info.id).turns == 0 and cache_rows(db_settings, embedder) == []
    ok = sessions.send(anna, info.id, "Com exporto un informe\ta PDF?\n")  # tabs and newlines are text
    assert ok.outcome == "answered"


# -- 8: another user's words ----------------------------------------------------------------------------


def test_a_shared_hit_never_shows_the_first_askers_words_and_erasure_removes_it(
    db_settings, embedder, users
) -> None:
    anna, biel = users
    sessions = manager(db_settings, embedder)
    sessions.send(anna, sessions.create(anna).id, PDF)  # a first turn: cached in the shared scope
    statuses: list[str] = []
    b = sessions.create(biel).id
    hit = sessions.send(biel, b, PDF_REWORDED, on_status=statuses.append)
    assert hit.cache == "semantic"
    assert statuses and not any("exporto" in s or PDF in s for s in statuses)  # anna's wording
    erased = sessions.delete_user(anna)
    assert erased["cached_answers"] == 1
    assert [r for r in cache_rows(db_settings, embedder) if r["owner"] == anna] == []
    again = sessions.send(biel, b, PDF)
    assert again.cache is None  # nothing made from anna's words survived her erasure


# -- 9: retention of every copy -------------------------------------------------------------------------


def test_purging_expired_sessions_removes_their_call_log_rows_and_cached_answers(
    db_settings, embedder, users
) -> None:
    anna, biel = users
    sessions = manager(db_settings, embedder)
    info = sessions.create(anna)
    sessions.send(anna, info.id, "Faig servir el pla Business. Com convido un membre?")
    sessions.send(anna, info.id, PDF)  # with her profile in the prompt: cached in her own scope
    sessions.bot.ask("Com restableixo la contrasenya?", context=TurnContext(user=anna))  # stateless
    rows = cache_rows(db_settings, embedder)
    assert {r["scope"] for r in rows} == {"global", f"user:{anna}"}
    assert len(calls_of(db_settings, anna)) == 3
    fresh = sessions.create(biel)
    sessions.send(biel, fresh.id, "Com restableixo la contrasenya?")  # an exact hit of anna's ask

    assert sessions.purge_expired(now=time.time() + sessions.ttl_s + 1) >= 1  # a TTL after all this
    assert calls_of(db_settings, anna) == []  # past the TTL, sessions or not
    assert [r for r in cache_rows(db_settings, embedder) if anna in (r["owner"], r["scope"][5:])] == []


def test_purging_one_expired_session_keeps_the_live_ones(db_settings, embedder, users) -> None:
    anna, _ = users
    sessions = manager(db_settings, embedder)
    old, live = sessions.create(anna), sessions.create(anna)
    short = SessionManager(db_settings.with_overrides(session_ttl_days=1e-9), sessions.bot, sessions.db)
    short.send(anna, old.id, PDF)  # expires at once
    sessions.send(anna, live.id, "Com restableixo la contrasenya?")
    assert sessions.purge_expired() == 1
    calls = calls_of(db_settings, anna)
    assert [c.session_id for c in calls] == [live.id]
    assert {r["session_id"] for r in cache_rows(db_settings, embedder)} == {live.id}


# -- 11: an erasure racing an answer ----------------------------------------------------------------------


def test_an_answer_in_flight_during_an_erasure_leaves_nothing_behind(db_settings, embedder, users) -> None:
    anna, _ = users
    model = TurnModel(hold=True)
    sessions = manager(db_settings, embedder, model)
    info = sessions.create(anna)
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(sessions.send, anna, info.id, PDF)
        assert model.started.wait(30)
        sessions.delete_user(anna)
        model.release.set()
        with pytest.raises(SessionNotFound):
            answer.result(timeout=60)
    assert calls_of(db_settings, anna) == []
    assert [r for r in cache_rows(db_settings, embedder) if r["owner"] == anna] == []


# -- 12: the committed turn number ---------------------------------------------------------------------


def test_the_turn_number_returned_is_the_one_committed_when_another_process_got_in_first(
    db_settings, embedder, users
) -> None:
    """Two managers stand for two server processes: the first one's answer is held while the second
    commits a turn, so the first must answer again and commit as turn 2, and say so."""
    anna, _ = users
    held = TurnModel(hold=True)
    first, second = manager(db_settings, embedder, held), manager(db_settings, embedder, TurnModel())
    info = first.create(anna)
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(first.answer, anna, info.id, PDF)
        assert held.started.wait(30)
        assert second.answer(anna, info.id, "Com restableixo la contrasenya?").turn == 1
        held.release.set()
        done = answer.result(timeout=60)
    stored = {t.question: t.turn for t in first.turns(anna, info.id)}
    assert done.turn == stored[PDF] == 2


# -- content-free questions ----------------------------------------------------------------------------


@pytest.mark.parametrize("question", ["...", "?", "a", "¿?", " - ", "👍"])
def test_content_free_questions_get_please_ask_and_never_a_cached_reply(
    db_settings, embedder, question
) -> None:
    bot = DocuBot(db_settings, embedder=embedder, chat_model=None)
    assert bot.cache is not None
    bot.cache.clear()
    for _ in range(2):
        result = bot.ask(question)
        assert result.outcome == "empty_question" and result.cache is None
        assert result.answer.resposta == EMPTY_QUESTION_TEXT and result.sources == []
    assert cache_rows(db_settings, embedder) == []
    assert CallLog(bot.db).last(1)[0].outcome == "empty_question"


def test_only_questions_without_a_word_are_content_free() -> None:
    assert all(is_content_free(q) for q in ["...", "?", "a", "5", "!!"])
    assert not any(is_content_free(q) for q in ["PDF?", "2FA", "Hola", "API"])
