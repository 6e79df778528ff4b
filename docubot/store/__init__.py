"""Vector stores behind one interface; `open_store` opens the configured one."""

from __future__ import annotations

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
    "open_store",
    "validate_filters",
    "validate_filters_for",
]


def open_store(db: Database) -> VectorStore:
    """The vector store on the deployment's database (PostgreSQL: pgvector, searched in SQL)."""
    from docubot.store.sql import SQLStore

    if not db.is_sqlite:
        from docubot.store.pgvector import PgVectorStore

        return PgVectorStore(db)
    return SQLStore(db)
