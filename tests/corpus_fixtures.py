"""Shared fixtures (loaded as a pytest plugin): the sample corpus ingested once per test session."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from sqlalchemy import delete, insert, select

# The default data folder is the user's (platformdirs honours XDG_DATA_HOME): set before docubot is
# imported, so a test that forgets DOCUBOT_HOME writes to a throw-away folder, never the user's.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="docubot-tests-data-")

from docubot.config import Settings
from docubot.db import Database
from docubot.embed.e5 import E5Embedder
from docubot.ingest.pipeline import ingest
from docubot.store.sql import SQLStore, chunks, meta

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DOCS = ROOT / "examples" / "docs_nubelia"
MODELS_DIR = Path(os.environ.get("DOCUBOT_MODELS_DIR", Path.home() / ".cache" / "docubot" / "models"))


@pytest.fixture(scope="session")
def embedder() -> E5Embedder:
    return E5Embedder()


@pytest.fixture(scope="session")
def sample_home(tmp_path_factory: pytest.TempPathFactory, embedder: E5Embedder) -> Path:
    """A data folder holding the sample Nubelia docs, ingested once for the whole session."""
    home = tmp_path_factory.mktemp("sample-home")
    settings = Settings(home=home)
    with Database(settings) as db:
        ingest(SAMPLE_DOCS, settings, SQLStore(db), embedder)
    return home


def with_sample_corpus(sample_settings: Settings, database_url: str) -> Settings:
    """`sample_settings` on the database at `database_url`, holding a copy of the sample corpus."""
    settings = sample_settings.with_overrides(database_url=database_url)
    columns = [c for c in chunks.c if c.name != "rowid"]
    with Database(sample_settings) as source, Database(settings) as target:
        with source.read() as conn:
            facts = conn.execute(select(meta)).mappings().all()
            rows = conn.execute(select(*columns).order_by(chunks.c.rowid)).mappings().all()
        with target.write() as conn:
            for table, copied in ((meta, facts), (chunks, rows)):
                conn.execute(delete(table))
                conn.execute(insert(table), [dict(r) for r in copied])
    return settings


@pytest.fixture
def sample_settings(sample_home: Path) -> Settings:
    """Settings on the shared sample store: no LLM, instant backoff, the machine's model folder, and
    no answer cache (tests share the store; the cache's own tests turn it on in a folder of their own)."""
    return Settings(
        home=sample_home, llm="none", llm_backoff_s=0.001, models_dir=MODELS_DIR, cache_enabled=False
    )


@pytest.fixture(scope="session")
def local_model():
    """The real local chat model (Qwen2.5-Coder-1.5B via llama.cpp), loaded once."""
    from docubot.llm.local import LocalModel

    settings = Settings(models_dir=MODELS_DIR)
    return LocalModel(settings.models_dir, settings.context_window, settings.cpu_threads())
