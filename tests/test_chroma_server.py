"""Chroma in client/server mode: a real `chroma run` process on 127.0.0.1, the store contract and an
ingest + search through the CLI against it."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import chromadb
import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.store import VectorStore
from docubot.store.chroma import COLLECTION, ChromaStore
from tests.conftest import PageWriter
from tests.servers import free_port, running
from tests.test_store_backends import (  # the contract, run here on the server
    filled,
    test_a_chunk_retrieves_itself,
    test_a_second_instance_sees_the_first_ones_writes,
    test_corpus_version_bumps_and_persists,
    test_delete_and_list_ids,
    test_embedding_model_mismatch_names_both,
    test_filters_version_and_latest,
    test_metadata_round_trip_keeps_types,
    test_query_on_an_empty_store,
    test_scores_are_cosine_and_sorted,
    test_similarities_of_chosen_ids,
    test_update_metadata_replaces_every_field,
    test_upsert_is_idempotent_and_replaces,
    test_vectors_by_hash,
    vectors,
)

__all__ = [
    "filled",
    "test_a_chunk_retrieves_itself",
    "test_a_second_instance_sees_the_first_ones_writes",
    "test_corpus_version_bumps_and_persists",
    "test_delete_and_list_ids",
    "test_embedding_model_mismatch_names_both",
    "test_filters_version_and_latest",
    "test_metadata_round_trip_keeps_types",
    "test_query_on_an_empty_store",
    "test_scores_are_cosine_and_sorted",
    "test_similarities_of_chosen_ids",
    "test_update_metadata_replaces_every_field",
    "test_upsert_is_idempotent_and_replaces",
    "test_vectors_by_hash",
    "vectors",
]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`chroma run` on a free port with its data in a temporary folder; stopped after the module."""
    port = free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    chroma = str(Path(sys.executable).with_name("chroma"))
    args = [chroma, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)]
    with running(args, f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout_s=60):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def empty_server(server_url: str) -> str:
    """The server with DocuBot's collection dropped: every test starts empty."""
    client = chromadb.HttpClient(host="127.0.0.1", port=int(server_url.rsplit(":", 1)[1]))
    if COLLECTION in {c.name for c in client.list_collections()}:
        client.delete_collection(COLLECTION)
    return server_url


@pytest.fixture
def reopen(empty_server: str) -> Iterator[Callable[[], VectorStore]]:
    opened: list[VectorStore] = []

    def open_again() -> VectorStore:
        opened.append(ChromaStore.server(empty_server))
        return opened[-1]

    yield open_again
    for s in opened:
        s.close()


@pytest.fixture
def store(reopen: Callable[[], VectorStore]) -> VectorStore:
    return reopen()


def test_ingest_and_search_through_the_server(
    empty_server: str,
    settings: Settings,
    write_page: PageWriter,
    md: Callable[..., str],
    docs: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_page(
        "factures.md",
        md("Factures", [("Emissió", "Les factures es generen el primer dia de cada mes en PDF.")]),
        url="wiki/factures",
        version="2026.2",
    )
    write_page(
        "tasques.md",
        md("Tasques", [("Crear", "Una tasca nova es crea amb el botó Afegir del tauler.")]),
        url="wiki/tasques",
        version="2026.2",
    )
    monkeypatch.setenv("DOCUBOT_HOME", str(settings.home))
    monkeypatch.setenv("DOCUBOT_VECTOR_STORE", "chroma")
    monkeypatch.setenv("DOCUBOT_CHROMA_URL", empty_server)
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(docs), "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)["corpus_version"] == 1
    again = json.loads(runner.invoke(app, ["ingest", str(docs), "--json"]).output)
    assert (again["embedded"], again["added"], again["corpus_version"]) == (0, 0, 1)
    found = runner.invoke(app, ["search", "Quan es generen les factures?", "--json", "--k", "1"])
    assert found.exit_code == 0, found.output
    [hit] = json.loads(found.output)
    assert hit["url"] == "wiki/factures"
    assert ChromaStore.server(empty_server).count() == 2
    assert not (settings.home / "chroma").exists()  # nothing embedded locally in server mode
