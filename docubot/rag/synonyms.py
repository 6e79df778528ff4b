"""The docs' own words for the words users ask with: a synonyms file that widens the search.

Users ask with words the docs never use: "com l'anul·lo?" of a token the docs *revoke*, "la
targeta" for the *mètode de pagament*, "on ens donem de baixa?" where the docs *cancel·la la
subscripció*. Neither BM25 nor the embedding bridges every such gap, and whoever writes the docs
knows them. A synonyms file names them, one rule per line:

    # the user's words => the docs' words
    anul·lar, anul·lo, invalidar => revocar
    targeta => mètode de pagament

A question holding any word or phrase left of `=>` (every word of it, in its order, compared by
stems in the corpus's language: "de starter a business" is not "del business a l'starter") is
searched with the words on the right added: BM25 reads them, and the query embedding is the mean
of the question's and the widened question's, so the words asked still count. The extract reads
them too, to tell which of two cases the question asks ("Quan passes a un pla superior…" or "…a
un pla inferior…", `extractive._without_the_other_case`). A rule only adds words, never takes
one away. Blank lines and lines starting with `#` are skipped.

`docubot ingest DOCS` stores `DOCS/synonyms.txt` in the deployment's database (the `meta` row
`synonyms`), so the rules travel with the docs they are about and every server on a shared
PostgreSQL database reads the same ones. `DOCUBOT_SYNONYMS` names a file that is read instead,
again whenever it changes; an edit that breaks it is logged and the rules before it are kept.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from docubot.db import Database
from docubot.store.sql import meta, set_meta
from docubot.text import tokenize

log = logging.getLogger(__name__)

FILE_NAME = "synonyms.txt"
"""The synonyms file's name in the docs folder."""
META_KEY = "synonyms"
"""The `meta` row holding the synonyms file ingested last."""
ARROW = "=>"
SHORT_STEM = 2
"""A stem this short ("em") is held by questions about anything."""


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
        stems = tokenize(question, language)
        added = [
            rule.docs
            for rule in self.rules
            if any(_holds(stems, tokenize(words, language)) for words in rule.asked)
        ]
        return " ".join([question, *dict.fromkeys(added)])

    def short_stems(self, language: str) -> list[tuple[str, str]]:
        """Each rule's word or phrase with a stem of it of SHORT_STEM letters or fewer: the Catalan
        stemmer makes "email" "em", the pronoun of "em retorneu…", and on the sample docs a rule
        holding it widened unrelated questions and lost 3 answers."""
        return [
            (words, stem)
            for rule in self.rules
            for words in rule.asked
            for stem in tokenize(words, language)
            if len(stem) <= SHORT_STEM
        ]


def _holds(stems: list[str], phrase: list[str]) -> bool:
    """Every stem of `phrase` is among `stems`, in the phrase's order ("de Starter a Business" is not
    "del Business a l'Starter"); a phrase of stopwords alone matches nothing."""
    remaining = iter(stems)
    return bool(phrase) and all(stem in remaining for stem in phrase)


def store_synonyms(db: Database, text: str) -> None:
    """Keep `text`, a synonyms file checked by `Synonyms.parse`, as the deployment's rules."""
    with db.write() as conn:
        set_meta(conn, {META_KEY: text})


class SynonymsSource:
    """The deployment's synonyms: the file `path` when one is named, else the rules ingest stored in
    `db`; each read again when it changes."""

    def __init__(self, db: Database, path: Path | None = None) -> None:
        self.db = db
        self.path = path
        self._lock = threading.Lock()
        self._text: str | None = None
        self._synonyms = Synonyms()
        self._read(strict=True)

    def current(self) -> Synonyms:
        """The rules as they are now (a text that cannot be read: logged, the rules before it kept)."""
        return self._read(strict=False)

    def _read(self, strict: bool) -> Synonyms:
        source = str(self.path) if self.path else f"the database's {META_KEY}"
        try:
            text = self._text_now()
        except (OSError, UnicodeDecodeError) as exc:
            return self._unread(SynonymsError(f"{source}: {exc}"), strict)
        with self._lock:
            if text != self._text:
                try:
                    self._synonyms = Synonyms.parse(text, source)
                except SynonymsError as exc:
                    return self._unread(exc, strict)
                finally:
                    self._text = text
            return self._synonyms

    def _text_now(self) -> str:
        if self.path is not None:
            return self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        with self.db.read() as conn:
            return conn.execute(select(meta.c.value).where(meta.c.key == META_KEY)).scalar() or ""

    def _unread(self, error: SynonymsError, strict: bool) -> Synonyms:
        if strict:
            raise error
        log.error("synonyms not read, the rules before them are kept: %s", error)
        return self._synonyms
