"""DocuBot's prompt: the rules (system), the numbered `<documentacio>` block, the output schema."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from docubot.rag.text import detect_language
from docubot.store import Hit

PROMPT_VERSION = "2026-11-30.1"
REFUSAL_TEXT = "No trobo aquesta informació a la documentació disponible."
CONFIDENCE_LEVELS = ("alta", "mitjana", "baixa")


def system_prompt(categories: Sequence[str]) -> str:
    """The rules. Constant for a given configuration, so the model's prefix cache can reuse it."""
    return (
        "Ets DocuBot, l'assistent de suport que respon preguntes sobre la documentació de l'empresa.\n"
        "Regles:\n"
        "1. Fes servir NOMÉS la informació del bloc <documentacio>. No inventis menús, rutes, botons, "
        "rols, preus, límits ni endpoints que no hi surtin.\n"
        "2. Respon directament el que es pregunta. Si la pregunta demana un format, una opció o una "
        "funció i la documentació diu que no és possible, no existeix o no està disponible, aquesta és "
        "la resposta: digues-ho primer i després dona l'alternativa que indiqui la documentació.\n"
        "3. Només si cap fragment no parla del que es pregunta, respon exactament "
        f'"{REFUSAL_TEXT}", amb "fonts": [] i "confianca": "baixa".\n'
        "4. Respon en l'idioma de la pregunta, en una a tres frases, copiant les rutes de menú "
        "tal com surten a la documentació.\n"
        '5. Primer tria a "fonts" els números dels fragments que parlen del que es pregunta; després '
        "escriu la resposta a partir d'aquests fragments.\n"
        '6. "confianca": "alta" si un fragment ho diu explícitament, "mitjana" si ho has de deduir, '
        '"baixa" si no n\'estàs segur.\n'
        '7. Respon només amb un objecte JSON: {"fonts": [números]; "resposta": el text; '
        f'"categoria": una de {", ".join(categories)}; "confianca": "alta", "mitjana" o "baixa"}}.\n'
        "Exemple. Fragment 1: «La importació des de Trello no està disponible. Pots importar tasques "
        "des d'un fitxer CSV a *Projecte > Importar*.» Pregunta: «Com importo un tauler de Trello?» "
        'Resposta: {"fonts": [1], "resposta": "La importació des de Trello no està disponible. '
        "Pots importar les tasques des d'un fitxer CSV a *Projecte > Importar*.\", "
        '"categoria": "tasques", "confianca": "alta"}'
    )


def documentation_block(hits: Sequence[Hit]) -> str:
    """The retrieved fragments, numbered from 1, with their url and [Page > Section]."""
    parts = []
    for number, hit in enumerate(hits, 1):
        body = hit.text.split("\n", 1)[1] if hit.text.startswith("[") and "\n" in hit.text else hit.text
        parts.append(
            f"[Fragment {number} | font: {hit.metadata['url']} | secció: {hit.metadata['section_path']}]\n"
            f"{body.strip()}"
        )
    return "<documentacio>\n" + "\n---\n".join(parts) + "\n</documentacio>"


LANGUAGE_NAMES = {"ca": "català", "es": "castellà", "en": "anglès"}


def user_message(question: str, hits: Sequence[Hit]) -> str:
    language = LANGUAGE_NAMES[detect_language(question)]
    return f"{documentation_block(hits)}\n\nPregunta: {question}\n(Respon en {language}.)"


def answer_schema(categories: Sequence[str], fragments: int) -> dict[str, Any]:
    """JSON schema of what the model writes: fragment numbers, not urls (those come from metadata)."""
    return {
        "type": "object",
        "properties": {
            "fonts": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": max(fragments, 1)},
            },
            "resposta": {"type": "string"},
            "categoria": {"type": "string", "enum": list(categories)},
            "confianca": {"type": "string", "enum": list(CONFIDENCE_LEVELS)},
        },
        "required": ["fonts", "resposta", "categoria", "confianca"],
    }
