"""Vector stores behind one interface; `open_store` opens the configured one."""

from __future__ import annotations

from pathlib import Path

from docubot.db import Database
from docubot.store.base import (
    METADATA_FIELDS,
    EmbeddingModelMismatch,
    Filters,
    Hit,
    Record,
    StoreError,
    VectorStore,
    validate_filters,
    validate_filters_for,
)

__all__ = [
    "METADATA_FIELDS",
    "EmbeddingModelMismatch",
    "Filters",
    "Hit",
    "Record",
    "StoreError",
    "VectorStore",
    "open_chroma",
    "open_store",
    "validate_filters",
    "validate_filters_for",
]


def open_store(db: Database) -> VectorStore:
    """The configured vector store (`DOCUBOT_VECTOR_STORE`): `sqlite`, the default, keeps chunks in the
    deployment's database `db` (SQLite or PostgreSQL); `chroma` in a Chroma folder or server."""
    settings = db.settings
    if settings.vector_store == "chroma":
        return open_chroma(settings.chroma_dir, settings.chroma_url)
    from docubot.store.sql import SQLStore

    return SQLStore(db)


def open_chroma(path: Path, url: str | None) -> VectorStore:
    """Chroma at `url` (a server) when given, else embedded in `path`; StoreError if unusable."""
    try:
        from docubot.store.chroma import ChromaStore
    except ImportError as exc:
        raise StoreError("the Chroma store needs chromadb: pip install 'docubot[chroma]'") from exc
    return ChromaStore.server(url) if url else ChromaStore.embedded(path)
