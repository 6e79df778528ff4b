"""The docs' own words for the words users ask with: a synonyms file that widens the search.

Users ask with words the docs never use: "com l'anul·lo?" of a token the docs *revoke*, "la
targeta" for the *mètode de pagament*, "on ens donem de baixa?" where the docs *cancel·la la
subscripció*. Neither BM25 nor the embedding bridges every such gap, and whoever writes the docs
knows them. A synonyms file names them, one rule per line:

    # the user's words => the docs' words
    anul·lar, anul·lo, invalidar => revocar
    targeta => mètode de pagament

A question holding any word or phrase left of `=>` (every word of it, compared by stems in the
corpus's language) is searched with the words on the right added: BM25 reads them, and the query
embedding is the mean of the question's and the widened question's, so the words asked still
count. A rule only adds words, never takes one away. Blank lines and lines starting with `#` are
skipped.

The file is `<home>/synonyms.txt` (`DOCUBOT_SYNONYMS` names another); `docubot ingest DOCS`
copies `DOCS/synonyms.txt` there, so the rules travel with the docs they are about. It is read
again when it changes; an edit that breaks it is logged and the rules before it are kept.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from docubot.text import tokenize

log = logging.getLogger(__name__)

FILE_NAME = "synonyms.txt"
"""The synonyms file's name, in the docs folder and in the data folder."""
ARROW = "=>"


class SynonymsError(ValueError):
    """A synonyms file that cannot be read: the line and what is wrong with it."""


@dataclass(frozen=True)
class Rule:
    """Users' words or phrases (`asked`) and the docs' words searched beside them (`docs`)."""

    asked: tuple[str, ...]
    docs: str


@dataclass(frozen=True)
class Synonyms:
    rules: tuple[Rule, ...] = ()

    @classmethod
    def parse(cls, text: str, source: str = FILE_NAME) -> Synonyms:
        """The rules of a synonyms file's `text`; SynonymsError names the first bad line."""
        rules = []
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            asked, arrow, docs = line.partition(ARROW)
            words = tuple(word.strip() for word in asked.split(",") if word.strip())
            if not arrow or not words or not docs.strip() or ARROW in docs:
                raise SynonymsError(
                    f"{source}:{number}: expected \"user's words => docs' words\", got {line!r}"
                )
            rules.append(Rule(words, docs.strip()))
        return cls(tuple(rules))

    def widened(self, question: str, language: str) -> str:
        """`question` with the docs' words of every rule it matches added (itself when none does)."""
        stems = set(tokenize(question, language))
        added = [
            rule.docs
            for rule in self.rules
            if any(_holds(stems, tokenize(words, language)) for words in rule.asked)
        ]
        return " ".join([question, *dict.fromkeys(added)])


def _holds(stems: set[str], phrase: list[str]) -> bool:
    """Every stem of `phrase` is among `stems` (a phrase of stopwords alone matches nothing)."""
    return bool(phrase) and all(stem in stems for stem in phrase)


class SynonymsFile:
    """The synonyms in `path`, read again when the file changes (no file: no synonyms)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._synonyms = Synonyms()
        self.current(strict=True)

    def current(self, strict: bool = False) -> Synonyms:
        """The rules as the file holds them now. A file that cannot be read raises SynonymsError when
        `strict` (at start), else is logged and the rules read before it stay."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            stamp = None
        else:
            stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if stamp == self._stamp:
                return self._synonyms
            try:
                text = self.path.read_text(encoding="utf-8") if stamp else ""
                self._synonyms = Synonyms.parse(text, str(self.path))
            except (OSError, UnicodeDecodeError, SynonymsError) as exc:
                if strict:
                    raise SynonymsError(str(exc)) from exc
                log.error("synonyms file not read, the rules before it are kept: %s", exc)
            self._stamp = stamp
            return self._synonyms
