"""The conversation layer on the real store and embedder, with a fake model for control flow."""

from __future__ import annotations

import pytest

from docubot.chat.conversation import Conversation, PolicyError, make_policy
from docubot.chat.policies import (
    ANSWER_OMITTED,
    ConversationState,
    LastTurnsPolicy,
    MessageScores,
    SummaryPolicy,
    TokenBudgetPolicy,
)
from docubot.chat.rewrite import needs_rewrite
from docubot.llm import Message, ProviderError
from docubot.rag.answer import DocuBot
from tests.fakes import ConversationModel

INVITE = "Com convido un membre a l'espai de treball?"
REMOVE = "i com l'elimino?"
REMOVE_STANDALONE = "Com elimino un membre de l'espai de treball?"


@pytest.fixture
def chat(sample_settings, embedder):
    def make(policy: str = "sliding_window:4", model: ConversationModel | None = None, **overrides):
        model = model or ConversationModel({REMOVE: REMOVE_STANDALONE})
        bot = DocuBot(sample_settings.with_overrides(**overrides), embedder=embedder, chat_model=model)
        return Conversation(bot, policy), model

    return make


def alternates(messages: list[Message]) -> bool:
    return all(m.role == ("user" if i % 2 == 0 else "assistant") for i, m in enumerate(messages))


def test_a_failed_call_leaves_the_history_balanced(chat) -> None:
    conversation, model = chat("last_turns:4")
    conversation.send(INVITE)
    model.fail_next = RuntimeError("the provider crashed mid-stream")
    with pytest.raises(RuntimeError):
        conversation.send("Quins rols hi ha?")
    assert len(conversation.messages) == 2 and alternates(conversation.messages)
    model.fail_next = ProviderError("down", transient=False)
    result = conversation.send("Quins rols es poden donar als membres de l'espai de treball?")
    assert result.outcome == "fallback"
    assert len(conversation.messages) == 4 and alternates(conversation.messages)


def test_system_prompt_travels_apart_and_documentation_stays_in_its_turn(chat) -> None:
    conversation, _ = chat("full")
    conversation.send(INVITE)
    conversation.send("Quins rols es poden donar als membres?")
    assert all(m.role in ("user", "assistant") for m in conversation.messages)
    sent = conversation.last_sent_messages
    assert sent[0]["role"] == "system" and sent[0]["content"].startswith("Ets DocuBot")
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "user"]
    assert sent[1]["content"] == INVITE
    assert "<documentacio>" not in sent[1]["content"] + sent[2]["content"]
    assert "<documentacio>" in sent[3]["content"]


def test_follow_up_is_rewritten_for_retrieval_and_logged(chat) -> None:
    conversation, model = chat("last_turns:4")
    conversation.send(INVITE)
    assert model.rewrite_calls == 0
    result = conversation.send(REMOVE)
    assert model.rewrite_calls == 1
    assert conversation.ledger[-1].rewrite == REMOVE_STANDALONE
    assert result.request is not None
    sent = result.request.messages[-1].content
    assert f"Pregunta: {REMOVE}\n(Segons la conversa, vol dir: {REMOVE_STANDALONE})" in sent
    call = next(c for c in conversation.bot.call_log.last(20) if c.id == result.call_id)
    assert call.retrieval_question == REMOVE_STANDALONE
    assert any("eliminar-un-membre" in r["id"] for r in call.retrieved)
    conversation.send("Com restableixo la contrasenya del meu compte?")
    assert model.rewrite_calls == 1


def test_rewrite_is_skipped_without_history_or_for_standalone_questions() -> None:
    history = [Message("user", INVITE), Message("assistant", "Des de Configuració > Membres.")]
    assert not needs_rewrite(REMOVE, [])
    assert needs_rewrite(REMOVE, history)
    assert needs_rewrite("I això està disponible al pla Starter?", history)
    assert not needs_rewrite("Com restableixo la contrasenya del meu compte?", history)


def test_last_turns_cuts_on_pair_boundaries() -> None:
    messages = [Message("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(10)]
    selection = LastTurnsPolicy(2).select(ConversationState(messages), "q")
    assert [m.content for m in selection.messages] == ["m6", "m7", "m8", "m9"]
    assert selection.omitted


def test_sliding_window_folds_once_per_overflow_and_injects_the_summary_as_context(chat) -> None:
    conversation, model = chat("sliding_window:2")
    questions = [
        "Com exporto un projecte a CSV?",
        "Quant costa el pla Business?",
        INVITE,
        "Com activo la verificació en dos passos?",
        "Com connecto Slack a Nubelia?",
    ]
    for question in questions:
        conversation.send(question)
    assert model.summaries == 2  # turns 4 and 5 each pushed one past turn out of the window
    sent = conversation.last_sent_messages
    assert "Resum 2:" in sent[0]["content"]
    assert [m["content"] for m in sent[1::2]][:2] == [INVITE, "Com activo la verificació en dos passos?"]
    assert all("Resum" not in m["content"] for m in sent[1:])


def test_relevant_policy_brings_back_the_related_earlier_turn_in_order(chat) -> None:
    conversation, _ = chat("relevant")
    for question in [
        "Com exporto un projecte a CSV?",
        "Com connecto Slack a Nubelia?",
        INVITE,
        "Com activo la verificació en dos passos?",
        "Quant dura un token de l'API?",
    ]:
        conversation.send(question)
    conversation.send("I l'exportació a CSV dels projectes va per correu?")
    users = [m["content"] for m in conversation.last_sent_messages[1:-1] if m["role"] == "user"]
    assert "Com exporto un projecte a CSV?" in users
    assert users[-2:] == ["Com activo la verificació en dos passos?", "Quant dura un token de l'API?"]


def test_token_budget_never_exceeds_its_budget(embedder) -> None:
    messages = [Message("user" if i % 2 == 0 else "assistant", f"missatge {i} " * (5 + i)) for i in range(20)]

    def scorer(question, state, units):
        return MessageScores([float(i) for i in range(len(units))], [1.0] * len(units))

    for budget in (10, 60, 200, 10_000):
        policy = TokenBudgetPolicy(scorer, embedder.count_tokens, budget=budget, keep=2)
        selection = policy.select(ConversationState(messages), "q")
        used = sum(embedder.count_tokens(m.content) for m in selection.messages)
        assert used <= budget
        assert alternates(selection.messages)
        assert selection.omitted == (len(selection.messages) < len(messages))
        assert all(m.content in {x.content for x in messages} | {ANSWER_OMITTED} for m in selection.messages)


def test_the_window_guard_trims_history_before_anything_is_sent(chat) -> None:
    model = ConversationModel(context_window=950)
    conversation, _ = chat("full", model, max_answer_tokens=200)
    for question in [
        "Com exporto un projecte a CSV?",
        "Com connecto Slack a Nubelia?",
        INVITE,
        "Com activo la verificació en dos passos?",
    ]:
        conversation.send(question)
    for request in model.requests:
        total = model.count_tokens(request.system) + sum(
            model.count_tokens(m.content) + 4 for m in request.messages
        )
        assert total <= 950 - 200
    assert len(model.requests[-1].messages) < 7


def test_the_profile_keeps_the_plan_whatever_the_policy_drops(chat) -> None:
    conversation, _ = chat("last_turns:1")
    conversation.send("Faig servir el pla Business. Puc exportar un projecte a CSV?")
    conversation.send("Com connecto Slack a Nubelia?")
    conversation.send("Com activo la verificació en dos passos?")
    assert "pla: Business" in conversation.last_sent_messages[0]["content"]
    assert all("Business" not in m["content"] for m in conversation.last_sent_messages[1:])


def test_ledger_counts_every_call_of_a_turn(chat) -> None:
    conversation, _ = chat("last_turns:4")
    conversation.send(INVITE)
    conversation.send(REMOVE)
    first, second = conversation.ledger
    assert (first.calls, second.calls) == (1, 2)  # the follow-up adds its rewrite call
    assert second.input_tokens > first.input_tokens > 0
    assert conversation.totals()["calls"] == 3


def test_unknown_policies_are_refused(chat) -> None:
    conversation, _ = chat()
    for name in ("forever", "last_turns:x", "last_turns:0"):
        with pytest.raises(PolicyError):
            make_policy(name, conversation.bot, None)


def test_works_without_an_llm(sample_settings, embedder) -> None:
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    conversation = Conversation(bot, "sliding_window:1")
    conversation.send(INVITE)
    result = conversation.send(REMOVE)
    assert conversation.ledger[-1].rewrite == f"{INVITE} {REMOVE}"
    assert "wiki/administracio/membres-i-permisos" in result.answer.fonts
    conversation.send("Com connecto Slack a Nubelia?")
    assert conversation.state.summary.startswith("L'usuari va preguntar")


def test_summary_policy_folds_in_batches_and_keeps_recent_turns_verbatim() -> None:
    calls: list[int] = []

    def summarize(previous: str, messages) -> str:
        calls.append(len(messages) // 2)
        return f"{previous}+{len(messages) // 2}"

    policy = SummaryPolicy(summarize, threshold=4, keep=2)
    state = ConversationState([])
    for turn in range(12):
        selection = policy.select(state, "q")
        assert alternates(selection.messages) and len(selection.messages) // 2 <= 4
        state.messages += [Message("user", f"u{turn}"), Message("assistant", f"a{turn}")]
    assert calls == [3, 3, 3]  # every time 5 turns are unsummarized, all but the last 2 are folded
    assert state.summary == "+3+3+3"
