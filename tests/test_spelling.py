"""Typos spelled as the docs spell the word, for the dense search (docubot/rag/spelling.py)."""

from __future__ import annotations

from pathlib import Path

from docubot.config import Settings
from docubot.ingest.pipeline import ingest
from docubot.rag.answer import DocuBot
from docubot.rag.spelling import Spelling
from docubot.store.sql import SQLStore

GUIDE = """# Seguretat

## Contrasenya

Per canviar la contrasenya, obre *Perfil > Seguretat*. La configuració de la contrasenya
no pot coincidir amb cap de les cinc últimes contrasenyes. Els canvis tanquen les sessions.
Connecta-hi Slack si vols avisos.
"""

A201 = (
    "m'ha rebutjat la contrsenya nova perque diu que ja l'havia fet servir abans. "
    "de quantes d'anteriors se'n recorda?"
)
"""tune a201: the typo "contrsenya" took the question to the tasks and calendar pages."""


def _ingested(docs: Path, settings: Settings, store: SQLStore, embedder) -> SQLStore:
    (docs / "seguretat.md").write_text(GUIDE, encoding="utf-8")
    ingest(docs, settings, store, embedder)
    return store


def test_a_typo_is_spelled_as_the_corpus_spells_the_word(
    docs: Path, settings: Settings, store: SQLStore, embedder
) -> None:
    _ingested(docs, settings, store, embedder)
    spelling = Spelling()
    assert spelling.corrected("Com canvio la contrsenya?", store) == "Com canvio la contrasenya?"
    assert spelling.corrected("la configuracó", store) == "la configuració"  # with the corpus's accents
    assert spelling.corrected("Connecto Slakc?", store) == "Connecto Slack?"  # capitalised as asked


def test_words_the_corpus_or_a_dictionary_knows_and_short_words_are_left_alone(
    docs: Path, settings: Settings, store: SQLStore, embedder
) -> None:
    """An inflection the docs do not use one edit from a corpus word ("canvies", "canvis"), a word
    of another language ("contraseña", "contrasenya"), a short word ("Slak") and a word far from any
    are no typos."""
    _ingested(docs, settings, store, embedder)
    question = "Si canvies la contraseña de Slak a la intranet, què passa?"
    assert Spelling().corrected(question, store) == question


def test_the_words_follow_the_corpus_when_it_changes(
    docs: Path, settings: Settings, store: SQLStore, embedder
) -> None:
    _ingested(docs, settings, store, embedder)
    spelling = Spelling()
    assert spelling.corrected("webhok", store) == "webhok"
    (docs / "webhooks.md").write_text("# Webhooks\n\nCrea un webhook a *Configuració > API*.\n")
    ingest(docs, settings, store, embedder)
    assert spelling.corrected("webhok", store) == "webhook"


def test_the_sample_docs_find_a_question_with_a_typo(sample_settings: Settings, embedder) -> None:
    answer = DocuBot(sample_settings, embedder=embedder, chat_model=None).ask(A201).answer
    assert "cinc últimes contrasenyes" in answer.resposta


def test_without_spelling_the_typo_misses_it(sample_settings: Settings, embedder) -> None:
    """The same question searched as typed: the failure the correction mends."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    bot.retriever.spelling = None
    assert "cinc últimes contrasenyes" not in bot.ask(A201).answer.resposta
