"""Words as search terms: folded, stopwords dropped, stemmed in their language (PyStemmer)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from docubot.text.language import LANGUAGES, detect_language, guess_language
from docubot.text.normalize import fold
from docubot.text.stopwords import stopwords, stopwords_fingerprint

_STEMMER_NAMES = {"ca": "catalan", "es": "spanish", "en": "english"}
TOKENS_VERSION = f"tokens-1+{stopwords_fingerprint()}"
"""Names what `tokenize` (with language detection, stopwords and stemmers) produces: change its
number when that output changes, so that what is stored from it (a conversation's term counts, the
BM25 index) is recomputed, not misread. A change to the stopword lists changes it by itself."""


@lru_cache(maxsize=3)
def _stemmer(language: str) -> Any:
    import Stemmer

    return Stemmer.Stemmer(_STEMMER_NAMES[language])


def tokenize(text: str, language: str) -> list[str]:
    """Search tokens of `text` in `language`: 'Com exporto les contrasenyes?' → ['export', 'contraseny']."""
    words = re.findall(r"\w+", fold(text.replace("·", "")))
    stop = stopwords(language)
    kept = [w for w in words if w not in stop and (len(w) > 1 or w.isdigit())]
    return list(_stemmer(language).stemWords(kept))


@lru_cache(maxsize=1)
def any_stopwords() -> frozenset[str]:
    """The stopwords of every language DocuBot reads."""
    return frozenset().union(*(stopwords(language) for language in LANGUAGES))


def folded_words(text: str) -> list[str]:
    """The words of `text`, folded, as runs of letters and digits: 'Exportació CSV' → exportacio, csv."""
    return re.findall(r"[a-z0-9]+", fold(text))


def content_stems(text: str) -> set[str]:
    """Crude language-agnostic stems (5-letter prefixes) of the content words of `text`."""
    return {w[:5] for w in folded_words(text) if len(w) >= 4 and w not in any_stopwords()}


def loose_stems(text: str) -> set[str]:
    """4-letter prefixes of the content words of 3 letters or more: a looser match than
    `content_stems` ("http" and "HTTPS", "URL"), for telling whether two texts share a subject."""
    return {w[:4] for w in folded_words(text) if len(w) >= 3 and w not in any_stopwords()}


def query_tokens(text: str, fallback: str) -> list[str]:
    """Search tokens of a question: in its language (`fallback`, the corpus's, as the prior); a text
    too short to tell (a name alone: "Zirconi") in the stems of every language, since the chunk that
    holds it may be in any of them."""
    if guess_language(text) is not None:
        return tokenize(text, detect_language(text, fallback))
    languages = (fallback, *(language for language in LANGUAGES if language != fallback))
    return list(dict.fromkeys(token for language in languages for token in tokenize(text, language)))
