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
    """The vector store on the deployment's database."""
    from docubot.store.sql import SQLStore

    return SQLStore(db)
