"""Text tools every layer shares: language identification, folding, stopwords, stemming, tokens.

The bottom layer: it imports only the standard library and third-party packages.
"""

from docubot.text.language import (
    DEFAULT_LANGUAGE,
    LANGUAGES,
    corpus_languages,
    detect_language,
    guess_language,
    language_probabilities,
)
from docubot.text.normalize import fold, fold_in_place
from docubot.text.sentences import question_parts, sentences
from docubot.text.stopwords import stopwords
from docubot.text.tokens import (
    TOKENS_VERSION,
    any_stopwords,
    content_stems,
    folded_words,
    loose_stems,
    query_tokens,
    tokenize,
)

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "TOKENS_VERSION",
    "any_stopwords",
    "content_stems",
    "corpus_languages",
    "detect_language",
    "fold",
    "fold_in_place",
    "folded_words",
    "guess_language",
    "language_probabilities",
    "loose_stems",
    "query_tokens",
    "question_parts",
    "sentences",
    "stopwords",
    "tokenize",
]
