"""Composition outside the orchestrator: `Components`, `DocuBot(components)`, conversations that
count their own usage, explicit erasers and corpus listeners, and the default folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from platformdirs import user_cache_dir, user_data_dir

from docubot.chat.conversation import Conversation
from docubot.components import Components
from docubot.config import Settings
from docubot.rag.answer import DocuBot, TurnContext
from tests.conftest import isolate_environment
from tests.fakes import ConversationModel

INVITE = "Com convido un membre a l'espai de treball?"
RESET = "Com restableixo la contrasenya del meu compte?"


def test_conversations_share_the_bot_without_changing_it(sample_settings, embedder) -> None:
    model = ConversationModel()
    bot = DocuBot(Components.from_settings(sample_settings, embedder=embedder, chat_model=model))
    first, second = Conversation(bot, "last_turns:2"), Conversation(bot, "last_turns:2")
    assert bot.chat_model is model  # no conversation swapped in its usage meter
    first.send(INVITE)
    second.send(INVITE)
    first.send(RESET)
    assert bot.chat_model is model
    assert first.totals()["turns"] == 2 and second.totals()["turns"] == 1
    assert first.ledger[0].input_tokens == second.ledger[0].input_tokens > 0  # same question, own meter
    assert first.totals()["input_tokens"] > second.totals()["input_tokens"]
    assert first.ledger[1].calls == second.ledger[0].calls == 1


def test_parts_are_built_once_on_first_use_or_handed_in(sample_settings, embedder) -> None:
    components = Components.from_settings(sample_settings.with_overrides(llm="local"), embedder=embedder)
    assert components.retriever is components.retriever
    assert components.retriever.embedder is embedder and components.retriever.store is components.store
    assert "chat_model" not in components.__dict__  # searching never loads the chat model
    bot = DocuBot(Components.from_settings(sample_settings, embedder=embedder, chat_model=None))
    assert bot.embedder is embedder and bot.provider == "none/extractive"
    with pytest.raises(TypeError, match=r"Components\.from_settings"):
        DocuBot(components, chat_model=None)
    components.close()


def test_the_user_erasers_forget_a_user_in_this_deployment(sample_settings, embedder, tmp_path) -> None:
    settings = sample_settings.with_overrides(home=shutil.copytree(sample_settings.home, tmp_path / "home"))
    components = Components.from_settings(settings, embedder=embedder, chat_model=None)
    bot = DocuBot(components)
    bot.ask(INVITE, context=TurnContext(user="eve"))
    bot.ask(INVITE, context=TurnContext(user="eve"))
    assert set(components.user_erasers) == {"call_log", "cached_answers"}
    assert components.user_erasers["call_log"]("eve") == 2
    assert components.call_log.for_user("eve") == []


def test_the_data_and_model_folders_are_the_users_wherever_docubot_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    homes = set()
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        settings = Settings()
        homes.add(settings.home)
        assert settings.home.is_absolute() and settings.db_path.is_absolute()
    assert homes == {Path(user_data_dir("docubot", appauthor=False))}
    assert Settings().models_dir == Path(user_cache_dir("docubot", appauthor=False)) / "models"
    monkeypatch.setenv("DOCUBOT_HOME", str(tmp_path / "mine"))
    assert Settings().home == tmp_path / "mine"
