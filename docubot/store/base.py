"""The vector-store interface: exactly the operations DocuBot needs, whatever the backend."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

METADATA_FIELDS = (
    "url",
    "page_title",
    "section_title",
    "section_path",
    "version",
    "date",
    "source_path",
    "chunk_index",
    "content_hash",
    "chunker_version",
    "latest",
)
"""Metadata stored beside every vector; filters may name any of them."""

FilterValue = str | int | bool | Sequence[str | int | bool]
Filters = Mapping[str, FilterValue]


class StoreError(Exception):
    """The store cannot do what was asked (bad filter, wrong embedding model…)."""


class EmbeddingModelMismatch(StoreError):
    """Vectors from one model must never be compared with another's."""


@dataclass(frozen=True)
class Record:
    """A chunk as stored: id, text, metadata and (when loaded) its vector."""

    id: str
    text: str
    metadata: dict[str, Any]
    vector: np.ndarray | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Hit:
    """A search result: the record and its cosine similarity to the query."""

    id: str
    text: str
    metadata: dict[str, Any]
    score: float
    """Cosine similarity to the question (whatever ranked the hit): the refusal signal."""
    keyword_score: float | None = None
    """BM25 score, when keyword search took part."""


class VectorStore(Protocol):
    def upsert(self, records: Sequence[Record]) -> None:
        """Insert or replace by id; every record must carry a vector."""
        ...

    def update_metadata(self, records: Sequence[Record]) -> None:
        """Replace metadata (not text or vector) of existing ids."""
        ...

    def query(self, vector: np.ndarray, k: int, filters: Filters | None = None) -> list[Hit]:
        """The `k` most similar records by cosine, best first, among those matching `filters`."""
        ...

    def similarities(self, vector: np.ndarray, ids: Iterable[str]) -> dict[str, float]:
        """Cosine similarity of `vector` to each of these stored ids."""
        ...

    def get(self, ids: Iterable[str]) -> list[Record]:
        """Records by id, without vectors; unknown ids are left out."""
        ...

    def all_metadata(self) -> dict[str, dict[str, Any]]:
        """id → metadata for every stored record."""
        ...

    def vectors_by_hash(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """content_hash → vector for stored records, so unchanged text is never embedded twice."""
        ...

    def list_ids(self) -> set[str]: ...

    def delete(self, ids: Iterable[str]) -> int:
        """Remove these ids; returns how many existed."""
        ...

    def count(self) -> int: ...

    def check_embedding_model(self, name: str, dim: int) -> None:
        """Record the model on first use; raise EmbeddingModelMismatch if another one wrote here."""
        ...

    def corpus_version(self) -> int: ...

    def bump_corpus_version(self) -> int:
        """Mark the corpus as changed; returns the new version."""
        ...

    def apply(self, upserts: Sequence[Record], metadata: Sequence[Record], deletes: Iterable[str]) -> int:
        """`upsert`, `update_metadata`, `delete` and `bump_corpus_version` as one atomic change:
        after a crash either all of it or none of it is stored. Returns the new corpus version."""
        ...

    def close(self) -> None: ...


def validate_filters(filters: Filters | None) -> dict[str, list[str]]:
    """Filters as {field: [allowed values as strings]}; unknown fields are an error."""
    out: dict[str, list[str]] = {}
    for name, value in (filters or {}).items():
        if name not in METADATA_FIELDS:
            raise StoreError(f"unknown filter field {name!r}; known: {', '.join(METADATA_FIELDS)}")
        values = value if isinstance(value, list | tuple | set) else [value]
        out[name] = [_as_text(v) for v in values]
    return out


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def validate_filters_for(filters: Filters | None) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate telling whether a record's metadata passes `filters`."""
    wanted = validate_filters(filters)

    def matches(metadata: Mapping[str, Any]) -> bool:
        return all(_as_text(metadata.get(name)) in values for name, values in wanted.items())

    return matches
