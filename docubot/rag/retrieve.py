"""Retrieval: the question as a query vector, top-k chunks, version-aware filters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docubot.embed import Embedder
from docubot.store import Hit, VectorStore

LATEST = "latest"
ALL_VERSIONS = "all"


def build_filters(version: str = LATEST, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Store filters: `latest` keeps the newest version of each page, `all` every version,
    anything else that exact version; `extra` adds equality filters on other metadata fields."""
    filters: dict[str, Any] = dict(extra or {})
    if version == LATEST:
        filters.setdefault("latest", True)
    elif version != ALL_VERSIONS:
        filters["version"] = version
    return filters


def retrieve(
    question: str,
    embedder: Embedder,
    store: VectorStore,
    k: int,
    version: str = LATEST,
    filters: Mapping[str, Any] | None = None,
) -> list[Hit]:
    """The `k` chunks most similar to `question`, best first."""
    return store.query(embedder.embed_query(question), k, build_filters(version, filters))
