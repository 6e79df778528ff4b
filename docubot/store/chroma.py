"""Chroma as the vector store: embedded (a folder) or client/server (`chroma run`), same interface.

DocuBot embeds the texts itself, so the collection has no embedding function: Chroma never loads or
downloads a model. The collection uses cosine space; a hit's score is 1 − cosine distance.

Corpus facts (embedding model and dimension, corpus version) live in the collection's metadata.
Chroma has no transactions, so changes are journalled there instead: the first write after a
version opens the journal (`pending_version`: the version that write belongs to) and the version
bump closes it. A writer that dies half-way leaves the journal open; the next writer (`apply` or
`check_embedding_model`, which every ingest calls before writing) closes it by moving the corpus
version on, so caches and the keyword index keyed by the old version are never reused. Each record
is written whole (text, metadata, vector together), so the next ingest's plan sees exactly which
chunks are missing, stale or orphaned and writes only those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from docubot.store.base import (
    METADATA_FIELDS,
    EmbeddingModelMismatch,
    Filters,
    Hit,
    Record,
    StoreError,
    validate_filters,
    validate_filters_for,
)

COLLECTION = "docubot"
PAGE = 1000
"""Records per Chroma call (its own cap is a few thousand)."""
OVERFETCH = 3
"""A filtered query first searches this many times k unfiltered (see `query`)."""
_MODEL, _DIM, _VERSION, _PENDING = "embedding_model", "embedding_dim", "corpus_version", "pending_version"


class ChromaStore:
    """Chunks in one Chroma collection; exact cosine for `similarities`, Chroma's HNSW for `query`."""

    def __init__(self, connect: Callable[[], Any], where: str) -> None:
        """`connect()` makes the Chroma client; it is called on first use, so that opening never fails
        and an unreachable server is one StoreError naming `where`, raised by the first operation."""
        self.where = where
        self._connect = connect
        self._client: Any = None
        self._handle: Any = None

    @classmethod
    def embedded(cls, path: Path) -> ChromaStore:
        """A persistent local Chroma in `path` (created if missing)."""

        def connect() -> Any:
            import chromadb

            path.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(path), settings=_client_settings())

        return cls(connect, str(path))

    @classmethod
    def server(cls, url: str) -> ChromaStore:
        """A Chroma server (`chroma run`) at `url`, e.g. http://127.0.0.1:8000."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise StoreError(f"DOCUBOT_CHROMA_URL must look like http://host:port, not {url!r}")
        host, ssl = parts.hostname, parts.scheme == "https"
        port = parts.port or (443 if ssl else 8000)

        def connect() -> Any:
            import chromadb

            return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=_client_settings())

        return cls(connect, url)

    @property
    def _collection(self) -> Any:
        return self._open()[1]

    def _open(self) -> tuple[Any, Any]:
        """(client, collection), connecting on first use."""
        if self._handle is None:
            try:
                self._client = self._connect()
                self._handle = self._client.get_or_create_collection(
                    COLLECTION, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
                )
            except Exception as exc:  # chromadb raises ValueError/httpx errors for an unreachable server
                raise StoreError(f"cannot open the Chroma store at {self.where}: {exc}") from exc
        return self._client, self._handle

    # -- writes ---------------------------------------------------------------------------------
    def upsert(self, records: Sequence[Record]) -> None:
        for record in records:
            if record.vector is None:
                raise StoreError(f"record {record.id} has no vector")
        if not records:
            return
        self._open_journal()
        for part in _pages(records):
            self._collection.upsert(
                ids=[r.id for r in part],
                embeddings=np.vstack([np.asarray(r.vector, dtype=np.float32) for r in part]),
                documents=[r.text for r in part],
                metadatas=[_to_chroma(r.metadata) for r in part],
            )

    def update_metadata(self, records: Sequence[Record]) -> None:
        if not records:
            return
        self._open_journal()
        for part in _pages(records):
            self._collection.update(
                ids=[r.id for r in part], metadatas=[_to_chroma(r.metadata) for r in part]
            )

    def delete(self, ids: Iterable[str]) -> int:
        existing = [
            i for part in _pages(list(ids)) for i in self._collection.get(ids=part, include=[])["ids"]
        ]
        if not existing:
            return 0
        self._open_journal()
        for part in _pages(existing):
            self._collection.delete(ids=part)
        return len(existing)

    def apply(self, upserts: Sequence[Record], metadata: Sequence[Record], deletes: Iterable[str]) -> int:
        """Upserts, metadata updates, deletes, then the version bump, journalled (see the module
        docstring): after a crash the next writer finishes the version change. Returns the new version."""
        self._recover()
        self.upsert(upserts)
        self.update_metadata(metadata)
        self.delete(deletes)
        return self.bump_corpus_version()

    # -- reads ----------------------------------------------------------------------------------
    def query(self, vector: np.ndarray, k: int, filters: Filters | None = None) -> list[Hit]:
        """Filters are applied after an unfiltered search of `OVERFETCH`×k when that finds k matches
        (DocuBot's usual `latest` filter keeps most chunks); else Chroma filters (`where`) itself."""
        if k <= 0:
            return []
        matches = validate_filters_for(filters)
        wanted = validate_filters(filters)
        if wanted:
            fetched = self._search(vector, OVERFETCH * k, None)
            hits = [h for h in fetched if matches(h.metadata)]
            if len(hits) >= k or len(fetched) < OVERFETCH * k:  # enough, or the whole collection seen
                return hits[:k]
        return self._search(vector, k, _where(wanted))

    def _search(self, vector: np.ndarray, k: int, where: dict[str, Any] | None) -> list[Hit]:
        result = self._collection.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32)],
            n_results=k,
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        rows = zip(
            result["ids"][0],
            result["documents"][0],
            result["metadatas"][0],
            result["distances"][0],
            strict=True,
        )
        return [Hit(i, text, _from_chroma(meta), 1.0 - float(distance)) for i, text, meta, distance in rows]

    def similarities(self, vector: np.ndarray, ids: Iterable[str]) -> dict[str, float]:
        found, vectors = self._vectors(list(ids))
        if not found:
            return {}
        query = np.asarray(vector, dtype=np.float32)
        scores = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query))
        return {chunk_id: float(s) for chunk_id, s in zip(found, scores, strict=True)}

    def get(self, ids: Iterable[str]) -> list[Record]:
        out: list[Record] = []
        for part in _pages(list(ids)):
            got = self._collection.get(ids=part, include=["documents", "metadatas"])
            out.extend(
                Record(i, text, _from_chroma(meta))
                for i, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
            )
        return out

    def all_metadata(self) -> dict[str, dict[str, Any]]:
        return {
            i: _from_chroma(meta)
            for got in self._scan(["metadatas"])
            for i, meta in zip(got["ids"], got["metadatas"], strict=True)
        }

    def vectors_by_hash(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for part in _pages(sorted(set(hashes))):
            got = self._collection.get(
                where={"content_hash": {"$in": part}}, include=["metadatas", "embeddings"]
            )
            for meta, vector in zip(got["metadatas"], got["embeddings"], strict=True):
                out[str(meta["content_hash"])] = np.asarray(vector, dtype=np.float32)
        return out

    def list_ids(self) -> set[str]:
        return {i for got in self._scan([]) for i in got["ids"]}

    def count(self) -> int:
        return int(self._collection.count())

    # -- corpus facts ---------------------------------------------------------------------------
    def check_embedding_model(self, name: str, dim: int) -> None:
        facts = self._facts()
        if _MODEL not in facts:
            self._set_facts({**facts, _MODEL: name, _DIM: dim})
            return
        if facts[_MODEL] != name or facts.get(_DIM) != dim:
            raise EmbeddingModelMismatch(
                f"the Chroma collection at {self.where} holds vectors of {facts[_MODEL]} "
                f"(dim {facts.get(_DIM)}), not {name} (dim {dim}). Use the same embedder, or another "
                "DOCUBOT_CHROMA_PATH / collection, or re-ingest into an empty one."
            )
        self._recover()

    def corpus_version(self) -> int:
        return int(self._facts().get(_VERSION, 0))

    def bump_corpus_version(self) -> int:
        """The next version; closes the journal opened by this version's writes."""
        facts = self._facts()
        version = max(int(facts.get(_VERSION, 0)) + 1, int(facts.get(_PENDING, 0)))
        self._set_facts({**facts, _VERSION: version, _PENDING: 0})
        return version

    def interrupted(self) -> bool:
        """Whether writes were made that no version bump has closed yet (a writer died, or is busy)."""
        return bool(self._facts().get(_PENDING, 0))

    def close(self) -> None:
        """Nothing to release: the client holds no connection of its own."""

    # -- internals ------------------------------------------------------------------------------
    def _facts(self) -> dict[str, Any]:
        """The collection's metadata, read afresh (another process may have changed it)."""
        client, _ = self._open()
        collection = client.get_collection(COLLECTION, embedding_function=None)
        return dict(collection.metadata or {})

    def _set_facts(self, facts: dict[str, Any]) -> None:
        self._collection.modify(metadata=facts)

    def _open_journal(self) -> None:
        facts = self._facts()
        if not facts.get(_PENDING):
            self._set_facts({**facts, _PENDING: int(facts.get(_VERSION, 0)) + 1})

    def _recover(self) -> None:
        """Close a journal left open by a writer that died: move the corpus version on."""
        if self.interrupted():
            self.bump_corpus_version()

    def _vectors(self, ids: list[str]) -> tuple[list[str], np.ndarray]:
        found: list[str] = []
        vectors: list[np.ndarray] = []
        for part in _pages(ids):
            got = self._collection.get(ids=part, include=["embeddings"])
            found += got["ids"]
            vectors += [np.asarray(v, dtype=np.float32) for v in got["embeddings"]]
        return found, np.vstack(vectors) if vectors else np.empty((0, 0), dtype=np.float32)

    def _scan(self, include: list[str]) -> Iterator[dict[str, Any]]:
        offset = 0
        while True:
            got = self._collection.get(include=include, limit=PAGE, offset=offset)
            if not got["ids"]:
                return
            yield got
            offset += len(got["ids"])


def _client_settings() -> Any:
    from chromadb.config import Settings as ChromaSettings

    return ChromaSettings(anonymized_telemetry=False)


def _pages(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), PAGE):
        yield items[start : start + PAGE]


def _to_chroma(metadata: dict[str, Any]) -> dict[str, Any]:
    """Every metadata field; None stays None (Chroma drops the key, so an update clears it)."""
    return {name: metadata.get(name) for name in METADATA_FIELDS}


def _from_chroma(metadata: dict[str, Any] | None) -> dict[str, Any]:
    data = {name: (metadata or {}).get(name) for name in METADATA_FIELDS}
    data["latest"] = bool(data["latest"]) if data["latest"] is not None else True
    return data


def _where(wanted: dict[str, list[str]]) -> dict[str, Any] | None:
    """validate_filters' {field: [texts]} as a Chroma `where`, values typed as they are stored."""
    clauses = [{name: {"$in": [_typed(name, v) for v in values]}} for name, values in wanted.items()]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _typed(name: str, text: str) -> Any:
    if name == "latest":
        return text in ("1", "True", "true")
    if name == "chunk_index":
        return int(text) if text.lstrip("-").isdigit() else -1
    return text
