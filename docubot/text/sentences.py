"""Splitting prose into sentences, for extractive answers and the groundedness check."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Ý¿¡\"«*(])")


def sentences(text: str) -> list[str]:
    """Prose split into sentences; markdown lines (lists, table rows) count as sentences too."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if line:
            out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out
