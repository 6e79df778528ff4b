"""Answer caches: exact and semantic lookups, the lexical gate, what is never cached, scopes, and
invalidation by corpus version, on the real store and embedder (extractive answers unless said)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from docubot.cache.answers import AnswerCache, cached_answers, normalize_question
from docubot.cache.gate import lexical_gate
from docubot.calllog import CallLog
from docubot.chat.conversation import Conversation
from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.ingest.pipeline import ingest
from docubot.llm import ProviderError
from docubot.rag.answer import DocuBot, TurnContext
from tests.corpus_fixtures import with_sample_corpus
from tests.fakes import ScriptedModel

PDF = "Com exporto un informe a PDF?"


@pytest.fixture
def cached_settings(sample_settings: Settings, tmp_path: Path) -> Settings:
    """The sample store copied to a folder of its own, with the caches on."""
    home = tmp_path / "home"
    shutil.copytree(sample_settings.home, home)
    return sample_settings.with_overrides(home=home, cache_enabled=True)


@pytest.fixture
def bot(cached_settings: Settings, embedder) -> DocuBot:
    return DocuBot(cached_settings, embedder=embedder, chat_model=None)


def cached_questions(bot: DocuBot) -> dict[str, str]:
    """question → scope of every cached entry."""
    assert bot.cache is not None
    with bot.cache.db.read() as conn:
        rows = conn.execute(select(cached_answers.c.question, cached_answers.c.scope)).all()
    return {r.question: r.scope for r in rows}


def contract(resposta: str, confianca: str = "alta") -> str:
    return json.dumps({"fonts": [1], "resposta": resposta, "categoria": "informes", "confianca": confianca})


# -- keys and the gate ----------------------------------------------------------------------------


def test_exact_key_ignores_case_whitespace_and_punctuation_but_not_words() -> None:
    assert normalize_question("  Com exporto  un informe a PDF?? ") == normalize_question(
        "com exporto un informe a pdf"
    )
    assert normalize_question("Com exporto un informe a PDF?") != normalize_question(
        "Com exporto un informe a CSV?"
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Com activo la verificació en dos passos?", "Com desactivo la verificació en dos passos?"),
        ("Puc exportar a CSV?", "No puc exportar a CSV?"),
        ("Quant costa el pla Starter?", "Quant costa el pla Business?"),
        ("Què passa després de 5 intents fallits?", "Què passa després de 3 intents fallits?"),
        ("Com elimino un projecte?", "Com elimino una tasca?"),
        ("Com exporto un projecte?", "Com exporto un projecte a Excel?"),
        ("Com exporto un informe a PDF?", "¿Cómo exporto un informe a PDF?"),
    ],
)
def test_the_gate_blocks_look_alikes(a: str, b: str) -> None:
    assert not lexical_gate(a, b).passed
    assert not lexical_gate(b, a).passed


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Puc exportar un informe a PDF?", "A PDF, puc exportar un informe?"),
        ("Com restableixo la contrasenya?", "com restableixo la contrasnya"),
        (
            "Em podria indicar com canvio el mètode de pagament, si us plau?",
            "com canvio el mètode de pagament?",
        ),
        ("Quant costa el pla Enterprise?", "quin preu té el pla enterprise"),
        ("Com duplico una tasca?", "Com puc duplicar una tasca?"),  # the first reads 83 % Spanish
    ],
)
def test_the_gate_lets_rewordings_through(a: str, b: str) -> None:
    assert lexical_gate(a, b).passed, lexical_gate(a, b).reason


# -- lookups through DocuBot.ask --------------------------------------------------------------------


def test_exact_then_semantic_hits_and_a_look_alike_misses(bot: DocuBot) -> None:
    first = bot.ask(PDF)
    assert first.cache is None and first.outcome == "answered"
    again = bot.ask("com exporto un informe a pdf")
    assert again.cache == "exact"
    assert again.answer == first.answer and again.sources == first.sources
    reworded = bot.ask("Com puc exportar un informe a PDF, si us plau?")
    assert reworded.cache == "semantic"
    assert reworded.answer == first.answer
    assert bot.ask("Com exporto un informe a CSV?").cache is None
    logged = [c.cache for c in reversed(bot.call_log.last(4))]
    assert logged == [None, "exact", "semantic", None]


def test_a_hit_streams_its_text_and_skips_retrieval(bot: DocuBot) -> None:
    bot.ask(PDF)
    pieces: list[str] = []
    hit = bot.ask(PDF, on_text=pieces.append)
    assert "".join(pieces) == hit.answer.resposta
    assert "retrieval" not in hit.timings_ms
    assert bot.call_log.last(1)[0].retrieved == []


def test_other_filters_or_versions_do_not_share_entries(bot: DocuBot) -> None:
    bot.ask("Com s'autentiquen les peticions a l'API?")
    assert bot.ask("Com s'autentiquen les peticions a l'API?", version="2026.1").cache is None
    assert bot.ask("Com s'autentiquen les peticions a l'API?", version="2026.1").cache == "exact"


def test_expired_entries_are_not_served(cached_settings: Settings, embedder) -> None:
    bot = DocuBot(cached_settings.with_overrides(cache_ttl_s=0.001), embedder=embedder, chat_model=None)
    bot.ask(PDF)
    assert bot.ask(PDF).cache is None


def test_turning_the_cache_off_neither_reads_nor_writes(cached_settings: Settings, embedder) -> None:
    off = DocuBot(cached_settings.with_overrides(cache_enabled=False), embedder=embedder, chat_model=None)
    off.ask(PDF)
    on = DocuBot(cached_settings, embedder=embedder, chat_model=None)
    assert on.ask(PDF).cache is None


# -- never cached ---------------------------------------------------------------------------------------


def test_model_answers_are_cached_and_served_without_calling_it(cached_settings, embedder) -> None:
    text = "Els informes es poden exportar a CSV i Excel des d'Informes > Exportar; PDF no."
    model = ScriptedModel([contract(text)])
    bot = DocuBot(cached_settings, embedder=embedder, chat_model=model)
    first = bot.ask(PDF)
    assert first.outcome == "answered" and first.grounded
    second = bot.ask(PDF)
    assert model.calls == 1
    assert second.cache == "exact" and second.answer == first.answer and second.provider == model.name


@pytest.mark.parametrize(
    ("steps", "why"),
    [
        ([ProviderError("down", transient=False)], "fallback"),
        ([contract("Els informes s'exporten des d'Informes > Exportar.", "baixa")], "low confidence"),
        ([contract("Cal trucar al servei tècnic de Girona i pagar 20 euros per fax.")], "ungrounded"),
        ([contract("No trobo aquesta informació a la documentació disponible.")], "refusal"),
    ],
)
def test_bad_answers_are_never_cached(cached_settings, embedder, steps, why) -> None:
    model = ScriptedModel(steps * 2)
    bot = DocuBot(cached_settings, embedder=embedder, chat_model=model)
    first = bot.ask(PDF)
    assert first.outcome != "answered" or first.answer.confianca == "baixa" or first.grounded is False, why
    assert bot.ask(PDF).cache is None, why
    assert cached_questions(bot) == {}


def test_refusals_below_the_threshold_are_not_cached(bot: DocuBot) -> None:
    assert bot.ask("Qui va guanyar la lliga de futbol l'any passat?").outcome == "refused"
    assert cached_questions(bot) == {}


# -- conversations and scopes -------------------------------------------------------------------------


def test_a_follow_up_is_cached_under_its_standalone_rewrite(bot: DocuBot) -> None:
    chat = Conversation(bot, user="u1")
    chat.send("Com exporto un projecte a CSV?")
    chat.send("I això està disponible al pla Starter?")
    rewrite = chat.ledger[-1].rewrite
    assert rewrite and rewrite != "I això està disponible al pla Starter?"
    stored = cached_questions(bot)
    assert stored["Com exporto un projecte a CSV?"] == "global"
    assert stored[rewrite] == "user:u1"
    assert "I això està disponible al pla Starter?" not in stored


def test_answers_shaped_by_a_conversation_stay_in_their_users_scope(bot: DocuBot) -> None:
    u1 = Conversation(bot, user="u1")
    u1.send("Faig servir el pla Business. Com convido un membre?")  # profile → user scope
    question = "Com convido un membre a l'espai de treball?"
    u1.send(question)
    assert cached_questions(bot)[question] == "user:u1"
    assert bot.ask(question, context=TurnContext(user="u2")).cache is None  # not u1's entry
    assert bot.ask(question, context=TurnContext(user="u1")).cache == "exact"


# -- invalidation ---------------------------------------------------------------------------------------


def test_an_edited_page_is_answered_afresh_after_reingest(settings, docs, write_page, md, embedder) -> None:
    settings = settings.with_overrides(llm="none")
    page = md("Informes", [("Exportar a PDF", "L'exportació d'informes a PDF no està disponible encara.")])
    write_page("informes.md", page, url="wiki/informes", version="1", date="2026-01-01")
    bot = DocuBot(settings, embedder=embedder, chat_model=None)
    store = bot.store
    ingest(docs, settings, store, embedder)
    question = "Puc exportar els informes a PDF?"
    before = bot.ask(question)
    assert "no està disponible" in before.answer.resposta
    assert bot.ask(question).cache == "exact"

    edited = md(
        "Informes", [("Exportar a PDF", "Els informes ja es poden exportar a PDF des del menú Informes.")]
    )
    write_page("informes.md", edited, url="wiki/informes", version="1", date="2026-02-01")
    ingest(docs, settings, store, embedder, corpus_listeners=bot.components.corpus_listeners)
    after = bot.ask(question)
    assert after.cache is None
    assert "ja es poden exportar a PDF" in after.answer.resposta
    assert len(cached_questions(bot)) == 1  # the stale entry was evicted


def test_entries_of_another_corpus_version_are_never_served(bot: DocuBot, embedder) -> None:
    bot.ask(PDF)
    bot.store.bump_corpus_version()  # e.g. another process ingested; no eviction ran here
    assert bot.ask(PDF).cache is None


# -- command line -----------------------------------------------------------------------------------


def test_cli_reports_the_cache_in_json_and_stats_then_clears(cached_settings: Settings, monkeypatch) -> None:
    monkeypatch.setenv("DOCUBOT_HOME", str(cached_settings.home))
    monkeypatch.setenv("DOCUBOT_LLM", "none")
    runner = CliRunner()
    with Database(cached_settings) as db:
        calls_before = CallLog(db).cache_counts()["calls"]  # the copied store has some
    answers = [json.loads(runner.invoke(app, ["ask", "--json", PDF]).stdout) for _ in range(2)]
    assert [a["cache"] for a in answers] == [None, "exact"]
    nocache = json.loads(runner.invoke(app, ["ask", "--json", "--no-cache", PDF]).stdout)
    assert nocache["cache"] is None
    stats = json.loads(runner.invoke(app, ["cache", "stats", "--json"]).stdout)
    assert stats["entries"] == 1 and stats["exact_hits"] == 1 and stats["calls"] == calls_before + 3
    assert stats["exact_hit_rate"] == pytest.approx(1 / stats["calls"], abs=1e-3)
    cleared = runner.invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "removed 1" in cleared.stdout
    assert json.loads(runner.invoke(app, ["ask", "--json", PDF]).stdout)["cache"] is None


def test_a_shared_cache_serves_another_process(cached_settings: Settings, embedder) -> None:
    """Two DocuBot instances on one data folder (two server processes) share the entries."""
    DocuBot(cached_settings, embedder=embedder, chat_model=None).ask(PDF)
    other = DocuBot(cached_settings, embedder=embedder, chat_model=None)
    assert other.ask(PDF).cache == "exact"
    assert isinstance(other.cache, AnswerCache)


# -- with the real local model ------------------------------------------------------------------------


class _CountingModel:
    """The real local model, counting its calls (no behaviour changed)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.context_window = inner.context_window
        self.calls = 0

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def stream(self, request):
        self.calls += 1
        yield from self.inner.stream(request)


@pytest.mark.llm
def test_a_real_model_answer_is_served_again_from_both_caches(cached_settings, embedder, local_model) -> None:
    model = _CountingModel(local_model)
    settings = cached_settings.with_overrides(llm="local", answer_from="model")  # the model's own answer
    bot = DocuBot(settings, embedder=embedder, chat_model=model)
    first = bot.ask(PDF)
    assert first.outcome == "answered" and first.answer.confianca != "baixa", first.error
    assert bot.ask(PDF).cache == "exact"
    reworded = bot.ask("com puc exportar un informe a pdf?")
    assert reworded.cache == "semantic"
    assert reworded.answer == first.answer and reworded.sources == first.sources
    assert model.calls == 1


def test_the_cache_works_and_is_shared_on_postgresql(
    cached_settings: Settings, embedder, postgres_url
) -> None:
    settings = with_sample_corpus(cached_settings, postgres_url)
    first = DocuBot(settings, embedder=embedder, chat_model=None)
    assert first.cache is not None
    first.cache.clear()
    first.ask(PDF)
    other = DocuBot(settings, embedder=embedder, chat_model=None)  # another process of the deployment
    assert other.ask(PDF).cache == "exact"
    assert other.ask("Com puc exportar un informe a PDF, si us plau?").cache == "semantic"
    assert other.ask("Com exporto un informe a CSV?").cache is None
    assert first.cache.stats(first.store.corpus_version()).exact_hits == 1
