"""Accent folding: how every text tool compares words (users often type without accents)."""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """Lowercase without accents: 'Configuració' → 'configuracio'."""
    return unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()
