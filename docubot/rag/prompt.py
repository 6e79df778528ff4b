"""DocuBot's prompt: the rules (system), the numbered `<documentacio>` block, the output schema."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from docubot.store import Hit
from docubot.text import DEFAULT_LANGUAGE, corpus_languages, detect_language, question_parts

PROMPT_VERSION = "2026-12-04.1"
"""How answers are made (the prompt, the extract): logged with each call and part of the answer
caches' key, so answers made the old way are not served after a change."""
MAX_QUOTES = 3
REFUSAL_TEXT = "No trobo aquesta informació a la documentació disponible."
CONFIDENCE_LEVELS = ("alta", "mitjana", "baixa")


def system_prompt() -> str:
    """The rules. Constant, so the model's prefix cache can reuse it. The example is built from
    placeholders (no product fact), so it cannot teach a feature the docs do not have."""
    return (
        "Ets DocuBot, l'assistent de suport que respon preguntes sobre la documentació de l'empresa.\n"
        "Regles:\n"
        "1. Fes servir NOMÉS el bloc <documentacio>. No inventis menús, rutes, rols, preus, límits "
        "ni endpoints.\n"
        '2. Primer copia a "evidencia", lletra per lletra, les frases dels fragments que responen la '
        'pregunta, amb el número del fragment. Després escriu "resposta" només amb el que diuen: '
        'mateixos números, noms, rutes de menú i negacions ("no", "només").\n'
        "3. Si la documentació diu que no és possible o no està disponible, digues-ho primer i dona "
        "l'alternativa que indiqui.\n"
        "4. Només si cap fragment no parla del que es pregunta, respon exactament "
        f'"{REFUSAL_TEXT}", amb "evidencia": [] i "confianca": "baixa".\n'
        "5. Respon en l'idioma de la pregunta, en una a tres frases.\n"
        '6. "confianca": "alta" si una frase ho diu explícitament, "mitjana" si ho dedueixes, '
        '"baixa" si no n\'estàs segur.\n'
        "Exemple de format amb noms inventats, no de la documentació: Fragment 1: «La funció X no està "
        "disponible. Fes servir Y des de *Menú A > Opció B*.» Pregunta: «Com faig servir X?» "
        'Resposta: {"evidencia": [{"fragment": 1, "cita": "La funció X no està disponible."}, '
        '{"fragment": 1, "cita": "Fes servir Y des de *Menú A > Opció B*."}], "resposta": "La funció X '
        'no està disponible. Fes servir Y des de *Menú A > Opció B*.", "confianca": "alta"}'
    )


@dataclass(frozen=True)
class Fragment:
    """One section as shown to the model: its retrieved chunks stitched in document order."""

    url: str
    section: str
    text: str
    hits: tuple[Hit, ...]


def fragments_from(hits: Sequence[Hit]) -> list[Fragment]:
    """Group hits by page section (first-ranked section first), chunks in order, overlaps removed."""
    groups: dict[tuple[str, str, str], list[Hit]] = {}
    for hit in hits:
        key = (hit.metadata["url"], hit.metadata["version"], hit.metadata["section_path"])
        groups.setdefault(key, []).append(hit)
    fragments = []
    for (url, _, section), members in groups.items():
        ordered = sorted(members, key=lambda h: h.metadata["chunk_index"])
        text = ""
        for hit in ordered:
            text = _join_without_overlap(text, _body(hit.text)) if text else _body(hit.text)
        fragments.append(Fragment(url, section, text, tuple(members)))
    return fragments


def documentation_block(fragments: Sequence[Fragment]) -> str:
    """The fragments, numbered from 1, with their url and [Page > Section]."""
    parts = [
        f"[Fragment {number} | font: {f.url} | secció: {f.section}]\n{f.text}"
        for number, f in enumerate(fragments, 1)
    ]
    return "<documentacio>\n" + "\n---\n".join(parts) + "\n</documentacio>"


def _body(chunk_text: str) -> str:
    """A chunk's text without its `[Page > Section]` breadcrumb line."""
    if chunk_text.startswith("[") and "\n" in chunk_text:
        return chunk_text.split("\n", 1)[1].strip()
    return chunk_text.strip()


def _join_without_overlap(first: str, second: str) -> str:
    """`first` + `second`, dropping the start of `second` that repeats the end of `first`."""
    for size in range(min(len(first), len(second)), 15, -1):
        if first.endswith(second[:size]):
            return f"{first}{second[size:]}"
    return f"{first}\n\n{second}"


ANSWER_LANGUAGE = {
    # Said in the answer's own language: the small model follows that far better than a Catalan
    # instruction naming another language.
    "ca": "Respon en català.",
    "es": "Responde en castellano: traduce la información de los fragmentos al castellano.",
    "en": "Answer in English: translate the information in the fragments into English.",
}


PARTS_NOTE = {
    "ca": "La pregunta té {n} parts: respon-les totes.",
    "es": "La pregunta tiene {n} partes: respóndelas todas.",
    "en": "The question has {n} parts: answer all of them.",
}
"""Said when one message asks several questions: the small model answered one of two."""


def answer_language(question: str, fragments: Sequence[Fragment]) -> str:
    """The language the answer is asked in: the question's, or the documentation's when the
    question does not tell ("2FA?")."""
    _, documentation_language = corpus_languages([f.text for f in fragments], fallback=DEFAULT_LANGUAGE)
    return detect_language(question, fallback=documentation_language)


def user_message(question: str, fragments: Sequence[Fragment], standalone: str | None = None) -> str:
    """Documentation, then the user's own words (asked in `answer_language`); a follow-up also
    gets its standalone reading."""
    language = answer_language(question, fragments)
    instruction = ANSWER_LANGUAGE[language]
    parts = len(question_parts(question))
    if parts > 1:
        instruction = f"{instruction} {PARTS_NOTE[language].format(n=parts)}"
    reading = (
        f"\n(Segons la conversa, vol dir: {standalone})" if standalone and standalone != question else ""
    )
    return f"{documentation_block(fragments)}\n\nPregunta: {question}{reading}\n({instruction})"


def answer_schema(fragments: int) -> dict[str, Any]:
    """JSON schema of what the model writes: verbatim quotes with their fragment numbers first,
    then the answer built from them. Sources and category come from metadata, not from the model."""
    return {
        "type": "object",
        "properties": {
            "evidencia": {
                "type": "array",
                "maxItems": MAX_QUOTES,
                "items": {
                    "type": "object",
                    "properties": {
                        "fragment": {"type": "integer", "minimum": 1, "maximum": max(fragments, 1)},
                        "cita": {"type": "string"},
                    },
                    "required": ["fragment", "cita"],
                },
            },
            "resposta": {"type": "string"},
            "confianca": {"type": "string", "enum": list(CONFIDENCE_LEVELS)},
        },
        "required": ["evidencia", "resposta", "confianca"],
    }
