"""BM25 keyword search and hybrid fusion: index lifecycle, languages, typos, filters, modes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docubot.config import Settings
from docubot.db import Database
from docubot.ingest.pipeline import ingest
from docubot.rag.keyword import KeywordIndex
from docubot.rag.retrieve import Retriever, reciprocal_rank_fusion, zscore_fusion
from docubot.store.sql import SQLStore
from docubot.text import TOKENS_VERSION


def test_rrf_prefers_what_both_rankings_agree_on() -> None:
    assert reciprocal_rank_fusion([["a", "b", "c"], ["x", "b", "y"]], k=5)[0] == "b"
    assert reciprocal_rank_fusion([["a"], []]) == ["a"]


def test_zscore_fusion_keeps_a_clear_lead_that_reciprocal_rank_flattens() -> None:
    # ferrule f203 in miniature: dense puts the gold first, far above the rest; BM25 has it 5th, behind
    # chunks sharing common words. Reciprocal rank puts it third; the z-scored fusion keeps it first.
    dense = [("gold", 0.91), ("a", 0.84), ("b", 0.83), ("c", 0.83), ("d", 0.82)]
    keyword = [("a", 9.0), ("b", 8.8), ("e", 8.6), ("f", 8.5), ("gold", 8.4), ("d", 2.0)]
    assert reciprocal_rank_fusion([[i for i, _ in dense], [i for i, _ in keyword]], k=5).index("gold") == 2
    assert zscore_fusion(dense, keyword)[0] == "gold"
    assert zscore_fusion(dense, keyword, dense_weight=0.0)[0] == "a"


def test_zscore_fusion_handles_missing_ids_flat_scores_and_empty_rankings() -> None:
    assert zscore_fusion([("a", 0.9), ("b", 0.8)], []) == ["a", "b"]
    assert zscore_fusion([], [("x", 3.0), ("y", 1.0)]) == ["x", "y"]
    assert zscore_fusion([("a", 0.8), ("b", 0.8)], [("b", 2.0), ("c", 1.0)])[0] == "b"
    assert zscore_fusion([], []) == []


def test_bm25_mode_finds_exact_names_and_hybrid_keeps_similarities(sample_settings, embedder) -> None:
    store = SQLStore(Database(sample_settings))
    index = KeywordIndex(sample_settings.keyword_index_dir)
    retriever = Retriever(embedder, store, index)
    hits = retriever.search("X-Nubelia-Signature", k=3, mode="bm25").hits
    assert hits[0].metadata["url"] == "wiki/api/webhooks" and hits[0].keyword_score > 0
    hybrid = retriever.search("Com verifico la signatura d'un webhook?", k=4, mode="hybrid").hits
    assert all(0.5 < h.score <= 1.0 for h in hybrid)
    assert hybrid[0].metadata["url"] == "wiki/api/webhooks"
    with pytest.raises(ValueError, match="keyword index"):
        Retriever(embedder, store).search("x", mode="hybrid")
    store.close()


def test_keyword_search_honours_the_version_filters(sample_settings, embedder) -> None:
    store = SQLStore(Database(sample_settings))
    index = KeywordIndex(sample_settings.keyword_index_dir)
    question = "caducitat dels tokens d'accés"
    retriever = Retriever(embedder, store, index, mode="bm25")
    latest = retriever.search(question, k=10).hits
    old = retriever.search(question, k=10, version="2026.1").hits
    assert latest and {h.metadata["latest"] for h in latest} == {True}
    assert old and {h.metadata["version"] for h in old} == {"2026.1"}
    store.close()


def _zirconi_page_ingested(tmp_path, embedder) -> tuple[Path, Settings, SQLStore]:
    """A one-page corpus naming "Zirconi", ingested: its docs folder, settings and store."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Guia\n\n## Quasars\n\nEl botó Zirconi activa els quasars.\n")
    settings = Settings(home=tmp_path / "home")
    store = SQLStore(Database(settings))
    ingest(docs, settings, store, embedder)
    return docs, settings, store


def test_the_index_follows_every_ingest_and_heals_when_stale(tmp_path, embedder) -> None:
    docs, settings, store = _zirconi_page_ingested(tmp_path, embedder)
    index = KeywordIndex(settings.keyword_index_dir)
    assert index.scores(store, "Zirconi")
    (docs / "a.md").write_text("# Guia\n\n## Quasars\n\nEl botó Titani activa els quasars.\n")
    (docs / "b.md").write_text("# Altra\n\n## Pulsars\n\nEls pulsars es configuren a Preferències.\n")
    ingest(docs, settings, store, embedder, force=True)
    fresh = KeywordIndex(settings.keyword_index_dir)
    assert (
        not fresh.scores(store, "Zirconi")
        and fresh.scores(store, "Titani")
        and fresh.scores(store, "pulsars")
    )
    pointer = settings.keyword_index_dir / "current.json"
    published = json.loads(pointer.read_text())
    assert published["corpus_version"] == store.corpus_version()
    stamp = settings.keyword_index_dir / published["folder"] / "ids.json"
    stamp.write_text(json.dumps({"corpus_version": 0, "ids": []}))  # a stale or foreign index
    assert KeywordIndex(settings.keyword_index_dir).scores(store, "Titani")
    pointer.unlink()  # a missing index
    assert KeywordIndex(settings.keyword_index_dir).scores(store, "Titani")
    store.close()


def test_typos_in_query_terms_still_find_the_page_at_a_lower_score(tmp_path, embedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "plugins.md").write_text(
        "# Plugins\n\n## GitHub plugin\n\nEnable the GitHub plugin from Settings, then install it.\n"
    )
    (docs / "slack.md").write_text("# Slack\n\n## Connect\n\nConnect Slack from the workspace settings.\n")
    (docs / "quasars.md").write_text("# Guia\n\n## Quasars\n\nEl botó Zirconi activa els quasars.\n")
    settings = Settings(home=tmp_path / "home")
    db = Database(settings)
    store = SQLStore(db)
    ingest(docs, settings, store, embedder)
    index = KeywordIndex(settings.keyword_index_dir)
    typo = index.scores(store, "enabel the githb plugn")
    assert max(typo, key=typo.__getitem__) == "plugins--github-plugin--00"
    exact = index.scores(store, "Zirconi")
    near = index.scores(store, "Zirconni")
    assert set(near) == set(exact) and 0 < max(near.values()) < max(exact.values())
    assert index.scores(store, "Xerofita") == {}  # nothing within one edit
    db.close()


def test_a_corpus_in_english_is_searched_in_english(tmp_path, embedder) -> None:
    """Chunks and questions are stemmed in their own language, and a question that does not settle it
    is taken for the corpus's majority language (it used to be Catalan, whatever the corpus)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "projects.md").write_text(
        "# Projects\n\n## Archiving a project\n\nTo archive a finished project, open its settings "
        "and choose Archive. Archived projects stay searchable and can be restored at any time.\n"
    )
    (docs / "billing.md").write_text(
        "# Billing\n\n## Invoices\n\nEvery invoice is sent by email on the first day of the month. "
        "You can download past invoices from the billing page.\n"
    )
    settings = Settings(home=tmp_path / "home")
    db = Database(settings)
    store = SQLStore(db)
    ingest(docs, settings, store, embedder)
    index = KeywordIndex(settings.keyword_index_dir)
    assert index.language(store) == "en"
    assert index.scores(store, "archiving")  # 'archiv' as in the chunk, not the Catalan 'archiving'
    assert KeywordIndex(settings.keyword_index_dir).language(store) == "en"  # published with the index
    db.close()


def test_the_sample_corpus_is_catalan(sample_settings) -> None:
    store = SQLStore(Database(sample_settings))
    assert KeywordIndex(sample_settings.keyword_index_dir).language(store) == "ca"
    store.close()


def test_an_index_made_with_other_stopwords_is_built_again(tmp_path, embedder) -> None:
    """Stop 34 added Catalan stopwords ("algú", "cosa"…); an index published before kept its old
    tokens until the next ingest, since only the corpus version was checked."""
    _, settings, store = _zirconi_page_ingested(tmp_path, embedder)
    pointer = settings.keyword_index_dir / "current.json"
    published = json.loads(pointer.read_text())
    stamp = settings.keyword_index_dir / published["folder"] / "ids.json"
    assert json.loads(stamp.read_text())["tokens"] == TOKENS_VERSION
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "tokens": "tokens-1+other lists"}))
    assert KeywordIndex(settings.keyword_index_dir).scores(store, "Zirconi")
    rebuilt = json.loads(pointer.read_text())
    assert rebuilt["folder"] != published["folder"]
    fresh = json.loads((settings.keyword_index_dir / rebuilt["folder"] / "ids.json").read_text())
    assert fresh["tokens"] == TOKENS_VERSION and fresh["corpus_version"] == store.corpus_version()
    store.close()
