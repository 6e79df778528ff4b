"""Translating a verified answer into the language the question was asked in.

The small local model often answers a Spanish or English question with its Catalan quotes, and a
note asking it to answer again in the question's language does not change that (measured: README,
"Whole answers with the local model"). Translating the answer alone is a short task it does: one
call with the same system prompt (so llama.cpp's prefix cache still holds it) and a user message
in the wanted language holding only the answer. The translation is then checked like any answer.
"""

from __future__ import annotations

import json
from typing import Any

from docubot.llm import ChatRequest, Message
from docubot.rag.contract import ContractError

TRANSLATE = {
    "ca": "Tradueix aquesta resposta al català. Conserva les xifres, els noms, les negacions i les "
    "rutes de menú i els noms de botons exactament com estan escrits.",
    "es": "Traduce esta respuesta al castellano. Conserva las cifras, los nombres, las negaciones y "
    "las rutas de menú y los nombres de botones exactamente como están escritos.",
    "en": "Translate this answer into English. Keep the numbers, names, negations, menu paths and "
    "button names exactly as they are written.",
}
ANSWER_LABEL = {"ca": "Resposta", "es": "Respuesta", "en": "Answer"}


def translation_request(
    system: str, answer: str, language: str, max_tokens: int, temperature: float
) -> ChatRequest:
    """The request translating `answer` into `language`; the reply is `{"resposta": "…"}`."""
    prompt = f"{TRANSLATE[language]}\n\n{ANSWER_LABEL[language]}: {answer}"
    return ChatRequest(
        system=system,
        messages=(Message("user", prompt),),
        json_schema=translation_schema(),
        max_tokens=max_tokens,
        temperature=temperature,
    )


def translation_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"resposta": {"type": "string"}},
        "required": ["resposta"],
    }


def parse_translation(text: str) -> str:
    """The translated answer from the reply; ContractError when there is none."""
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if start >= 0 else None
    except json.JSONDecodeError as exc:
        raise ContractError(f"invalid JSON in the translation: {exc.msg}") from exc
    translated = data.get("resposta") if isinstance(data, dict) else None
    if not isinstance(translated, str) or not translated.strip():
        raise ContractError("the translation has no `resposta`")
    return translated.strip()
