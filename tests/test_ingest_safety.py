"""Ingest safety: no symlink escapes, a BM25 index safe under concurrent rebuilds, derived state that
never lags the stored chunks, prose under a `---` rule reported and kept as text."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.ingest.pipeline import ingest
from docubot.rag.answer import DocuBot
from docubot.rag.keyword import KeywordIndex
from docubot.store.sql import SQLStore

SECRET = "sk-live-7f3a9c"


@pytest.fixture
def hostile_docs(tmp_path: Path, docs: Path) -> Path:
    """A docs folder with one real page and three links that lead out of it."""
    outside = tmp_path / "servidor"
    outside.mkdir()
    (outside / "config.toml").write_text(f'llm_api_key = "{SECRET}"\n', encoding="utf-8")
    (outside / "privat").mkdir()
    (outside / "privat" / "notes.md").write_text("# Notes\n\n## Claus\n\nClau mestra: Xerofita.\n")
    (docs / "guia.md").write_text("# Guia\n\n## Factures\n\nLes factures es generen cada mes.\n")
    (docs / "config.md").symlink_to(outside / "config.toml")
    (docs / "passwd.md").symlink_to("/etc/passwd")
    (docs / "extern").symlink_to(outside / "privat", target_is_directory=True)
    return docs


ESCAPES = {"config.md", "extern", "passwd.md"}


def test_ingest_never_reads_through_a_link_out_of_the_docs_folder(
    hostile_docs: Path, settings: Settings, store: SQLStore, embedder
) -> None:
    report = ingest(hostile_docs, settings, store, embedder)
    texts = " ".join(r.text for r in store.get(store.list_ids()))
    assert "Les factures" in texts
    assert SECRET not in texts and "root:" not in texts and "Xerofita" not in texts
    assert [f.path for f in report.per_file] == ["guia.md"]
    skipped = report.summary()["skipped"]
    assert {s["path"] for s in skipped} == ESCAPES  # type: ignore[union-attr]
    assert all("outside the docs folder" in s["reason"] for s in skipped)  # type: ignore[union-attr]
    assert all(any(w.startswith(path) for w in report.warnings) for path in ESCAPES)


def test_the_cli_lists_every_skipped_link(
    hostile_docs: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCUBOT_HOME", str(settings.home))
    runner = CliRunner()
    result = runner.invoke(app, ["ingest", str(hostile_docs), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {s["path"] for s in report["skipped"]} == ESCAPES
    assert SECRET not in result.output
    plain = runner.invoke(app, ["ingest", str(hostile_docs), "--force"])
    assert plain.exit_code == 0, plain.output
    assert all(f"{path}: skipped, symlink to a path outside" in plain.stderr for path in ESCAPES)
    search = runner.invoke(app, ["search", "llm_api_key", "--json", "--mode", "bm25"])
    assert SECRET not in search.output


def test_a_link_inside_the_docs_folder_is_ingested(
    docs: Path, settings: Settings, store: SQLStore, embedder
) -> None:
    (docs / "guies").mkdir()
    (docs / "guies" / "real.md").write_text("# Real\n\n## Quasars\n\nEl botó Zirconi activa els quasars.\n")
    os.symlink("guies/real.md", docs / "drecera.md")
    report = ingest(docs, settings, store, embedder)
    assert report.skipped == []
    assert {r.metadata["source_path"] for r in store.get(store.list_ids())} == {"drecera.md", "guies/real.md"}


# -- the BM25 index under concurrent rebuilds ----------------------------------------------------------


@pytest.fixture
def ingested(docs: Path, settings: Settings, store: SQLStore, embedder) -> Settings:
    """Two small pages ingested into `store`."""
    (docs / "a.md").write_text("# Guia\n\n## Quasars\n\nEl botó Zirconi activa els quasars.\n")
    (docs / "b.md").write_text("# Altra\n\n## Pulsars\n\nEls pulsars es configuren a Preferències.\n")
    ingest(docs, settings, store, embedder)
    return settings


def test_searches_never_fail_while_others_rebuild_the_index(ingested: Settings) -> None:
    """An ingest and a server both rebuild while two readers search: no error, every search finds."""
    errors: list[str] = []
    rebuilding = threading.Event()

    def rebuild(times: int) -> None:
        db = Database(ingested)
        store = SQLStore(db)
        index = KeywordIndex(ingested.keyword_index_dir)
        try:
            for _ in range(times):
                store.bump_corpus_version()  # the corpus moves; each rebuild follows it
                index.rebuild(store)
        except Exception as exc:  # every failure is the finding
            errors.append(f"rebuild: {exc!r}")
        finally:
            db.close()

    def search() -> None:
        db = Database(ingested)
        store = SQLStore(db)
        index = KeywordIndex(ingested.keyword_index_dir)
        try:
            while rebuilding.is_set():
                if not index.scores(store, "Zirconi"):
                    errors.append("search: no hit")
        except Exception as exc:
            errors.append(f"search: {exc!r}")
        finally:
            db.close()

    rebuilding.set()
    writers = [threading.Thread(target=rebuild, args=(25,)) for _ in range(2)]
    readers = [threading.Thread(target=search) for _ in range(2)]
    for thread in writers + readers:
        thread.start()
    for thread in writers:
        thread.join()
    rebuilding.clear()
    for thread in readers:
        thread.join()
    assert errors == []
    entries = sorted(p.name for p in ingested.keyword_index_dir.iterdir())
    assert len([e for e in entries if e.startswith("index-")]) == 1, entries
    assert not [e for e in entries if e.startswith("building-")], entries


def test_a_reader_retries_when_the_published_index_vanishes_mid_load(
    ingested: Settings, store: SQLStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pointer names a folder a rebuild removes before the reader opens it: the reader reads the
    pointer again and loads the new index, without rebuilding."""
    import docubot.rag.keyword as keyword

    stale = json.loads((ingested.keyword_index_dir / "current.json").read_text())
    store.bump_corpus_version()
    KeywordIndex(ingested.keyword_index_dir).rebuild(store)  # removes the folder `stale` names
    first_read = iter([stale])
    original = keyword._read_pointer
    monkeypatch.setattr(keyword, "_read_pointer", lambda folder: next(first_read, None) or original(folder))
    monkeypatch.setattr(KeywordIndex, "_build", lambda *_: pytest.fail("rebuilt instead of reloading"))
    index = KeywordIndex(ingested.keyword_index_dir)
    assert index.scores(store, "Zirconi")


# -- derived state never lags the chunks ----------------------------------------------------------------


def test_a_crash_after_the_chunks_are_written_never_leaves_a_stale_index_or_answer(
    docs: Path,
    ingested: Settings,
    db: Database,
    store: SQLStore,
    embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = ingested.with_overrides(cache_enabled=True, llm="none")
    bot = DocuBot(settings, embedder=embedder, store=store, chat_model=None, db=db)
    question = "Quin botó activa els quasars?"
    assert "Zirconi" in bot.ask(question, mode="bm25").answer.resposta
    assert bot.ask(question, mode="bm25").cache == "exact"

    (docs / "a.md").write_text("# Guia\n\n## Quasars\n\nEl botó Titani activa els quasars.\n")

    def crash(*_: object) -> None:
        raise RuntimeError("killed after the chunks and the version were written")

    with monkeypatch.context() as patch:
        patch.setattr(KeywordIndex, "rebuild", crash)
        with pytest.raises(RuntimeError, match="killed"):
            ingest(docs, settings, store, embedder)
    pointer = json.loads((settings.keyword_index_dir / "current.json").read_text())
    assert pointer["corpus_version"] < store.corpus_version()  # the published index lags on disk…

    after = bot.ask(question, mode="bm25")  # …but never in use: no stale cache hit, no stale index
    assert after.cache is None
    assert "Titani" in after.answer.resposta and "Zirconi" not in after.answer.resposta
    assert not bot.keyword_index.scores(store, "Zirconi")
    assert KeywordIndex(settings.keyword_index_dir).scores(store, "Titani")


def test_a_long_lived_index_follows_another_process_ingest(
    docs: Path, ingested: Settings, store: SQLStore, embedder
) -> None:
    serving = KeywordIndex(ingested.keyword_index_dir)
    assert serving.scores(store, "Zirconi")
    (docs / "c.md").write_text("# Nova\n\n## Magnetars\n\nEls magnetars es creen al tauler.\n")
    with Database(ingested) as other_process:
        ingest(docs, ingested, SQLStore(other_process), embedder)
    assert serving.scores(store, "magnetars")


# -- false headings -------------------------------------------------------------------------------------


def test_ingest_reports_underlined_prose_and_keeps_the_real_sections(
    docs: Path, settings: Settings, store: SQLStore, embedder
) -> None:
    (docs / "upgrade.md").write_text(
        "# Upgrading\n\n## Before you start\n\nBack up first.\n\n[NOTE]\n----\n"
        "On a production cluster, use this command with caution.\n----\n\n## Rolling back\n\nRun it.\n"
    )
    report = ingest(docs, settings, store, embedder)
    titles = {r.metadata["section_title"] for r in store.get(store.list_ids())}
    assert titles == {"Before you start", "Rolling back"}
    assert any(
        w.startswith("upgrade.md: 2 line(s) underlined with ---/=== read as text") and "[NOTE]" in w
        for w in report.warnings
    )
