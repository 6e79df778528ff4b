"""Small text tools shared by extractive answers and the groundedness check."""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset(
    [
        "aquest",
        "aquesta",
        "aquests",
        "aquestes",
        "aixo",
        "això",
        "amb",
        "com",
        "del",
        "dels",
        "des",
        "els",
        "fins",
        "les",
        "per",
        "pel",
        "pels",
        "que",
        "quan",
        "qui",
        "una",
        "uns",
        "unes",
        "seva",
        "seves",
        "seu",
        "seus",
        "teva",
        "teu",
        "meu",
        "meva",
        "molt",
        "més",
        "mes",
        "pot",
        "pots",
        "puc",
        "són",
        "son",
        "està",
        "esta",
        "estan",
        "hi",
        "ha",
        "han",
        "fer",
        "fes",
        "tot",
        "tots",
        "tota",
        "totes",
        "també",
        "tambe",
        "perquè",
        "perque",
        "sobre",
        "entre",
        "però",
        "pero",
        "cada",
        "sense",
        "quin",
        "quina",
        "quins",
        "quines",
        "the",
        "and",
        "for",
        "with",
        "this",
        "that",
        "from",
        "your",
        "you",
        "are",
        "how",
        "what",
        "can",
        "does",
        "para",
        "por",
        "con",
        "los",
        "las",
        "una",
        "uno",
        "este",
        "esta",
        "esto",
        "como",
        "cómo",
        "que",
        "qué",
        "del",
        "mas",
        "más",
        "pero",
        "sus",
    ]
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Ý¿¡\"«*(])")


def fold(text: str) -> str:
    """Lowercase without accents: 'Configuració' → 'configuracio'."""
    return unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()


def content_stems(text: str) -> set[str]:
    """Crude language-agnostic stems (5-letter prefixes) of the content words of `text`."""
    words = re.findall(r"[a-z0-9]+", fold(text))
    return {w[:5] for w in words if len(w) >= 4 and w not in STOPWORDS}


def sentences(text: str) -> list[str]:
    """Prose split into sentences; markdown lines (lists, table rows) count as sentences too."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if line:
            out.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return out


_LANGUAGE_MARKERS = {
    "ca": frozenset(
        [
            "el",
            "la",
            "els",
            "les",
            "amb",
            "per",
            "com",
            "què",
            "puc",
            "pots",
            "és",
            "està",
            "des",
            "aquest",
            "aquesta",
            "hi",
            "meu",
            "meva",
            "quan",
            "on",
            "i",
            "una",
            "quant",
            "quin",
            "quina",
            "tinc",
            "fer",
            "puc",
            "ho",
        ]
    ),
    "es": frozenset(
        [
            "el",
            "la",
            "los",
            "las",
            "con",
            "para",
            "cómo",
            "como",
            "qué",
            "puedo",
            "puedes",
            "es",
            "está",
            "desde",
            "este",
            "esta",
            "hay",
            "mi",
            "cuando",
            "donde",
            "y",
            "una",
            "cuánto",
            "cuanto",
            "cuál",
            "cuesta",
            "tengo",
            "hacer",
            "puede",
            "se",
        ]
    ),
    "en": frozenset(
        [
            "the",
            "an",
            "with",
            "for",
            "how",
            "what",
            "can",
            "you",
            "is",
            "are",
            "from",
            "this",
            "there",
            "my",
            "when",
            "where",
            "and",
            "to",
            "do",
            "does",
        ]
    ),
}


def detect_language(text: str) -> str:
    """'ca', 'es' or 'en' by distinctive function words and letters; Catalan when unsure."""
    words = re.findall(r"[\wà-ÿ·']+", text.lower())
    scores = {lang: sum(w in markers for w in words) for lang, markers in _LANGUAGE_MARKERS.items()}
    lowered = text.lower()
    scores["es"] += 2 * (("ñ" in lowered) + ("¿" in lowered) + ("¡" in lowered))
    scores["ca"] += 2 * (("l·l" in lowered) + ("ç" in lowered) + ("'" in lowered and " l'" in f" {lowered}"))
    best = max(scores, key=lambda lang: (scores[lang], lang == "ca"))
    return best if scores[best] > 0 else "ca"
