"""Which language a text is in: Catalan, Spanish or English, by py3langid's character n-gram model.

py3langid (restricted to the three languages) was measured against lingua on 211 short support
questions (`evals/lang/questions.jsonl`): 98.6 % against 92.4 %, in 0.03 ms a call against 0.07 ms;
lingua mistook short Catalan questions for Spanish or English. When the model is unsure (its best
language has less than `MIN_CONFIDENCE` of the probability: a product name alone, a number, an
acronym), the caller's fallback decides: the majority language of the corpus, never a fixed one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

LANGUAGES = ("ca", "es", "en")
DEFAULT_LANGUAGE = "ca"
"""DocuBot's own language (its prompt, refusals and JSON contract are Catalan): the last resort, for
when neither a text nor the corpus it belongs to tells."""
MIN_CONFIDENCE = 0.6
"""Below this probability of the best of the three languages, the text is too short or too
language-neutral to tell (measured: names and acronyms score 0.33–0.58, questions 0.66–1.0)."""


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(LANGUAGES))
    return identifier


def guess_language(text: str) -> str | None:
    """'ca', 'es' or 'en'; None when the text does not tell."""
    language, probability = _identifier().classify(text)
    return str(language) if probability >= MIN_CONFIDENCE else None


def detect_language(text: str, fallback: str) -> str:
    """The language of `text`, or `fallback` (the corpus's majority language) when it does not tell."""
    return guess_language(text) or fallback


def corpus_languages(texts: Sequence[str], fallback: str) -> tuple[list[str], str]:
    """Each text's language, and the majority language of `texts` (`fallback` when none tells),
    which is also given to the texts that do not tell."""
    guesses = [guess_language(text) for text in texts]
    counts = Counter(language for language in guesses if language)
    majority = counts.most_common(1)[0][0] if counts else fallback
    return [language or majority for language in guesses], majority
