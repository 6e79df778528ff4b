"""The synonyms file: the docs' words searched beside the users' (docubot/rag/synonyms.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from docubot.config import Settings
from docubot.db import Database
from docubot.ingest.pipeline import IngestRefused, ingest
from docubot.rag.answer import DocuBot
from docubot.rag.synonyms import META_KEY, Synonyms, SynonymsError, SynonymsSource
from docubot.store.sql import SQLStore, meta

RULES = """# users' words => the docs' words
anul·lar, anul·lo => revocar

targeta => mètode de pagament
tallar l'accés => suspendre
"""


def test_a_question_holding_a_users_word_is_searched_with_the_docs_words() -> None:
    synonyms = Synonyms.parse(RULES)
    assert synonyms.widened("com l'anul·lo?", "ca") == "com l'anul·lo? revocar"
    assert synonyms.widened("On canvio la targeta?", "ca") == "On canvio la targeta? mètode de pagament"


def test_a_phrase_matches_only_with_every_word_of_it() -> None:
    synonyms = Synonyms.parse(RULES)
    assert synonyms.widened("vull tallar-li l'accés", "ca").endswith("suspendre")
    assert synonyms.widened("vull tallar el text", "ca") == "vull tallar el text"


def test_a_phrase_matches_only_with_its_words_in_its_order() -> None:
    """ "de starter a business" moves up a plan; "del business a l'starter" moves down."""
    synonyms = Synonyms.parse("de starter a business => pla superior\n")
    assert synonyms.widened("si passem de Starter a Business?", "ca").endswith("pla superior")
    down = "si passem del business a l'starter?"
    assert synonyms.widened(down, "ca") == down


def test_a_question_holding_none_of_the_words_is_searched_as_asked() -> None:
    assert Synonyms.parse(RULES).widened("Com exporto un informe?", "ca") == "Com exporto un informe?"


@pytest.mark.parametrize("line", ["revocar", "=> revocar", "anul·lar =>", "a => b => c"])
def test_a_bad_rule_is_named_by_its_line(line: str) -> None:
    with pytest.raises(SynonymsError, match=r"synonyms\.txt:3: expected"):
        Synonyms.parse(f"# rules\ntargeta => mètode de pagament\n{line}\n")


def test_a_named_file_is_read_again_when_it_changes_and_a_broken_edit_keeps_the_rules(
    tmp_path: Path, db: Database
) -> None:
    path = tmp_path / "synonyms.txt"
    rules = SynonymsSource(db, path)
    assert rules.current().rules == ()
    path.write_text("targeta => mètode de pagament\n", encoding="utf-8")
    assert len(rules.current().rules) == 1
    path.write_text("targeta => mètode de pagament\nsense fletxa\n", encoding="utf-8")
    assert len(rules.current().rules) == 1


def test_a_broken_file_at_start_is_a_clear_error(tmp_path: Path, db: Database) -> None:
    path = tmp_path / "synonyms.txt"
    path.write_text("sense fletxa\n", encoding="utf-8")
    with pytest.raises(SynonymsError, match=r"synonyms\.txt:1"):
        SynonymsSource(db, path)


def _stored(db: Database) -> str | None:
    with db.read() as conn:
        return conn.execute(select(meta.c.value).where(meta.c.key == META_KEY)).scalar()


def test_ingest_keeps_the_docs_folders_synonyms_in_the_database(
    docs: Path, settings: Settings, db: Database, store: SQLStore, embedder
) -> None:
    """Kept in the database, every server on a shared PostgreSQL reads the same rules."""
    (docs / "guia.md").write_text("# Guia\n\n## Tokens\n\nPer revocar un token, fes clic a Revoca.\n")
    (docs / "synonyms.txt").write_text(RULES, encoding="utf-8")
    report = ingest(docs, settings, store, embedder, db=db)
    assert report.synonyms == 3 and _stored(db) == RULES
    assert len(SynonymsSource(db).current().rules) == 3


def test_a_word_searched_by_a_stem_of_two_letters_is_named() -> None:
    """The Catalan stemmer makes "email" "em", which "em retorneu…?" holds too."""
    synonyms = Synonyms.parse("mail, email => correu electrònic\ntargeta => mètode de pagament\n")
    assert synonyms.short_stems("ca") == [("email", "em")]
    assert synonyms.widened("Si cancel·lo, em retorneu els diners?", "ca").endswith("correu electrònic")


def test_ingest_warns_of_a_rule_any_question_would_match(
    docs: Path, settings: Settings, db: Database, store: SQLStore, embedder
) -> None:
    (docs / "guia.md").write_text("# Guia\n\n## Informes\n\nPots rebre un informe per correu electrònic.\n")
    (docs / "synonyms.txt").write_text("email => correu electrònic\n", encoding="utf-8")
    report = ingest(docs, settings, store, embedder, db=db)
    assert report.synonyms == 1 and _stored(db) is not None
    assert any('"email" is searched by its stem "em"' in warning for warning in report.warnings)


def test_ingest_refuses_a_bad_synonyms_file_and_changes_nothing(
    docs: Path, settings: Settings, db: Database, store: SQLStore, embedder
) -> None:
    (docs / "guia.md").write_text("# Guia\n\n## Tokens\n\nPer revocar un token, fes clic a Revoca.\n")
    (docs / "synonyms.txt").write_text("anul·lar revocar\n", encoding="utf-8")
    with pytest.raises(IngestRefused, match=r"synonyms\.txt:1"):
        ingest(docs, settings, store, embedder)
    assert not store.list_ids() and _stored(db) is None


def test_ingest_refuses_a_synonyms_file_linking_out_of_the_docs(
    tmp_path: Path, docs: Path, settings: Settings, store: SQLStore, embedder
) -> None:
    outside = tmp_path / "fora.txt"
    outside.write_text("targeta => mètode de pagament\n", encoding="utf-8")
    (docs / "guia.md").write_text("# Guia\n\n## Tokens\n\nPer revocar un token, fes clic a Revoca.\n")
    (docs / "synonyms.txt").symlink_to(outside)
    with pytest.raises(IngestRefused, match="links out"):
        ingest(docs, settings, store, embedder)


def test_the_sample_docs_synonyms_find_where_a_token_is_revoked(sample_settings: Settings, embedder) -> None:
    """tune a039: "he pujat sense voler un token a github, com l'anul·lo?" found how to create a
    webhook: the docs never say "anul·lar", they *revoke* a token."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    answer = bot.ask("he pujat sense voler un token a github, com l'anul·lo?").answer.resposta
    assert "Configuració > API > Tokens" in answer and "Webhooks" not in answer


def test_without_the_synonyms_the_sample_docs_miss_it(
    sample_settings: Settings, embedder, tmp_path: Path
) -> None:
    """The same question with no synonyms file: the reason the sample docs ship one."""
    settings = sample_settings.with_overrides(synonyms=tmp_path / "none.txt")
    bot = DocuBot(settings, embedder=embedder, chat_model=None)
    answer = bot.ask("he pujat sense voler un token a github, com l'anul·lo?").answer.resposta
    assert "Configuració > API > Tokens" not in answer


def test_the_sample_synonyms_take_a_board_column_for_a_state(sample_settings: Settings, embedder) -> None:
    """blind a130: "vull afegir una columna 'en revisio' al tauler…" got how to create a project; a
    board's columns are its states, which each project defines at *Projecte > Configuració > Estats*."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    asked = "vull afegir una columna 'en revisio' al tauler d'un projecte, on es fa aixo?"
    assert "*Projecte > Configuració > Estats*" in bot.ask(asked).answer.resposta


def test_the_sample_synonyms_read_mail_as_the_docs_email(sample_settings: Settings, embedder) -> None:
    """blind a147: "vull que cada dilluns m'arribi per mail l'informe…" missed "Pots rebre un informe
    per correu electrònic de manera periòdica… fes clic a **Programa**". ("email" is not in the rule:
    the Catalan stemmer makes it "em", the pronoun of "em retorneu…", and 3 answers were lost.)"""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    asked = "vull que cada dilluns m'arribi per mail l'informe de carrega de feina, es pot automatitzar?"
    assert "**Programa**" in bot.ask(asked).answer.resposta


def test_the_sample_synonyms_read_a_move_between_plans_as_the_docs_upgrade(
    sample_settings: Settings, embedder
) -> None:
    """unseen a179: "…i si a mig mes pugem al business, ens cobreu el mes sencer?" was refused: the
    docs say "Quan passes a un pla superior… es cobra la part proporcional"."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    asked = (
        "si canviem a pagar per anys, des de quan va? i si a mig mes pugem al business, ens cobreu el "
        "mes sencer?"
    )
    assert "part proporcional" in bot.ask(asked).answer.resposta


def test_the_sample_synonyms_read_people_as_the_docs_users(sample_settings: Settings, embedder) -> None:
    """blind a145: "som uns 40 a l'oficina, al business hi cabem tots o hi ha un màxim de gent?" was
    refused: the docs count *usuaris* and *membres*, and the Business plan's are "Il·limitats"."""
    bot = DocuBot(sample_settings, embedder=embedder, chat_model=None)
    asked = "som uns 40 a l'oficina, al business hi cabem tots o hi ha un màxim de gent?"
    assert "Usuaris: Il·limitats" in bot.ask(asked).answer.resposta
