"""Folding old turns into a running summary: by the chat model with a strict prompt, or by rule.

A summary is never worth failing a turn over: when the model keeps failing (after a retry of a
transient error) or returns nothing, the turns are folded by rule instead.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from docubot.chat.policies import Summarizer
from docubot.llm import ChatModel, ChatRequest, Message, ProviderError, complete

log = logging.getLogger(__name__)

SUMMARY_SYSTEM = (
    "Resumeix la conversa de suport en tercera persona, en com a màxim cinc frases. No copiïs la "
    "conversa. Conserva totes les dades concretes de l'usuari (nom, empresa, pla, projectes, "
    "configuració, noms entre cometes), quin problema tenia i què s'ha resolt i què no. Si hi ha un "
    "resum anterior, integra'l."
)


def model_summarizer(
    model: ChatModel, max_tokens: int = 200, attempts: int = 2, backoff_s: float = 0.5
) -> Summarizer:
    """A summarizer that asks the chat model (one call per fold). Transient provider errors are
    retried up to `attempts` calls in all; any failure left then falls back to `rule_summarizer`."""

    def summarize(previous: str, messages: Sequence[Message]) -> str:
        conversation = "\n".join(
            f"{'Usuari' if m.role == 'user' else 'Assistent'}: {m.content}" for m in messages
        )
        prompt = (
            f"Resum anterior: {previous}\n\n" if previous else ""
        ) + f"<conversa>\n{conversation}\n</conversa>"
        request = ChatRequest(SUMMARY_SYSTEM, (Message("user", prompt),), None, max_tokens, 0.1)
        for attempt in range(1, attempts + 1):
            try:
                summary = complete(model, request).text.strip()
            except ProviderError as exc:
                if exc.transient and attempt < attempts:
                    time.sleep(backoff_s * attempt)
                    continue
                log.warning("summary by %s failed (%s); summarizing by rule", model.name, exc)
                break
            if summary:
                return summary
            log.warning("summary by %s was empty; summarizing by rule", model.name)
            break
        return rule_summarizer(previous, messages)

    return summarize


def rule_summarizer(previous: str, messages: Sequence[Message]) -> str:
    """Without a model: the user's earlier questions, one line each."""
    asked = [m.content.strip()[:160] for m in messages if m.role == "user"]
    lines = [previous] if previous else []
    lines += [f"L'usuari va preguntar: {q}" for q in asked]
    return "\n".join(lines[-12:])
