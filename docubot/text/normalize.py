"""Accent folding: how every text tool compares words (users often type without accents)."""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """Lowercase without accents: 'Configuració' → 'configuracio'."""
    return unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()


def fold_in_place(text: str) -> str:
    """`fold` that keeps every character where it was: lowercase, accents dropped, "·" and other
    symbols kept, so a match in the result is at the same place in `text` (written composed, NFC)."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))
