"""Splitting prose into sentences, for extractive answers and the groundedness check."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Ý¿¡\"«*(])")
_AFTER_QUESTION_MARK = re.compile(r"(?<=[?？])\s+")
_WORD = re.compile(r"\w{2,}")


def sentences(text: str) -> list[str]:
    """Prose split into sentences; markdown lines (lists, table rows) count as sentences too."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if line:
            out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


def question_parts(question: str) -> list[str]:
    """The questions asked in one message, split after each question mark ("quant temps tinc per
    acceptar una invitació? i l'enllaç … quant dura?" → two), each of two words or more; the
    question alone otherwise."""
    parts = [part.strip() for part in _AFTER_QUESTION_MARK.split(question) if part.strip()]
    if len(parts) > 1 and all(len(_WORD.findall(part)) >= 2 for part in parts):
        return parts
    return [question]
