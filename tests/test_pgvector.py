"""PostgreSQL + pgvector: searches in SQL give what SQLite + numpy gives on the sample corpus
(`docubot eval retrieval`, refusal decisions), HNSW past the configured size, vectors copied in as
rows are filled in, a server without pgvector is named, and two ingests into one database."""

from __future__ import annotations

import json
import shutil
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.embed.e5 import E5Embedder
from docubot.eval.retrieval import RetrievalReport, run_cases
from docubot.eval.sets import load_retrieval_set
from docubot.ingest.pipeline import IngestBusy, ingest
from docubot.rag.retrieve import Retriever
from docubot.rag.threshold import refusal_threshold
from docubot.store import StoreError, open_store
from docubot.store.pgvector import HNSW_INDEX, PgVectorStore
from docubot.store.sql import SQLStore
from tests.corpus_fixtures import SAMPLE_DOCS, with_sample_corpus

ROOT = Path(__file__).resolve().parents[1]
EVAL_SET = ROOT / "evals" / "nubelia"


def new_database(server_url: str) -> str:
    name = f"t{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server_url.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(scope="module")
def pg_sample(postgres_url: str, sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The sample store's rows copied into a database of its own (the same vectors, not embedded
    again: what differs is only the search), opened once through `open_store` (pgvector)."""
    home = tmp_path_factory.mktemp("pg") / "home"
    shutil.copytree(sample_home, home)  # the keyword index
    settings = with_sample_corpus(Settings(home=home), new_database(postgres_url))
    with Database(settings) as db:
        assert isinstance(open_store(db), PgVectorStore)
    return settings


def eval_retrieval(home: Path, database_url: str | None, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("DOCUBOT_HOME", str(home))
    if database_url:
        monkeypatch.setenv("DOCUBOT_DATABASE_URL", database_url)
    else:
        monkeypatch.delenv("DOCUBOT_DATABASE_URL", raising=False)
    reports = str(home / "reports")
    command = ["eval", "retrieval", "--set", str(EVAL_SET), "--reports", reports, "--mode", "all", "--json"]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def dense_report(settings: Settings, embedder: E5Embedder) -> RetrievalReport:
    with Database(settings) as db:
        return run_cases(load_retrieval_set(EVAL_SET), Retriever(embedder, open_store(db)))


def test_eval_retrieval_and_refusals_are_the_same_on_both_backends(
    sample_home: Path,
    pg_sample: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    embedder: E5Embedder,
) -> None:
    home = tmp_path / "sqlite-home"
    shutil.copytree(sample_home, home)
    on_sqlite = eval_retrieval(home, None, monkeypatch)
    on_postgres = eval_retrieval(pg_sample.home, pg_sample.database_url, monkeypatch)
    assert set(on_sqlite) == {"dense", "bm25", "hybrid"}
    assert on_postgres == on_sqlite
    assert on_sqlite["dense"]["recall@5"] > 0.5

    sqlite_settings = Settings(home=home)
    threshold = refusal_threshold(sqlite_settings, embedder.name)
    assert threshold == refusal_threshold(pg_sample, embedder.name)
    sqlite_cases, pg_cases = dense_report(sqlite_settings, embedder), dense_report(pg_sample, embedder)
    refused = [o.best < threshold for o in sqlite_cases.outcomes]
    assert [o.best < threshold for o in pg_cases.outcomes] == refused
    assert 0 < sum(refused) < len(refused)
    for ours, theirs in zip(sqlite_cases.outcomes, pg_cases.outcomes, strict=True):
        assert ours.scores == pytest.approx(theirs.scores, abs=1e-5)


@pytest.fixture
def copied_sample(sample_home: Path, fresh_postgres_url: str) -> Settings:
    """The sample corpus copied in as rows (blobs only, no `embedding_vec`), as a data move would."""
    return with_sample_corpus(Settings(home=sample_home), fresh_postgres_url)


def test_rows_copied_in_get_their_vectors_and_hnsw_past_the_threshold(
    copied_sample: Settings, embedder: E5Embedder
) -> None:
    exact = copied_sample.with_overrides(pg_hnsw_min_rows=100_000)
    hnsw = copied_sample.with_overrides(
        pg_hnsw_min_rows=10, pg_ef_search=200, pg_hnsw_m=24, pg_hnsw_ef_construction=100
    )
    with Database(exact) as db:
        store = open_store(db)
        with db.read() as conn:
            missing = conn.exec_driver_sql("SELECT count(*) FROM chunks WHERE embedding_vec IS NULL")
            assert missing.scalar_one() == 0
            assert store._index_dim(conn) is None  # type: ignore[attr-defined]
        questions = [case.question for case in load_retrieval_set(EVAL_SET)][:20]
        expected = [[h.id for h in store.query(embedder.embed_query(q), 5)] for q in questions]
    with Database(hnsw) as db:
        store = open_store(db)
        with db.read() as conn:
            assert store._index_dim(conn) == embedder.dim  # type: ignore[attr-defined]
            definition = conn.exec_driver_sql(
                f"SELECT indexdef FROM pg_indexes WHERE indexname = '{HNSW_INDEX}'"
            ).scalar_one()
            assert "m='24'" in definition and "ef_construction='100'" in definition, definition
            conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
            plan = "\n".join(
                r[0]
                for r in conn.exec_driver_sql(
                    f"EXPLAIN SELECT id FROM chunks ORDER BY (embedding_vec::vector({embedder.dim})) "
                    f"<=> (SELECT embedding_vec FROM chunks LIMIT 1)::vector({embedder.dim}) LIMIT 5"
                )
            )
            assert HNSW_INDEX in plan
        got = [[h.id for h in store.query(embedder.embed_query(q), 5)] for q in questions]
    assert got == expected  # ef_search 200 over ~the whole sample corpus: the same as exact


def test_filters_in_sql(pg_sample: Settings, embedder: E5Embedder) -> None:
    with Database(pg_sample) as db:
        store = open_store(db)
        vector = embedder.embed_query("Com exporto un informe a PDF?")
        everything = store.query(vector, 200)
        latest = store.query(vector, 200, {"latest": True})
        some_page = everything[0].metadata["source_path"]
        on_page = store.query(vector, 200, {"source_path": [some_page]})
        sims = store.similarities(vector, [h.id for h in everything[:3]])
    assert latest and all(h.metadata["latest"] for h in latest)
    assert [h.id for h in latest] == [h.id for h in everything if h.metadata["latest"]]
    assert {h.metadata["source_path"] for h in on_page} == {some_page}
    assert sims == pytest.approx({h.id: h.score for h in everything[:3]}, abs=1e-6)
    with pytest.raises(StoreError, match="unknown filter"):
        store.query(vector, 5, {"colour": "red"})


def test_postgresql_without_pgvector_is_named_on_open(fresh_postgres_url: str, settings: Settings) -> None:
    settings = settings.with_overrides(database_url=fresh_postgres_url)
    with Database(settings) as db, db.write() as conn:
        conn.exec_driver_sql("DROP EXTENSION vector CASCADE")
    with Database(settings) as db:
        with pytest.raises(StoreError, match=r"no pgvector.*CREATE EXTENSION vector"):
            open_store(db)
        SQLStore(db).count()  # the rest of the database is still usable


class PausingEmbedder:
    """The real embedder, which stops at its first batch until told to go on."""

    def __init__(self, inner: E5Embedder) -> None:
        self.inner = inner
        self.embedding, self.go_on = threading.Event(), threading.Event()

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        self.embedding.set()
        assert self.go_on.wait(120)
        return self.inner.embed_documents(texts)


@pytest.fixture
def two_homes(tmp_path: Path, fresh_postgres_url: str) -> Iterator[tuple[Settings, Settings]]:
    """Two data folders (two machines) on one PostgreSQL database."""
    yield tuple(  # type: ignore[misc]
        Settings(home=tmp_path / name, database_url=fresh_postgres_url) for name in ("a", "b")
    )


def test_two_ingests_into_one_database_one_is_refused(
    two_homes: tuple[Settings, Settings], embedder: E5Embedder, tmp_path: Path
) -> None:
    first, second = two_homes
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS / "integracions", docs / "integracions")  # two pages: enough to pause in
    pausing = PausingEmbedder(embedder)
    outcome: dict[str, object] = {}

    def run_first() -> None:
        with Database(first) as db:
            outcome["report"] = ingest(docs, first, open_store(db), pausing)

    thread = threading.Thread(target=run_first)
    thread.start()
    try:
        assert pausing.embedding.wait(60)
        with Database(second) as db, pytest.raises(IngestBusy, match="another ingest is running on database"):
            ingest(docs, second, open_store(db), embedder)  # another folder: only the database lock stops it
    finally:
        pausing.go_on.set()
        thread.join(120)
    with Database(second) as db:
        store = open_store(db)
        report = outcome["report"]
        assert store.count() == report.chunks > 0  # type: ignore[attr-defined]
        assert store.corpus_version() == 1
        again = ingest(docs, second, store, embedder)  # the lock was released
    assert (again.added, again.embedded) == (0, 0)


def test_docubot_db_start_status_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCUBOT_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    assert runner.invoke(app, ["db", "status"]).exit_code == 1
    started = runner.invoke(app, ["db", "start"])
    try:
        assert started.exit_code == 0, started.output
        line = started.stdout.strip()
        assert line.startswith("export DOCUBOT_DATABASE_URL=postgresql://postgres@127.0.0.1:")
        url = line.split("=", 1)[1]
        assert runner.invoke(app, ["db", "status"]).stdout.strip() == line
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
            assert conn.execute("SELECT '[1,0]'::vector <=> '[0,1]'::vector").fetchone() == (1.0,)
    finally:
        assert runner.invoke(app, ["db", "stop"]).stdout.strip() == "stopped"
    assert runner.invoke(app, ["db", "status"]).stdout.strip() == "not running"
    assert (tmp_path / "home" / "postgres" / "data" / "PG_VERSION").exists()
