"""Splitting prose into sentences, for extractive answers and the groundedness check."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Ý¿¡\"«*(])")
_AFTER_QUESTION_MARK = re.compile(r"(?<=[?？])\s+")
_WORD = re.compile(r"\w{2,}")
_AND_QUESTION_WORD = re.compile(
    r"(?<=\s)(?:i\s+(?=(?:quant(?:a|s|es)?|quan|quin(?:a|s|es)?|com|on|qui|què|per què)\b)"
    r"|y\s+(?=(?:cuánt(?:o|a|os|as)|cuándo|cuál(?:es)?|cómo|dónde|quién(?:es)?|qué|por qué)\b)"
    r"|and\s+(?=(?:how|which|what|when|where|who|why)\b))",
    re.IGNORECASE,
)
MIN_JOINED_WORDS = 4
"""Words a question must have before "i quan…" for the rest to be a question of its own: "Puc saber
qui i quan…" is one question."""


def sentences(text: str) -> list[str]:
    """Prose split into sentences; markdown lines (lists, table rows) count as sentences too."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if line:
            out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


def question_parts(question: str) -> list[str]:
    """The questions asked in one message: split after each question mark ("quant temps tinc per
    acceptar una invitació? i l'enllaç … quant dura?" → two) and before "i"/"y"/"and" followed by
    a question word when at least `MIN_JOINED_WORDS` words come before it ("… la prueba gratis y
    cuánto cuesta…?"); each part of two words or more, else the question alone."""
    parts = [
        piece.strip()
        for part in _AFTER_QUESTION_MARK.split(question)
        for piece in _joined_questions(part)
        if piece.strip()
    ]
    if len(parts) > 1 and all(len(_WORD.findall(part)) >= 2 for part in parts):
        return parts
    return [question]


def _joined_questions(question: str) -> list[str]:
    """`question` split before each "and" + question word that follows enough words of its own."""
    pieces: list[str] = []
    start = 0
    for match in _AND_QUESTION_WORD.finditer(question):
        if len(_WORD.findall(question[start : match.start()])) >= MIN_JOINED_WORDS:
            pieces.append(question[start : match.start()])
            start = match.start()
    return [*pieces, question[start:]]
