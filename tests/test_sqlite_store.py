"""SQLStore with real e5 vectors, on SQLite and PostgreSQL: self-retrieval, upsert/delete, filters,
cross-process reads, atomic apply."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from docubot.config import Settings
from docubot.db import Database
from docubot.embed.e5 import E5Embedder
from docubot.store.base import EmbeddingModelMismatch, Record, StoreError
from docubot.store.sql import SQLStore

TEXTS = {
    "auth--tokens--00": (
        "[Autenticació > Tokens]\nEls tokens d'accés caduquen als 30 dies i es poden revocar des del perfil."
    ),
    "auth--v2026-1--tokens--00": (
        "[Autenticació > Tokens]\nEls tokens d'accés caducaven als 90 dies a la versió antiga."
    ),
    "factures--pdf--00": "[Facturació > Factures]\nLes factures es generen el primer dia de cada mes en PDF.",
    "guia--intro--00": "[Guia]\nBenvinguts a Nubelia, l'eina per gestionar tasques en equip.",
}
VERSIONS = {
    "auth--tokens--00": ("2026.2", True),
    "auth--v2026-1--tokens--00": ("2026.1", False),
    "factures--pdf--00": ("2026.2", True),
    "guia--intro--00": ("desconeguda", True),
}


@pytest.fixture(params=["sqlite", "postgres"])
def store_settings(request: pytest.FixtureRequest, settings: Settings) -> Settings:
    """The data folder's SQLite file, or a fresh database on the test PostgreSQL server."""
    if request.param == "sqlite":
        return settings
    return settings.with_overrides(database_url=request.getfixturevalue("fresh_postgres_url"))


@pytest.fixture
def store(store_settings: Settings) -> Iterator[SQLStore]:
    with Database(store_settings) as db:
        yield SQLStore(db)


@pytest.fixture(scope="module")
def vectors(embedder: E5Embedder) -> dict[str, np.ndarray]:
    ids = list(TEXTS)
    return dict(zip(ids, embedder.embed_documents([TEXTS[i] for i in ids]), strict=True))


def metadata(chunk_id: str, text: str) -> dict[str, object]:
    version, latest = VERSIONS.get(chunk_id, ("2026.2", True))
    page = chunk_id.split("--")[0]
    return {
        "url": f"wiki/{page}",
        "page_title": page.capitalize(),
        "section_title": text.split("\n")[0].strip("[]").split(" > ")[-1],
        "section_path": text.split("\n")[0].strip("[]"),
        "version": version,
        "date": "2026-09-22",
        "source_path": f"{page}.md",
        "chunk_index": 0,
        "content_hash": f"hash-{chunk_id}-{len(text)}",
        "chunker_version": "1",
        "latest": latest,
    }


def record(chunk_id: str, vectors: dict[str, np.ndarray], text: str | None = None) -> Record:
    text = text or TEXTS[chunk_id]
    return Record(chunk_id, text, metadata(chunk_id, text), vectors[chunk_id])


@pytest.fixture
def filled(store: SQLStore, vectors: dict[str, np.ndarray]) -> SQLStore:
    store.upsert([record(i, vectors) for i in TEXTS])
    return store


def test_a_chunk_retrieves_itself(filled: SQLStore, vectors: dict[str, np.ndarray]) -> None:
    for chunk_id in TEXTS:
        [hit] = filled.query(vectors[chunk_id], k=1)
        assert hit.id == chunk_id
        assert hit.score >= 0.99
        assert hit.text == TEXTS[chunk_id]


def test_a_chunk_text_as_query_ranks_itself_first(
    filled: SQLStore, embedder: E5Embedder, vectors: dict[str, np.ndarray]
) -> None:
    """With the e5 `query:` prefix the self-score is lower (about 0.94-0.96) but still the best."""
    for chunk_id, text in TEXTS.items():
        hits = filled.query(embedder.embed_query(text), k=len(TEXTS))
        assert hits[0].id == chunk_id
        assert hits[0].score == pytest.approx(float(vectors[chunk_id] @ embedder.embed_query(text)), abs=1e-5)
        assert hits[0].score > 0.9
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_semantic_query_in_catalan(filled: SQLStore, embedder: E5Embedder) -> None:
    hits = filled.query(embedder.embed_query("Quan es generen les factures?"), k=1)
    assert hits[0].id == "factures--pdf--00"


def test_upsert_is_idempotent_and_replaces(filled: SQLStore, vectors: dict[str, np.ndarray]) -> None:
    assert filled.count() == len(TEXTS)
    filled.upsert([record(i, vectors) for i in TEXTS])
    assert filled.count() == len(TEXTS)
    new_text = "[Guia]\nBenvinguts a la nova Nubelia."
    filled.upsert([record("guia--intro--00", vectors, text=new_text)])
    assert filled.count() == len(TEXTS)
    [stored] = filled.get(["guia--intro--00"])
    assert stored.text == new_text
    assert stored.metadata == metadata("guia--intro--00", new_text)


def test_upsert_without_vector_is_refused(store: SQLStore) -> None:
    with pytest.raises(StoreError, match="no vector"):
        store.upsert([Record("x", "text", metadata("x", "[X]\ntext"))])
    assert store.count() == 0


def test_metadata_round_trip_keeps_types(filled: SQLStore) -> None:
    stored = filled.all_metadata()
    assert set(stored) == set(TEXTS)
    for chunk_id, meta in stored.items():
        assert meta == metadata(chunk_id, TEXTS[chunk_id])
        assert isinstance(meta["latest"], bool)
        assert isinstance(meta["chunk_index"], int)


def test_delete_and_list_ids(filled: SQLStore, vectors: dict[str, np.ndarray]) -> None:
    assert filled.list_ids() == set(TEXTS)
    assert filled.delete(["factures--pdf--00", "no-existeix"]) == 1
    assert filled.list_ids() == set(TEXTS) - {"factures--pdf--00"}
    assert filled.count() == len(TEXTS) - 1
    assert filled.get(["factures--pdf--00"]) == []
    assert all(h.id != "factures--pdf--00" for h in filled.query(vectors["factures--pdf--00"], k=10))
    assert filled.delete([]) == 0


def test_vectors_by_hash(filled: SQLStore, vectors: dict[str, np.ndarray]) -> None:
    wanted = metadata("auth--tokens--00", TEXTS["auth--tokens--00"])["content_hash"]
    found = filled.vectors_by_hash([wanted, "desconegut"])
    assert set(found) == {wanted}
    np.testing.assert_array_equal(found[wanted], vectors["auth--tokens--00"])


def test_filters_version_and_latest(filled: SQLStore, vectors: dict[str, np.ndarray]) -> None:
    query = vectors["auth--tokens--00"]
    old = filled.query(query, k=10, filters={"version": "2026.1"})
    assert [h.id for h in old] == ["auth--v2026-1--tokens--00"]
    latest = filled.query(query, k=10, filters={"latest": True})
    assert {h.id for h in latest} == set(TEXTS) - {"auth--v2026-1--tokens--00"}
    archived = filled.query(query, k=10, filters={"latest": False})
    assert [h.id for h in archived] == ["auth--v2026-1--tokens--00"]
    both = filled.query(query, k=10, filters={"version": ["2026.1", "2026.2"], "url": "wiki/auth"})
    assert {h.id for h in both} == {"auth--tokens--00", "auth--v2026-1--tokens--00"}
    assert filled.query(query, k=10, filters={"version": "1999.1"}) == []
    assert len(filled.query(query, k=2)) == 2


def test_unknown_filter_field_is_an_error(filled: SQLStore, vectors: dict[str, np.ndarray]) -> None:
    with pytest.raises(StoreError, match="unknown filter field 'idioma'"):
        filled.query(vectors["auth--tokens--00"], k=3, filters={"idioma": "ca"})


def test_query_on_an_empty_store(store: SQLStore, vectors: dict[str, np.ndarray]) -> None:
    assert store.query(vectors["auth--tokens--00"], k=3) == []


def test_a_second_instance_sees_the_first_ones_writes(
    store_settings: Settings, filled: SQLStore, vectors: dict[str, np.ndarray]
) -> None:
    other = SQLStore(Database(store_settings))
    try:
        assert other.count() == len(TEXTS)
        # `other` caches its search matrix; later writes by `filled` must still be seen.
        assert {h.id for h in other.query(vectors["guia--intro--00"], k=10)} == set(TEXTS)
        filled.delete(["guia--intro--00"])
        assert "guia--intro--00" not in {h.id for h in other.query(vectors["guia--intro--00"], k=10)}
        filled.upsert([record("guia--intro--00", vectors, text="[Guia]\nText renovat.")])
        [hit] = other.query(vectors["guia--intro--00"], k=1)
        assert (hit.id, hit.text) == ("guia--intro--00", "[Guia]\nText renovat.")
        # and the other way round
        other.delete(["factures--pdf--00"])
        assert "factures--pdf--00" not in {h.id for h in filled.query(vectors["factures--pdf--00"], k=10)}
    finally:
        other.db.close()


def test_embedding_model_mismatch(store_settings: Settings, store: SQLStore, embedder: E5Embedder) -> None:
    store.check_embedding_model(embedder.name, embedder.dim)
    store.check_embedding_model(embedder.name, embedder.dim)  # same model: fine
    with pytest.raises(EmbeddingModelMismatch, match="text-embedding-3-small"):
        store.check_embedding_model("text-embedding-3-small", 1536)
    with pytest.raises(EmbeddingModelMismatch):
        store.check_embedding_model(embedder.name, 768)
    reopened = SQLStore(Database(store_settings))
    try:
        with pytest.raises(EmbeddingModelMismatch):
            reopened.check_embedding_model("altre-model", embedder.dim)
    finally:
        reopened.db.close()
    assert issubclass(EmbeddingModelMismatch, StoreError)


def test_corpus_version_bumps_and_persists(store_settings: Settings, store: SQLStore) -> None:
    assert store.corpus_version() == 0
    assert store.bump_corpus_version() == 1
    assert store.bump_corpus_version() == 2
    assert store.corpus_version() == 2
    reopened = SQLStore(Database(store_settings))
    try:
        assert reopened.corpus_version() == 2
        assert reopened.bump_corpus_version() == 3
    finally:
        reopened.db.close()
    assert store.corpus_version() == 3


def test_apply_writes_deletes_and_bumps_together(filled: SQLStore, vectors: dict[str, np.ndarray]) -> None:
    before = filled.corpus_version()
    renamed = Record(
        "guia--intro--00", TEXTS["guia--intro--00"], {**metadata("guia--intro--00", "x"), "url": "u"}
    )
    version = filled.apply(
        [record("factures--pdf--00", vectors, text="[Facturació]\nNou text.")],
        [renamed],
        ["auth--tokens--00"],
    )
    assert version == filled.corpus_version() == before + 1
    assert filled.list_ids() == set(TEXTS) - {"auth--tokens--00"}
    [hit] = filled.query(vectors["factures--pdf--00"], k=1)
    assert hit.text == "[Facturació]\nNou text."
    assert filled.get(["guia--intro--00"])[0].metadata["url"] == "u"


def test_apply_is_all_or_nothing(
    filled: SQLStore, vectors: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure at the version bump (the last step) leaves chunks and version as they were."""
    before = (filled.all_metadata(), filled.corpus_version())
    monkeypatch.setattr("docubot.store.sql._bump_corpus_version", _crash)
    with pytest.raises(RuntimeError, match="crash"):
        filled.apply([record("factures--pdf--00", vectors, text="[F]\nNou.")], [], ["auth--tokens--00"])
    assert (filled.all_metadata(), filled.corpus_version()) == before
    assert filled.get(["factures--pdf--00"])[0].text == TEXTS["factures--pdf--00"]


def _crash(*_: object) -> int:
    raise RuntimeError("crash before the version bump")
