"""Folding old turns into a running summary: by the chat model with a strict prompt, or by rule."""

from __future__ import annotations

from collections.abc import Sequence

from docubot.chat.policies import Summarizer
from docubot.llm import ChatModel, ChatRequest, Message, complete

SUMMARY_SYSTEM = (
    "Resumeix la conversa de suport en tercera persona, en com a màxim cinc frases. No copiïs la "
    "conversa. Conserva totes les dades concretes de l'usuari (nom, empresa, pla, projectes, "
    "configuració, noms entre cometes), quin problema tenia i què s'ha resolt i què no. Si hi ha un "
    "resum anterior, integra'l."
)


def model_summarizer(model: ChatModel, max_tokens: int = 200) -> Summarizer:
    """A summarizer that asks the chat model (one call per fold)."""

    def summarize(previous: str, messages: Sequence[Message]) -> str:
        conversation = "\n".join(
            f"{'Usuari' if m.role == 'user' else 'Assistent'}: {m.content}" for m in messages
        )
        prompt = (
            f"Resum anterior: {previous}\n\n" if previous else ""
        ) + f"<conversa>\n{conversation}\n</conversa>"
        request = ChatRequest(SUMMARY_SYSTEM, (Message("user", prompt),), None, max_tokens, 0.1)
        return complete(model, request).text.strip()

    return summarize


def rule_summarizer(previous: str, messages: Sequence[Message]) -> str:
    """Without a model: the user's earlier questions, one line each."""
    asked = [m.content.strip()[:160] for m in messages if m.role == "user"]
    lines = [previous] if previous else []
    lines += [f"L'usuari va preguntar: {q}" for q in asked]
    return "\n".join(lines[-12:])
