"""ingest(): incremental, guarded, version-aware ingestion with the real e5 embedder and SQLite store."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from filelock import FileLock
from sqlalchemy import select

from docubot.cache.answers import AnswerCache, cached_answers
from docubot.components import Components
from docubot.config import Settings
from docubot.ingest.pipeline import IngestBusy, IngestRefused, ingest
from docubot.rag.retrieve import Retriever
from docubot.store.sql import SQLStore

if TYPE_CHECKING:  # the fixtures' types; tests/ is not a package
    from conftest import CountingEmbedder, PageWriter

AUTH_V2 = (
    "# Autenticació\n\n## Tokens\n\nEls tokens d'accés caduquen als 30 dies i es revoquen des del perfil.\n"
)
AUTH_V1 = "# Autenticació\n\n## Tokens\n\nEls tokens d'accés caducaven als 90 dies i no es podien revocar.\n"


@pytest.fixture
def corpus(write_page: PageWriter, md: Callable[..., str]) -> dict[str, Path]:
    """Three pages, four chunks: guia.md has two sections."""
    return {
        "guia.md": write_page(
            "guia.md",
            md(
                "Guia",
                [
                    ("Inici", "Benvinguts a Nubelia, l'eina de tasques."),
                    ("Projectes", "Creeu un projecte nou."),
                ],
            ),
            url="wiki/guia",
            version="2026.2",
            date="2026-09-01",
        ),
        "factures.md": write_page(
            "admin/factures.md",
            md("Factures", [("PDF", "Les factures es generen el primer dia de cada mes.")]),
            url="wiki/admin/factures",
            version="2026.2",
            date="2026-09-01",
        ),
        "slack.md": write_page(
            "integracions/slack.md",
            md("Slack", [("Connectar", "Connecteu Slack des de Configuració > Integracions.")]),
            url="wiki/integracions/slack",
            version="2026.2",
            date="2026-09-01",
        ),
    }


def snapshot(store: SQLStore) -> tuple[dict[str, str], dict[str, dict[str, object]], int]:
    ids = store.list_ids()
    return {r.id: r.text for r in store.get(ids)}, store.all_metadata(), store.corpus_version()


def test_first_ingest_adds_everything(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
) -> None:
    progress: list[tuple[int, int]] = []
    report = ingest(docs, settings, store, counting_embedder, progress=lambda d, t: progress.append((d, t)))
    assert (report.files, report.chunks, report.added, report.embedded) == (3, 4, 4, 4)
    assert (report.updated, report.unchanged, report.deleted) == (0, 0, 0)
    assert report.corpus_version == store.corpus_version() == 1
    assert store.count() == 4
    assert len(counting_embedder.texts) == 4
    assert progress[0] == (0, 4) and progress[-1] == (4, 4)
    assert store.list_ids() == {
        "wiki-guia--inici--00",
        "wiki-guia--projectes--00",
        "wiki-admin-factures--pdf--00",
        "wiki-integracions-slack--connectar--00",
    }
    [rec] = store.get(["wiki-admin-factures--pdf--00"])
    assert rec.text == "[Factures > PDF]\nLes factures es generen el primer dia de cada mes."
    assert rec.metadata["url"] == "wiki/admin/factures"
    assert rec.metadata["source_path"] == "admin/factures.md"
    assert {f.path: f.chunks for f in report.per_file} == {
        "admin/factures.md": 1,
        "guia.md": 2,
        "integracions/slack.md": 1,
    }
    hits = Retriever(counting_embedder, store).search("Com connecto Slack?", k=1).hits
    assert hits[0].id == "wiki-integracions-slack--connectar--00"


def test_second_ingest_embeds_and_writes_nothing(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    before = snapshot(store)
    watcher = sqlite3.connect(settings.db_path)  # PRAGMA data_version moves on any other connection's commit
    try:
        commits_before = watcher.execute("PRAGMA data_version").fetchone()[0]
        counting_embedder.reset()
        report = ingest(docs, settings, store, counting_embedder)
        assert watcher.execute("PRAGMA data_version").fetchone()[0] == commits_before
        store.bump_corpus_version()  # proves the watcher does see a write
        assert watcher.execute("PRAGMA data_version").fetchone()[0] != commits_before
    finally:
        watcher.close()
    assert counting_embedder.calls == 0
    assert (report.embedded, report.added, report.updated, report.deleted) == (0, 0, 0, 0)
    assert report.unchanged == report.chunks == 4
    assert report.corpus_version == 1
    texts, metadata, _ = snapshot(store)
    assert (texts, metadata) == before[:2]


def test_an_edited_page_re_embeds_only_its_changed_chunks(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    md: Callable[..., str],
    write_page: PageWriter,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    counting_embedder.reset()
    write_page(
        "guia.md",
        md(
            "Guia",
            [
                ("Inici", "Benvinguts a Nubelia, l'eina de tasques."),
                ("Projectes", "Creeu i arxiveu projectes."),
            ],
        ),
        url="wiki/guia",
        version="2026.2",
        date="2026-09-01",
    )
    report = ingest(docs, settings, store, counting_embedder)
    assert counting_embedder.texts == ["[Guia > Projectes]\nCreeu i arxiveu projectes."]
    assert (report.embedded, report.updated, report.added, report.deleted, report.unchanged) == (
        1,
        1,
        0,
        0,
        3,
    )
    assert report.corpus_version == 2
    [rec] = store.get(["wiki-guia--projectes--00"])
    assert rec.text == "[Guia > Projectes]\nCreeu i arxiveu projectes."
    hits = Retriever(counting_embedder, store).search("Com arxivo un projecte?", k=1).hits
    assert hits[0].id == "wiki-guia--projectes--00"


def test_a_metadata_only_change_updates_without_embedding(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    md: Callable[..., str],
    write_page: PageWriter,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    counting_embedder.reset()
    write_page(
        "integracions/slack.md",
        md("Slack", [("Connectar", "Connecteu Slack des de Configuració > Integracions.")]),
        url="wiki/integracions/slack",
        version="2026.2",
        date="2026-10-15",
    )
    report = ingest(docs, settings, store, counting_embedder)
    assert counting_embedder.calls == 0
    assert (report.updated, report.embedded) == (1, 0)
    assert store.all_metadata()["wiki-integracions-slack--connectar--00"]["date"] == "2026-10-15"


def test_a_removed_page_is_purged(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    corpus["slack.md"].unlink()
    counting_embedder.reset()
    report = ingest(docs, settings, store, counting_embedder)
    assert (report.deleted, report.embedded, report.files) == (1, 0, 2)
    assert "wiki-integracions-slack--connectar--00" not in store.list_ids()
    assert store.count() == 3
    assert report.corpus_version == 2


def test_guard_rail_refuses_purging_more_than_half(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    before = snapshot(store)
    corpus["guia.md"].unlink()
    corpus["slack.md"].unlink()
    with pytest.raises(IngestRefused, match=r"delete 3 of the 4"):
        ingest(docs, settings, store, counting_embedder)
    assert snapshot(store) == before
    report = ingest(docs, settings, store, counting_embedder, force=True)
    assert report.deleted == 3
    assert store.list_ids() == {"wiki-admin-factures--pdf--00"}


def test_empty_folder_is_refused(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    tmp_path: Path,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    before = snapshot(store)
    empty = tmp_path / "buida"
    empty.mkdir()
    (empty / "notes.txt").write_text("no és markdown", encoding="utf-8")
    (empty / ".ocult.md").write_text("# ocult", encoding="utf-8")
    with pytest.raises(IngestRefused, match="no markdown pages"):
        ingest(empty, settings, store, counting_embedder)
    assert snapshot(store) == before


def test_a_binary_page_refuses_the_run_and_changes_nothing(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    md: Callable[..., str],
    write_page: PageWriter,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    before = snapshot(store)
    (docs / "imatge.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
    write_page("guia.md", md("Guia", [("Inici", "Text editat.")]), url="wiki/guia", version="2026.2")
    counting_embedder.reset()
    with pytest.raises(IngestRefused) as info:
        ingest(docs, settings, store, counting_embedder)
    assert "imatge.md" in str(info.value)
    assert "binary" in str(info.value)
    assert counting_embedder.calls == 0
    assert snapshot(store) == before


def test_force_ingests_the_good_pages_and_keeps_the_bad_pages_chunks(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    md: Callable[..., str],
    write_page: PageWriter,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    [factura] = store.get(["wiki-admin-factures--pdf--00"])
    corpus["factures.md"].write_bytes(b"%PDF-1.7\n\x00\x00\x00 binari")
    write_page(
        "nova.md",
        md("Nova", [("Secció", "Una pàgina nova sobre informes.")]),
        url="wiki/nova",
        version="2026.2",
    )
    report = ingest(docs, settings, store, counting_embedder, force=True)
    errors = {f.path: f.error for f in report.per_file if f.error}
    assert list(errors) == ["admin/factures.md"]
    assert "binary" in errors["admin/factures.md"]
    assert (report.added, report.deleted) == (1, 0)
    assert "wiki-nova--seccio--00" in store.list_ids()
    assert store.get(["wiki-admin-factures--pdf--00"]) == [factura]
    assert store.count() == 5


def test_dry_run_changes_nothing(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    md: Callable[..., str],
    write_page: PageWriter,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    before = snapshot(store)
    corpus["slack.md"].unlink()
    write_page(
        "guia.md",
        md("Guia", [("Inici", "Text nou."), ("Projectes", "Creeu un projecte nou.")]),
        url="wiki/guia",
        version="2026.2",
        date="2026-09-01",
    )
    write_page("nova.md", md("Nova", [("Secció", "Una pàgina nova.")]), url="wiki/nova", version="2026.2")
    counting_embedder.reset()
    report = ingest(docs, settings, store, counting_embedder, dry_run=True)
    assert report.dry_run
    assert (report.added, report.updated, report.deleted, report.unchanged) == (1, 1, 1, 2)
    assert report.embedded == 2  # what a real run would embed
    assert report.corpus_version == 1
    assert counting_embedder.calls == 0
    assert snapshot(store) == before


def test_dry_run_on_an_empty_store_writes_nothing(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
) -> None:
    report = ingest(docs, settings, store, counting_embedder, dry_run=True)
    assert (report.added, report.embedded, report.corpus_version) == (4, 4, 0)
    assert store.count() == 0 and store.corpus_version() == 0
    # no model was recorded either: another embedder could still use this store
    store.check_embedding_model("un-altre-model", 8)


def test_a_concurrent_ingest_is_refused(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
) -> None:
    settings.home.mkdir(parents=True, exist_ok=True)
    lock = FileLock(settings.home / "ingest.lock")
    with lock.acquire(timeout=0):
        with pytest.raises(IngestBusy, match="another ingest is running"):
            ingest(docs, settings, store, counting_embedder)
        assert counting_embedder.calls == 0
        assert store.count() == 0
    report = ingest(docs, settings, store, counting_embedder)
    assert report.added == 4


def test_two_versions_of_the_same_url(
    docs: Path,
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    write_page: PageWriter,
) -> None:
    write_page("api/autenticacio.md", AUTH_V2, url="wiki/api/auth", version="2026.2", date="2026-09-01")
    write_page(
        "arxiu/2026.1/api/autenticacio.md", AUTH_V1, url="wiki/api/auth", version="2026.1", date="2026-03-01"
    )
    write_page("guia.md", "# Guia\n\n## Inici\n\nBenvinguts.\n", url="wiki/guia", version="2026.2")
    report = ingest(docs, settings, store, counting_embedder)
    assert report.chunks == store.count() == 3
    meta = store.all_metadata()
    assert meta["wiki-api-auth--tokens--00"]["version"] == "2026.2"
    assert meta["wiki-api-auth--tokens--00"]["latest"] is True
    assert meta["wiki-api-auth--v2026-1--tokens--00"]["version"] == "2026.1"
    assert meta["wiki-api-auth--v2026-1--tokens--00"]["latest"] is False

    question = "Quants dies duren els tokens d'accés?"
    latest = Retriever(counting_embedder, store).search(question, k=10).hits
    assert latest and all(h.metadata["version"] != "2026.1" for h in latest)
    assert latest[0].id == "wiki-api-auth--tokens--00"
    old = Retriever(counting_embedder, store).search(question, k=10, version="2026.1").hits
    assert [h.id for h in old] == ["wiki-api-auth--v2026-1--tokens--00"]
    every = Retriever(counting_embedder, store).search(question, k=10, version="all").hits
    assert len(every) == 3


def test_a_new_version_reuses_vectors_of_unchanged_text(
    docs: Path,
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    write_page: PageWriter,
) -> None:
    write_page("api/autenticacio.md", AUTH_V1, url="wiki/api/auth", version="2026.1")
    write_page("guia.md", "# Guia\n\n## Inici\n\nBenvinguts.\n", url="wiki/guia", version="2026.1")
    ingest(docs, settings, store, counting_embedder)
    # The 2026.1 page is archived and 2026.2 takes its place.
    (docs / "api" / "autenticacio.md").rename(docs / "v1.md")
    write_page("api/autenticacio.md", AUTH_V2, url="wiki/api/auth", version="2026.2")
    counting_embedder.reset()
    report = ingest(docs, settings, store, counting_embedder)
    assert counting_embedder.texts == ["[Autenticació > Tokens]\n" + AUTH_V2.split("\n\n")[-1].strip()]
    assert report.embedded == 1
    assert store.all_metadata()["wiki-api-auth--v2026-1--tokens--00"]["latest"] is False


def test_a_page_without_metadata_line_gives_a_warning(
    docs: Path,
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    write_page: PageWriter,
) -> None:
    write_page("guies/sense-meta.md", "# Sense meta\n\n## A\n\nText.\n")
    write_page("amb-meta.md", "# Amb meta\n\n## A\n\nText.\n", url="wiki/amb-meta", version="2026.2")
    report = ingest(docs, settings, store, counting_embedder)
    assert len(report.warnings) == 1
    warning = report.warnings[0]
    assert warning.startswith("guies/sense-meta.md:")
    assert "no wiki metadata line" in warning and "guies/sense-meta" in warning
    assert store.all_metadata()["guies-sense-meta--a--00"]["version"] == "desconeguda"


def test_a_symlink_loop_is_a_warning_not_a_hang(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
) -> None:
    (docs / "admin" / "bucle").symlink_to("..", target_is_directory=True)
    report = ingest(docs, settings, store, counting_embedder)
    assert report.files == 3 and report.chunks == 4
    assert any("admin/bucle" in w and "loop" in w for w in report.warnings)


def test_cache_invalidation_after_a_change(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    md: Callable[..., str],
    write_page: PageWriter,
) -> None:
    ingest(docs, settings, store, counting_embedder)
    assert store.corpus_version() == 1

    cache = AnswerCache(settings, counting_embedder, store.db)
    for question, version in (("Què és Nubelia?", 1), ("Com pago?", 2)):
        probe = cache.probe(
            question, scopes=["global"], store_scope="global", context="c", corpus_version=version
        )
        cache.store(probe, {"resposta": question}, tokens=10, seconds=1.0)

    def cached_questions() -> set[str]:
        with cache.db.read() as conn:
            return set(conn.execute(select(cached_answers.c.question)).scalars())

    evict = Components.from_settings(settings, embedder=counting_embedder, db=store.db).corpus_listeners
    ingest(docs, settings, store, counting_embedder, corpus_listeners=evict)  # nothing changed: cache kept
    assert cached_questions() == {"Què és Nubelia?", "Com pago?"}

    write_page(
        "guia.md",
        md("Guia", [("Inici", "Benvinguts de nou."), ("Projectes", "Creeu un projecte nou.")]),
        url="wiki/guia",
        version="2026.2",
        date="2026-09-01",
    )
    report = ingest(docs, settings, store, counting_embedder, corpus_listeners=evict)
    assert report.corpus_version == 2
    assert cached_questions() == {"Com pago?"}


# -- bugs ------------------------------------------------------------------------------------------


def test_a_crash_before_the_version_bump_changes_nothing_and_the_next_ingest_repairs(
    docs: Path,
    corpus: dict[str, Path],
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    md: Callable[..., str],
    write_page: PageWriter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 14.1: chunk writes, deletes and the version bump are one transaction."""
    ingest(docs, settings, store, counting_embedder)
    before = snapshot(store)
    write_page(
        "guia.md",
        md("Guia", [("Inici", "Benvinguts a Nubelia 2."), ("Projectes", "Creeu un projecte nou.")]),
        url="wiki/guia",
        version="2026.2",
        date="2026-09-01",
    )
    corpus["slack.md"].unlink()

    def crash(*_: object) -> int:
        raise RuntimeError("killed before the version bump")

    with monkeypatch.context() as patch:
        patch.setattr("docubot.store.sql._bump_corpus_version", crash)
        with pytest.raises(RuntimeError, match="killed"):
            ingest(docs, settings, store, counting_embedder)
    assert snapshot(store) == before  # old chunks, old version

    report = ingest(docs, settings, store, counting_embedder)
    assert (report.updated, report.deleted, report.corpus_version) == (1, 1, 2)
    texts, _, version = snapshot(store)
    assert version == 2 and "Benvinguts a Nubelia 2." in texts["wiki-guia--inici--00"]
    assert "wiki-integracions-slack--connectar--00" not in texts


def test_pages_whose_urls_slugify_alike_keep_distinct_ids(
    docs: Path,
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    write_page: PageWriter,
) -> None:
    write_page("guies/primers-passos.md", "# A\n\n## Inici\n\nText de la primera pàgina.\n")
    write_page("guies-primers/passos.md", "# B\n\n## Inici\n\nText de la segona pàgina.\n")
    write_page("altres.md", "# C\n\n## Inici\n\nText de la tercera pàgina.\n")
    report = ingest(docs, settings, store, counting_embedder)
    assert store.count() == report.chunks == 3
    counting_embedder.reset()
    again = ingest(docs, settings, store, counting_embedder)
    assert again.embedded == 0


def test_force_keeps_the_chunks_of_an_unreadable_newest_version(
    docs: Path,
    settings: Settings,
    store: SQLStore,
    counting_embedder: CountingEmbedder,
    write_page: PageWriter,
) -> None:
    newest = write_page("api/autenticacio.md", AUTH_V2, url="wiki/api/auth", version="2026.2")
    write_page("arxiu/2026.1/api/autenticacio.md", AUTH_V1, url="wiki/api/auth", version="2026.1")
    write_page("guia.md", "# Guia\n\n## Inici\n\nBenvinguts.\n", url="wiki/guia", version="2026.2")
    ingest(docs, settings, store, counting_embedder)
    [kept] = store.get(["wiki-api-auth--tokens--00"])
    newest.write_bytes(b"\x00\x01binari")
    ingest(docs, settings, store, counting_embedder, force=True)
    assert store.get(["wiki-api-auth--tokens--00"]) == [kept]
    latest = Retriever(counting_embedder, store).search("Quants dies duren els tokens?", k=10).hits
    assert all(h.metadata["version"] != "2026.1" for h in latest)
