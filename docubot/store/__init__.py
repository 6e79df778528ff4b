"""Vector stores behind one interface; `open_store` opens the configured one."""

from __future__ import annotations

from docubot.config import Settings
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


def open_store(settings: Settings) -> VectorStore:
    from docubot.store.sqlite import SQLiteStore

    return SQLiteStore(settings.db_path)
