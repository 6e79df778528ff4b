"""The backend-agnostic store contract, run on every backend: SQLite and Chroma (embedded).

Real e5 vectors, real stores in tmp_path. Each test gets `store` (a fresh store of one backend) and
`reopen` (a second, independent instance on the same data, like another process would open).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest

from docubot.config import Settings
from docubot.db import Database
from docubot.embed.e5 import E5Embedder
from docubot.store import VectorStore, open_store
from docubot.store.base import EmbeddingModelMismatch, Record, StoreError

BACKENDS = ("sqlite", "postgres", "chroma")
"""`postgres`: the SQL store on a real PostgreSQL database (tests/postgres.py)."""

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
Reopen = Callable[[], VectorStore]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend_settings(settings: Settings, backend: str, request: pytest.FixtureRequest) -> Settings:
    if backend == "postgres":
        return settings.with_overrides(database_url=request.getfixturevalue("fresh_postgres_url"))
    return settings.with_overrides(vector_store=backend)


@pytest.fixture
def reopen(backend_settings: Settings) -> Iterator[Reopen]:
    """Opens another, independent store (its own Database) on the same data."""
    databases: list[Database] = []

    def open_again() -> VectorStore:
        databases.append(Database(backend_settings))
        return open_store(databases[-1])

    yield open_again
    for db in databases:
        db.close()


@pytest.fixture
def store(reopen: Reopen) -> VectorStore:  # overrides conftest's SQLite-only `store`
    return reopen()


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
def filled(store: VectorStore, vectors: dict[str, np.ndarray]) -> VectorStore:
    store.upsert([record(i, vectors) for i in TEXTS])
    return store


def test_the_backend_is_the_configured_one(store: VectorStore, backend: str) -> None:
    expected = {"sqlite": "SQLStore", "postgres": "PgVectorStore", "chroma": "ChromaStore"}[backend]
    assert type(store).__name__ == expected


def test_a_chunk_retrieves_itself(filled: VectorStore, vectors: dict[str, np.ndarray]) -> None:
    for chunk_id in TEXTS:
        [hit] = filled.query(vectors[chunk_id], k=1)
        assert hit.id == chunk_id
        assert hit.score >= 0.99
        assert hit.text == TEXTS[chunk_id]


def test_scores_are_cosine_and_sorted(
    filled: VectorStore, embedder: E5Embedder, vectors: dict[str, np.ndarray]
) -> None:
    for chunk_id, text in TEXTS.items():
        query = embedder.embed_query(text)
        hits = filled.query(query, k=len(TEXTS))
        assert hits[0].id == chunk_id
        assert [h.id for h in hits] == sorted(TEXTS, key=lambda i: -float(vectors[i] @ query))
        for hit in hits:
            assert hit.score == pytest.approx(float(vectors[hit.id] @ query), abs=1e-5)


def test_similarities_of_chosen_ids(filled: VectorStore, vectors: dict[str, np.ndarray]) -> None:
    query = vectors["factures--pdf--00"]
    got = filled.similarities(query, ["guia--intro--00", "factures--pdf--00", "no-existeix"])
    assert set(got) == {"guia--intro--00", "factures--pdf--00"}
    assert got["factures--pdf--00"] == pytest.approx(1.0, abs=1e-5)
    assert got["guia--intro--00"] == pytest.approx(float(vectors["guia--intro--00"] @ query), abs=1e-5)
    assert filled.similarities(query, []) == {}


def test_semantic_query_in_catalan(filled: VectorStore, embedder: E5Embedder) -> None:
    hits = filled.query(embedder.embed_query("Quan es generen les factures?"), k=1)
    assert hits[0].id == "factures--pdf--00"


def test_upsert_is_idempotent_and_replaces(filled: VectorStore, vectors: dict[str, np.ndarray]) -> None:
    assert filled.count() == len(TEXTS)
    filled.upsert([record(i, vectors) for i in TEXTS])
    assert filled.count() == len(TEXTS)
    new_text = "[Guia]\nBenvinguts a la nova Nubelia."
    filled.upsert([record("guia--intro--00", vectors, text=new_text)])
    assert filled.count() == len(TEXTS)
    [stored] = filled.get(["guia--intro--00"])
    assert stored.text == new_text
    assert stored.metadata == metadata("guia--intro--00", new_text)


def test_upsert_without_vector_is_refused(store: VectorStore) -> None:
    with pytest.raises(StoreError, match="no vector"):
        store.upsert([Record("x", "text", metadata("x", "[X]\ntext"))])
    assert store.count() == 0


def test_metadata_round_trip_keeps_types(filled: VectorStore) -> None:
    stored = filled.all_metadata()
    assert set(stored) == set(TEXTS)
    for chunk_id, meta in stored.items():
        assert meta == metadata(chunk_id, TEXTS[chunk_id])
        assert isinstance(meta["latest"], bool)
        assert isinstance(meta["chunk_index"], int)


def test_update_metadata_replaces_every_field(filled: VectorStore) -> None:
    changed = {**metadata("guia--intro--00", TEXTS["guia--intro--00"]), "version": "2027.1", "date": None}
    filled.update_metadata([Record("guia--intro--00", "ignored", changed)])
    [stored] = filled.get(["guia--intro--00"])
    assert stored.metadata == changed
    assert stored.text == TEXTS["guia--intro--00"]


def test_delete_and_list_ids(filled: VectorStore, vectors: dict[str, np.ndarray]) -> None:
    assert filled.list_ids() == set(TEXTS)
    assert filled.delete(["factures--pdf--00", "no-existeix"]) == 1
    assert filled.list_ids() == set(TEXTS) - {"factures--pdf--00"}
    assert filled.count() == len(TEXTS) - 1
    assert filled.get(["factures--pdf--00"]) == []
    assert all(h.id != "factures--pdf--00" for h in filled.query(vectors["factures--pdf--00"], k=10))
    assert filled.delete([]) == 0


def test_vectors_by_hash(filled: VectorStore, vectors: dict[str, np.ndarray]) -> None:
    wanted = str(metadata("auth--tokens--00", TEXTS["auth--tokens--00"])["content_hash"])
    found = filled.vectors_by_hash([wanted, "desconegut"])
    assert set(found) == {wanted}
    # Chroma re-normalises vectors in cosine space: equal to float32 rounding, not bit for bit.
    np.testing.assert_allclose(found[wanted], vectors["auth--tokens--00"], atol=1e-6)


def test_filters_version_and_latest(filled: VectorStore, vectors: dict[str, np.ndarray]) -> None:
    query = vectors["auth--tokens--00"]
    old = filled.query(query, k=10, filters={"version": "2026.1"})
    assert [h.id for h in old] == ["auth--v2026-1--tokens--00"]
    latest = filled.query(query, k=10, filters={"latest": True})
    assert {h.id for h in latest} == set(TEXTS) - {"auth--v2026-1--tokens--00"}
    archived = filled.query(query, k=10, filters={"latest": False})
    assert [h.id for h in archived] == ["auth--v2026-1--tokens--00"]
    both = filled.query(query, k=10, filters={"version": ["2026.1", "2026.2"], "url": "wiki/auth"})
    assert {h.id for h in both} == {"auth--tokens--00", "auth--v2026-1--tokens--00"}
    assert [h.id for h in filled.query(query, k=10, filters={"chunk_index": 0, "url": "wiki/guia"})] == [
        "guia--intro--00"
    ]
    assert filled.query(query, k=10, filters={"version": "1999.1"}) == []
    assert len(filled.query(query, k=2)) == 2
    assert filled.query(query, k=0) == []


def test_unknown_filter_field_is_an_error(filled: VectorStore, vectors: dict[str, np.ndarray]) -> None:
    with pytest.raises(StoreError, match="unknown filter field 'idioma'"):
        filled.query(vectors["auth--tokens--00"], k=3, filters={"idioma": "ca"})


def test_query_on_an_empty_store(store: VectorStore, vectors: dict[str, np.ndarray]) -> None:
    assert store.query(vectors["auth--tokens--00"], k=3) == []
    assert store.all_metadata() == {}
    assert store.count() == 0


def test_a_second_instance_sees_the_first_ones_writes(
    filled: VectorStore, reopen: Reopen, vectors: dict[str, np.ndarray]
) -> None:
    other = reopen()
    assert other.count() == len(TEXTS)
    assert {h.id for h in other.query(vectors["guia--intro--00"], k=10)} == set(TEXTS)
    filled.delete(["guia--intro--00"])
    assert "guia--intro--00" not in {h.id for h in other.query(vectors["guia--intro--00"], k=10)}
    filled.upsert([record("guia--intro--00", vectors, text="[Guia]\nText renovat.")])
    [hit] = other.query(vectors["guia--intro--00"], k=1)
    assert (hit.id, hit.text) == ("guia--intro--00", "[Guia]\nText renovat.")
    other.delete(["factures--pdf--00"])
    assert "factures--pdf--00" not in {h.id for h in filled.query(vectors["factures--pdf--00"], k=10)}


def test_embedding_model_mismatch_names_both(
    store: VectorStore, reopen: Reopen, embedder: E5Embedder
) -> None:
    store.check_embedding_model(embedder.name, embedder.dim)
    store.check_embedding_model(embedder.name, embedder.dim)  # same model: fine
    with pytest.raises(EmbeddingModelMismatch) as raised:
        store.check_embedding_model("text-embedding-3-small", 1536)
    assert embedder.name in str(raised.value)
    assert "text-embedding-3-small" in str(raised.value)
    with pytest.raises(EmbeddingModelMismatch, match="768"):
        store.check_embedding_model(embedder.name, 768)
    with pytest.raises(EmbeddingModelMismatch):
        reopen().check_embedding_model("altre-model", embedder.dim)


def test_corpus_version_bumps_and_persists(store: VectorStore, reopen: Reopen) -> None:
    assert store.corpus_version() == 0
    assert store.bump_corpus_version() == 1
    assert store.bump_corpus_version() == 2
    assert store.corpus_version() == 2
    other = reopen()
    assert other.corpus_version() == 2
    assert other.bump_corpus_version() == 3
    assert store.corpus_version() == 3


def test_apply_writes_deletes_and_bumps(filled: VectorStore, vectors: dict[str, np.ndarray]) -> None:
    new_text = "[Guia]\nText renovat."
    moved = {**metadata("factures--pdf--00", TEXTS["factures--pdf--00"]), "version": "2027.1"}
    before = filled.corpus_version()
    version = filled.apply(
        [record("guia--intro--00", vectors, text=new_text)],
        [Record("factures--pdf--00", "", moved)],
        ["auth--v2026-1--tokens--00", "no-existeix"],
    )
    # > not ==: Chroma counts `filled`'s unversioned upsert as an interrupted change and moves on once more
    assert version == filled.corpus_version() > before
    assert filled.list_ids() == set(TEXTS) - {"auth--v2026-1--tokens--00"}
    assert filled.get(["guia--intro--00"])[0].text == new_text
    assert filled.all_metadata()["factures--pdf--00"] == moved
    assert filled.apply([], [], []) == version + 1
