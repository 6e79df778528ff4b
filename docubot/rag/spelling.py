"""Typos in a question, spelled as the docs spell the word, for the dense search.

"m'ha rebutjat la contrsenya nova": BM25 already scores a token one edit from the vocabulary
(`docubot/rag/keyword.py`), but the embedder cuts "contrsenya" into other pieces than
"contrasenya", and the question lands on the getting-started and task pages.
`Spelling.corrected` writes each such word as the corpus writes its nearest word, and the
retriever embeds the mean of the question and its corrected copy (`retrieve.halfway`), as it
does for a question widened by synonyms: the words asked still count, so a wrong correction costs
little.

A word is corrected when it has `MIN_LETTERS` letters or more, the corpus never uses it (folded:
accents and case do not count) and the dictionaries of Catalan, Spanish and English (simplemma)
do not know it, so that an inflection ("canvio", "tenien") or a word of another language is never
"corrected". It becomes the corpus's most frequent word one edit away (insertion, deletion,
substitution or swap), in the form the corpus uses most (accents included), capitalised as asked.
"""

from __future__ import annotations

import re
import threading
from collections import Counter

import simplemma

from docubot.store import VectorStore
from docubot.text import LANGUAGES, fold
from docubot.text.edits import OneEditIndex

MIN_LETTERS = 5
"""Shorter words are left alone: one edit away from a short word lies another word."""
_WORD = re.compile(r"[^\W\d_][\w·]*[^\W\d_]")


class Spelling:
    """The corpus's words, by frequency and most usual form, rebuilt when the corpus changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version: int | None = None
        self._frequency: Counter[str] = Counter()
        self._form: dict[str, str] = {}
        self._near = OneEditIndex(())

    def corrected(self, question: str, store: VectorStore) -> str:
        """`question` with each typo written as the corpus's nearest word (itself when none is)."""
        self._refresh(store)
        return _WORD.sub(lambda match: self._word(match.group()), question)

    def _word(self, written: str) -> str:
        """`written` spelled as the corpus's nearest word, or as written when it is no typo."""
        word = _key(written)
        if len(word) < MIN_LETTERS or word in self._frequency or _in_a_dictionary(written):
            return written
        near = self._near.near(word)
        if not near:
            return written
        form = self._form[max(near, key=self._frequency.__getitem__)]
        return form[:1].upper() + form[1:] if written[:1].isupper() else form

    def _refresh(self, store: VectorStore) -> None:
        version = store.corpus_version()
        with self._lock:
            if self._version == version:
                return
            forms: dict[str, Counter[str]] = {}
            for record in store.get(sorted(store.list_ids())):
                for written in _WORD.findall(record.text):
                    forms.setdefault(_key(written), Counter())[written.lower()] += 1
            self._frequency = Counter({word: sum(seen.values()) for word, seen in forms.items()})
            self._form = {word: seen.most_common(1)[0][0] for word, seen in forms.items()}
            self._near = OneEditIndex(w for w in self._frequency if len(w) >= MIN_LETTERS)
            self._version = version


def _key(written: str) -> str:
    """How words are compared: folded, without the Catalan middle dot."""
    return fold(written).replace("·", "")


def _in_a_dictionary(written: str) -> bool:
    """A word of Catalan, Spanish or English as it is: an inflection or another language's word."""
    return any(simplemma.is_known(written.lower(), lang=language) for language in LANGUAGES)
