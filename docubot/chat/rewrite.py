"""Follow-up questions rewritten into standalone ones, for retrieval only.

"i com l'elimino?" after "com convido un membre?" retrieves nothing useful on its own. When the
question leans on the history, the model rewrites it with the recent turns; the answer prompt still
gets the user's own words. No history, or a question that already stands alone: no extra call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from docubot.llm import ChatModel, ChatRequest, Message, complete
from docubot.text import fold

_FOLLOW_UP_START = re.compile(
    r"^\s*(i|y|e|and|or|o|però|pero|but|i si|y si|what about|and if|també|tambien)\b", re.I
)
_REFERRING = re.compile(
    r"\b(aixo|aquest|aquesta|aquests|aquestes|aquell|aquella|el mateix|la mateixa|ho|hi|eso|esto|este|esta|"
    r"ese|esa|lo mismo|it|this|that|these|those|them|one)\b|\b\w+-(lo|la|los|les|ho|hi|li)\b|"
    r"\bl'(elimino|esborro|canvio|activo|desactivo|configuro|exporto|faig)\b",
)
MIN_STANDALONE_WORDS = 5

REWRITE_SYSTEM = (
    "Reescrius preguntes: no les respons mai. Reescriu l'última pregunta de l'usuari perquè "
    "s'entengui sola, sense la conversa, substituint els pronoms i les el·lipsis (això, ho, l', hi) "
    "pel que volen dir segons la conversa. Mantén l'idioma de la pregunta. Respon només amb un objecte "
    'JSON: {"pregunta": "..."}.\n'
    "Exemple. Conversa: «Usuari: Com creo una etiqueta? Assistent: Des de Configuració > Etiquetes.» "
    'Última pregunta: «i com l\'esborro?» → {"pregunta": "Com esborro una etiqueta?"}\n'
    "Exemple. Conversa: «Usuari: Puc importar tasques des d'Excel? Assistent: Sí, des de Projecte > "
    'Importar.» Última pregunta: «I això va amb el pla gratuït?» → {"pregunta": "La importació de '
    "tasques des d'Excel està disponible al pla gratuït?\"}"
)
REWRITE_SCHEMA = {
    "type": "object",
    "properties": {"pregunta": {"type": "string"}},
    "required": ["pregunta"],
}


def needs_rewrite(question: str, history: Sequence[Message]) -> bool:
    """True when there is history and the question seems to lean on it."""
    if not history:
        return False
    folded = fold(question)
    short = len(re.findall(r"\w+", folded)) < MIN_STANDALONE_WORDS
    return bool(short or _FOLLOW_UP_START.search(folded) or _REFERRING.search(folded))


def rewrite_with_model(
    model: ChatModel, question: str, history: Sequence[Message], turns: int = 2, with_answers: bool = True
) -> str:
    """The standalone question by the chat model from the last `turns` turns (the question on failure).
    Without `with_answers`, from the user's own messages alone: after "Com exporto un projecte a
    CSV?" answered with the docs' passages (a procedure, the plans' sentence), the local model
    rewrote "I això està disponible al pla Starter?" as "Està disponible al pla Starter?"; from the
    question alone, as "La exportació de projectes a CSV està disponible al pla Starter?"."""
    recent = list(history)[-2 * turns :]
    if not with_answers:
        recent = [m for m in recent if m.role == "user"]
    conversation = "\n".join(
        f"{'Usuari' if m.role == 'user' else 'Assistent'}: {m.content[:500]}" for m in recent
    )
    request = ChatRequest(
        system=REWRITE_SYSTEM,
        messages=(
            Message(
                "user",
                f"<conversa>\n{conversation}\n</conversa>\nÚltima pregunta: {question}\n"
                "(Reescriu-la perquè s'entengui sola; no la responguis.)",
            ),
        ),
        json_schema=REWRITE_SCHEMA,
        max_tokens=80,
        temperature=0.0,
    )
    text = complete(model, request).text
    try:
        rewritten = str(json.loads(text[text.index("{") : text.rindex("}") + 1])["pregunta"]).strip()
    except (ValueError, KeyError, TypeError):
        return question
    return rewritten or question


def rewrite_without_model(question: str, history: Sequence[Message]) -> str:
    """No LLM (`none` provider): the previous user question joined to the follow-up."""
    previous = next((m.content for m in reversed(history) if m.role == "user"), "")
    return f"{previous} {question}".strip()
