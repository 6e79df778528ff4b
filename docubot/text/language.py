"""Which language a text is in: Catalan, Spanish or English, by py3langid's character n-gram model.

py3langid (restricted to the three languages) was measured against lingua on 211 short support
questions (`evals/lang/questions.jsonl`, docs/text.md): more accurate, as fast, far smaller. Short
Catalan questions that are also almost Spanish ("Com exporto un informe?") still come out Spanish,
so the caller's fallback, the majority language of the corpus the text belongs to, weighs as a prior:
its probability counts `FALLBACK_PRIOR` times. A text that does not tell (a name, an acronym, a
number: the model gives the three languages about a third each) gets the fallback.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

LANGUAGES = ("ca", "es", "en")
DEFAULT_LANGUAGE = "ca"
"""DocuBot's own language (its prompt, refusals and JSON contract are Catalan): the last resort, for
when neither a text nor the corpus it belongs to tells."""
MIN_CONFIDENCE = 0.6
"""Without a fallback, below this probability of the best language the text does not tell
(measured: names and acronyms 0.33–0.58, the labelled questions 0.43–1.0)."""
FALLBACK_PRIOR = 4.0
"""The fallback language is taken to be 4 times likelier than each other one (two thirds of the
questions in the corpus's language). Chosen on the labelled set's dev split: 3 → 4 → 5 gave 0.965 →
0.958 → 0.958 with a wrong (Spanish) fallback and 0.951 → 0.971 → 0.980 on 205 short Catalan
questions of evals/nubelia with a Catalan one (0.868 with no prior)."""


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(LANGUAGES))
    return identifier


def language_probabilities(text: str) -> dict[str, float]:
    """'ca', 'es' and 'en' → the model's probability (they add up to 1; a third each for no evidence).
    Fenced code blocks are in none of them: a Spanish answer with a `curl` call read as English."""
    return {str(language): float(p) for language, p in _identifier().rank(FENCED_CODE.sub(" ", text))}


FENCED_CODE = re.compile(r"(```[\s\S]*?```|~~~[\s\S]*?~~~)")
"""A fenced code block (one group: `split` keeps it)."""


def guess_language(text: str) -> str | None:
    """The most likely language; None when the text does not tell."""
    probabilities = language_probabilities(text)
    best = max(probabilities, key=probabilities.__getitem__)
    return best if probabilities[best] >= MIN_CONFIDENCE else None


def detect_language(text: str, fallback: str) -> str:
    """The language of `text`, `fallback` (the corpus's majority language) weighing as a prior."""
    return _with_prior(language_probabilities(text), fallback)


def corpus_languages(texts: Sequence[str], fallback: str) -> tuple[list[str], str]:
    """Each text's language, and the majority language of `texts` (`fallback` when none tells),
    which is each text's prior."""
    probabilities = [language_probabilities(text) for text in texts]
    counts = Counter(best for p in probabilities if p[best := max(p, key=p.__getitem__)] >= MIN_CONFIDENCE)
    majority = counts.most_common(1)[0][0] if counts else fallback
    return [_with_prior(p, majority) for p in probabilities], majority


def _with_prior(probabilities: dict[str, float], fallback: str) -> str:
    weighted = {lang: p * (FALLBACK_PRIOR if lang == fallback else 1.0) for lang, p in probabilities.items()}
    return max(weighted, key=weighted.__getitem__)
