"""Translating a verified answer into the language the question was asked in.

The small local model often answers a Spanish or English question with its Catalan quotes, and a
note asking it to answer again in the question's language does not change that (measured: README,
"Whole answers with the local model"). Translating the answer alone is a short task it does: one
call with the same system prompt (so llama.cpp's prefix cache still holds it) and a user message
holding only the answer and an English instruction. The translation is then checked like any answer.
"""

from __future__ import annotations

import json
from typing import Any

from docubot.llm import ChatRequest, Message
from docubot.rag.contract import ContractError, json_object

LANGUAGE_NAMES = {"ca": "Catalan", "es": "Spanish (castellano)", "en": "English"}


def translation_request(
    system: str, answer: str, source: str, target: str, max_tokens: int, temperature: float
) -> ChatRequest:
    """The request translating `answer` from `source` into `target`; the reply is `{"resposta": "…"}`.
    The instruction is in English whatever the languages: asked in Spanish to translate Catalan,
    the local model copied the Catalan back in 2 of 3 tries; asked in English, it translated 3 of 3."""
    prompt = (
        f"Translate this {LANGUAGE_NAMES[source]} text into {LANGUAGE_NAMES[target]}. Keep numbers, "
        "names, menu paths and button names exactly as written. Reply with the translated text only."
        f"\n\n{LANGUAGE_NAMES[source].split()[0]}: {answer}"
    )
    return ChatRequest(
        system=system,
        messages=(Message("user", prompt),),
        json_schema=translation_schema(),
        max_tokens=max_tokens,
        temperature=temperature,
    )


def translation_schema(field: str = "resposta") -> dict[str, Any]:
    """A reply holding one string, `field` (an answer's translation: `resposta`)."""
    return {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}


def parse_translation(text: str, field: str = "resposta") -> str:
    """The translated text, `field` of the reply; ContractError when there is none."""
    candidate = json_object(text)
    try:
        data = json.loads(candidate) if candidate is not None else None
    except json.JSONDecodeError as exc:
        raise ContractError(f"invalid JSON in the translation: {exc.msg}") from exc
    translated = data.get(field) if isinstance(data, dict) else None
    if not isinstance(translated, str) or not translated.strip():
        raise ContractError(f"the translation has no `{field}`")
    return translated.strip()
