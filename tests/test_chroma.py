"""Chroma as DocuBot's store: ingest through it, crash repair, offline, bad input, copy, retrieval quality."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docubot.cli import app
from docubot.config import Settings
from docubot.db import Database
from docubot.embed.e5 import E5Embedder
from docubot.ingest.pipeline import IngestRefused, ingest
from docubot.store import StoreError, VectorStore, open_store
from docubot.store import chroma as chroma_module
from docubot.store.base import Record
from docubot.store.chroma import ChromaStore
from tests.conftest import CountingEmbedder, PageWriter
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def chroma_settings(settings: Settings) -> Settings:
    return settings.with_overrides(vector_store="chroma")


@contextmanager
def opened(settings: Settings) -> Iterator[VectorStore]:
    """The store `settings` configure, opened as the application does (through its Database)."""
    with Database(settings) as db:
        store = open_store(db)
        try:
            yield store
        finally:
            store.close()


@pytest.fixture
def chroma(chroma_settings: Settings) -> Iterator[VectorStore]:
    with opened(chroma_settings) as store:
        yield store


@pytest.fixture
def pages(docs: Path, write_page: PageWriter, md: Callable[..., str]) -> Path:
    for name, topic in [
        ("factures", "Factures"),
        ("tasques", "Tasques"),
        ("informes", "Informes"),
        ("compte", "Compte"),
    ]:
        write_page(
            f"{name}.md",
            md(topic, [(f"{topic} {i}", f"Paràgraf {i} sobre {topic.lower()} a Nubelia.") for i in range(3)]),
            url=f"wiki/{name}",
            version="2026.2",
            date="2026-09-01",
        )
    return docs


def snapshot(store: VectorStore) -> dict[str, tuple[str, dict[str, object]]]:
    return {r.id: (r.text, r.metadata) for r in store.get(sorted(store.list_ids()))}


def change_docs(docs: Path, write_page: PageWriter, md: Callable[..., str]) -> None:
    """One page edited, one removed, one added: every kind of write an ingest does."""
    sections = [
        ("Factures 0", "Text nou de factures."),
        ("Factures 1", "Paràgraf 1 sobre factures a Nubelia."),
    ]
    write_page(
        "factures.md", md("Factures", sections), url="wiki/factures", version="2026.2", date="2026-09-01"
    )
    (docs / "tasques.md").unlink()
    write_page("api.md", md("API", [("Claus", "Les claus d'API es creen al perfil.")]), url="wiki/api")


def clean_ingest(docs: Path, settings: Settings, embedder: CountingEmbedder) -> dict[str, object]:
    with opened(settings.with_overrides(chroma_path=settings.home / "clean")) as store:
        ingest(docs, settings, store, embedder, force=True)
        return snapshot(store)


def test_no_embedding_function_and_nothing_downloaded(
    chroma: ChromaStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # Chroma's default model would land in ~/.cache/chroma
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert chroma._collection._embedding_function is None
    assert chroma._collection.configuration["hnsw"]["space"] == "cosine"
    chroma.count()
    assert not (tmp_path / ".cache" / "chroma").exists()


def test_ingest_is_idempotent_and_guarded(
    chroma: VectorStore, chroma_settings: Settings, pages: Path, counting_embedder: CountingEmbedder
) -> None:
    first = ingest(pages, chroma_settings, chroma, counting_embedder)
    assert (first.added, first.corpus_version) == (chroma.count(), 1)
    counting_embedder.reset()
    again = ingest(pages, chroma_settings, chroma, counting_embedder)
    assert (again.embedded, again.added, again.updated, again.deleted) == (0, 0, 0, 0)
    assert again.corpus_version == 1 and counting_embedder.calls == 0
    for name in ("factures", "tasques", "informes"):
        (pages / f"{name}.md").unlink()
    with pytest.raises(IngestRefused, match="would delete"):
        ingest(pages, chroma_settings, chroma, counting_embedder)
    assert chroma.corpus_version() == 1 and chroma.count() == first.added


@pytest.mark.parametrize("dies_in", ["delete", "bump_corpus_version"])
def test_an_ingest_killed_half_way_is_repaired_by_the_next(
    dies_in: str,
    chroma: ChromaStore,
    chroma_settings: Settings,
    pages: Path,
    write_page: PageWriter,
    md: Callable[..., str],
    counting_embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ingest(pages, chroma_settings, chroma, counting_embedder)
    change_docs(pages, write_page, md)

    def die(*_: object) -> None:
        raise KeyboardInterrupt("killed")

    with monkeypatch.context() as patch:
        patch.setattr(ChromaStore, dies_in, die)
        with pytest.raises(KeyboardInterrupt):
            ingest(pages, chroma_settings, chroma, counting_embedder)
    assert chroma.interrupted()
    assert chroma.corpus_version() == 1  # readers still see the old version: caches stay keyed to it
    counting_embedder.reset()
    repaired = ingest(pages, chroma_settings, chroma, counting_embedder)
    assert counting_embedder.calls == 0  # the vectors written before the crash are reused
    assert repaired.corpus_version >= 2
    assert not chroma.interrupted()
    assert snapshot(chroma) == clean_ingest(pages, chroma_settings, counting_embedder)


def test_an_ingest_process_killed_by_sigkill_is_repaired(
    chroma_settings: Settings,
    pages: Path,
    write_page: PageWriter,
    md: Callable[..., str],
    counting_embedder: CountingEmbedder,
) -> None:
    with opened(chroma_settings) as store:
        ingest(pages, chroma_settings, store, counting_embedder)
    change_docs(pages, write_page, md)
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from docubot.config import Settings
        from docubot.embed.e5 import E5Embedder
        from docubot.ingest.pipeline import ingest
        from docubot.store.chroma import ChromaStore

        def die(*_):
            os.kill(os.getpid(), signal.SIGKILL)  # after the upserts, before the deletes and the bump

        ChromaStore.delete = die
        home = Path({str(chroma_settings.home)!r})
        settings = Settings(home=home, vector_store="chroma")
        ingest(Path({str(pages)!r}), settings, ChromaStore.embedded(home / "chroma"), E5Embedder())
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-2000:]
    with opened(chroma_settings) as store:
        assert store.interrupted()  # type: ignore[attr-defined]
        repaired = ingest(pages, chroma_settings, store, counting_embedder)
        assert repaired.corpus_version >= 2 and repaired.deleted >= 1
        assert snapshot(store) == clean_ingest(pages, chroma_settings, counting_embedder)


def test_an_unreachable_server_is_one_clear_error(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with (
        opened(settings.with_overrides(vector_store="chroma", chroma_url=url)) as store,
        pytest.raises(StoreError, match=f"Chroma store at {url}"),
    ):
        store.count()
    monkeypatch.setenv("DOCUBOT_HOME", str(settings.home))
    monkeypatch.setenv("DOCUBOT_VECTOR_STORE", "chroma")
    monkeypatch.setenv("DOCUBOT_CHROMA_URL", url)
    result = CliRunner().invoke(app, ["search", "Com exporto un informe?"])
    assert result.exit_code == 2
    assert url in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_bad_chroma_url_is_refused(settings: Settings) -> None:
    with pytest.raises(StoreError, match="http://host:port"):
        ChromaStore.server("127.0.0.1:8000")


def test_store_copy_moves_the_corpus_without_embedding(
    sample_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "chroma-copy"
    monkeypatch.setenv("DOCUBOT_HOME", str(sample_home))
    result = CliRunner().invoke(
        app, ["store", "copy", "--to", "chroma", "--chroma-path", str(target), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    with (
        opened(Settings(home=sample_home)) as source,
        opened(Settings(home=sample_home, vector_store="chroma", chroma_path=target)) as copied,
    ):
        assert report["copied"] == source.count() == copied.count()
        assert report["corpus_version"] == copied.corpus_version() == 1
        ids = sorted(source.list_ids())
        assert snapshot(copied) == snapshot(source)
        hashes = [str(m["content_hash"]) for m in source.all_metadata().values()]
        for h, vector in source.vectors_by_hash(hashes).items():
            assert float(vector @ copied.vectors_by_hash([h])[h]) == pytest.approx(1.0, abs=1e-5)
        assert len(ids) == report["copied"]
    again = CliRunner().invoke(
        app, ["store", "copy", "--to", "chroma", "--chroma-path", str(target), "--json"]
    )
    assert json.loads(again.output)["corpus_version"] == 2
    same = CliRunner().invoke(app, ["store", "copy", "--to", "sqlite"])
    assert same.exit_code == 2 and "configured store itself" in same.output


def eval_retrieval(home: Path, mode: str, monkeypatch: pytest.MonkeyPatch, reports: Path, **env: str) -> dict:
    monkeypatch.setenv("DOCUBOT_HOME", str(home))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "retrieval",
            "--mode",
            mode,
            "--json",
            "--reports",
            str(reports),
            "--set",
            str(ROOT / "evals/nubelia"),
        ],
    )
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output))


def test_eval_retrieval_is_the_same_on_chroma(
    sample_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sample corpus is small enough that Chroma's HNSW finds the exact neighbours: equal metrics."""
    target = tmp_path / "chroma"
    monkeypatch.setenv("DOCUBOT_HOME", str(sample_home))
    copied = CliRunner().invoke(app, ["store", "copy", "--to", "chroma", "--chroma-path", str(target)])
    assert copied.exit_code == 0, copied.output
    for mode in ("dense", "hybrid"):
        sqlite = eval_retrieval(sample_home, mode, monkeypatch, tmp_path / "r1")
        chroma = eval_retrieval(
            sample_home,
            mode,
            monkeypatch,
            tmp_path / "r2",
            DOCUBOT_VECTOR_STORE="chroma",
            DOCUBOT_CHROMA_PATH=str(target),
        )
        monkeypatch.delenv("DOCUBOT_VECTOR_STORE")
        assert chroma["recall@5"] == sqlite["recall@5"], mode
        assert chroma["mrr"] == pytest.approx(sqlite["mrr"], abs=1e-4), mode
        assert chroma["misses"] == sqlite["misses"], mode


def test_filters_chroma_applies_itself(
    chroma: ChromaStore, embedder: E5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the unfiltered over-fetch finds too few matches, the filter goes to Chroma as a `where`."""
    texts = {f"p{i}--s--00": f"[P{i}]\nText {i} sobre factures i tasques." for i in range(6)}
    vectors = embedder.embed_documents(list(texts.values()))
    chroma.upsert(
        [
            Record(
                chunk_id,
                text,
                {"url": f"wiki/p{i}", "version": "2026.2", "chunk_index": i % 2, "latest": i != 4},
                vectors[i],
            )
            for i, (chunk_id, text) in enumerate(texts.items())
        ]
    )
    monkeypatch.setattr(chroma_module, "OVERFETCH", 1)
    searched: list[object] = []
    search = chroma._search
    monkeypatch.setattr(chroma, "_search", lambda v, k, where: searched.append(where) or search(v, k, where))
    hits = chroma.query(vectors[0], k=1, filters={"url": ["wiki/p4", "wiki/p5"], "latest": False})
    assert [h.id for h in hits] == ["p4--s--00"]
    assert searched[-1] == {"$and": [{"url": {"$in": ["wiki/p4", "wiki/p5"]}}, {"latest": {"$in": [False]}}]}
    odd = chroma.query(vectors[0], k=5, filters={"chunk_index": 1, "version": "2026.2"})
    assert {h.id for h in odd} == {"p1--s--00", "p3--s--00", "p5--s--00"}
    assert chroma.query(vectors[0], k=1, filters={"chunk_index": "x"}) == []
