"""The second evaluation corpus (evals/ferrule): the set's schema, its labels, and the CI floors.

Gold sections are checked against the chunks DocuBot's own parser and chunker make from
`evals/ferrule/docs` (token counts from the real e5 tokenizer; nothing is embedded). Questions
marked `"needs"` have golds that only exist since the parser stopped reading prose underlined with
`---` (and YAML front matter) as headings: they guard that fix.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from docubot.config import Settings
from docubot.db import Database
from docubot.embed.e5 import E5Embedder
from docubot.eval.retrieval import RetrievalReport, run_cases
from docubot.eval.sets import load_retrieval_set
from docubot.ingest.chunk import ChunkLimits, chunk_page
from docubot.ingest.files import find_pages
from docubot.ingest.parse import parse_page
from docubot.ingest.pipeline import ingest
from docubot.rag.keyword import KeywordIndex
from docubot.rag.retrieve import Retriever
from docubot.rag.threshold import refusal_threshold
from docubot.store.sql import SQLStore

SET = Path(__file__).resolve().parent.parent / "evals" / "ferrule"
DOCS = SET / "docs"
NEEDS = {"setext-fix", "front-matter"}
FLOORS = json.loads((SET / "floors.json").read_text())


def rows() -> list[dict]:
    return [json.loads(line) for line in (SET / "retrieval.jsonl").read_text(encoding="utf-8").splitlines()]


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).lower()


def page_texts() -> dict[str, str]:
    """Page url → its markdown, whitespace collapsed and lower-cased."""
    pages, _ = find_pages(DOCS)
    texts = {}
    for page in pages:
        text = page.path.read_text(encoding="utf-8")
        texts[parse_page(text, page.relative).meta.url] = flat(text)
    return texts


def test_the_set_loads_and_has_the_promised_shape() -> None:
    data = rows()
    cases = load_retrieval_set(SET)
    assert len(cases) == len(data) >= 170
    assert len({r["id"] for r in data}) == len(data)
    answerable = [r for r in data if r["answerable"]]
    unanswerable = [r for r in data if not r["answerable"]]
    assert len(answerable) >= 120 and len(unanswerable) >= 20
    assert sum(1 for r in data if r.get("typo")) >= 30
    assert {r["lang"] for r in data} == {"en"}
    splits = Counter(r["split"] for r in data)
    assert set(splits) == {"tune", "holdout"} and 0.25 <= splits["holdout"] / len(data) <= 0.4
    for r in answerable:
        assert r["gold"] and len(r["facts"]) <= 3 and "kind" not in r, r["id"]
        assert r.get("needs", "setext-fix") in NEEDS, r["id"]
    for r in unanswerable:
        assert not r["gold"] and not r["facts"] and r["kind"] in {"near-topic", "off-topic"}, r["id"]


def test_every_fact_is_written_in_one_of_its_gold_pages() -> None:
    texts = page_texts()
    for r in rows():
        for fact in r["facts"]:
            assert any(flat(fact) in texts[g["url"]] for g in r["gold"]), (r["id"], fact)


@pytest.fixture(scope="module")
def stored_texts(embedder: E5Embedder) -> dict[tuple[str, str], str]:
    """(url, section path) → the flattened text of its chunks, as the ingest pipeline would store them."""
    settings = Settings()
    limits = ChunkLimits(settings.chunk_tokens, settings.chunk_overlap_tokens, embedder.max_tokens - 12)
    pages, _ = find_pages(DOCS)
    texts: dict[tuple[str, str], str] = {}
    for page in pages:
        parsed = parse_page(page.path.read_text(encoding="utf-8"), page.relative)
        for chunk in chunk_page(parsed, embedder.count_tokens, limits, page.relative):
            key = (chunk.url, chunk.section_path)
            texts[key] = texts.get(key, "") + " " + flat(chunk.text)
    return texts


@pytest.fixture(scope="module")
def stored_sections(stored_texts: dict[tuple[str, str], str]) -> set[tuple[str, str]]:
    return set(stored_texts)


def test_every_gold_section_exists_in_the_chunked_docs(stored_sections: set[tuple[str, str]]) -> None:
    missing = [
        (r["id"], g["section"])
        for r in rows()
        for g in r["gold"]
        if (g["url"], g["section"]) not in stored_sections
    ]
    assert missing == []
    assert len({url for url, _ in stored_sections}) >= 16


def test_questions_that_needed_the_setext_fix_find_their_facts_in_their_gold_sections(
    stored_texts: dict[tuple[str, str], str],
) -> None:
    def found(r: dict) -> bool:
        texts = [stored_texts.get((g["url"], g["section"]), "") for g in r["gold"]]
        return any(all(flat(f) in text for f in r["facts"]) for text in texts)

    lost = [r["id"] for r in rows() if r.get("needs") and r["facts"] and not found(r)]
    assert lost == []


@pytest.fixture(scope="module")
def hybrid_report(tmp_path_factory: pytest.TempPathFactory, embedder: E5Embedder) -> RetrievalReport:
    """The whole set retrieved in hybrid mode from the ingested corpus (~300 chunks embedded once)."""
    settings = Settings(home=tmp_path_factory.mktemp("ferrule-home"))
    with Database(settings) as db:
        store = SQLStore(db)
        ingest(DOCS, settings, store, embedder)
        index = KeywordIndex(settings.keyword_index_dir)
        retriever = Retriever(
            embedder,
            store,
            index,
            mode="hybrid",
            fusion=settings.fusion,
            dense_weight=settings.fusion_dense_weight,
            rrf_k=settings.rrf_k,
        )
        return run_cases(load_retrieval_set(SET), retriever)


def test_retrieval_on_the_second_corpus_stays_above_its_floors(hybrid_report: RetrievalReport) -> None:
    metrics = hybrid_report.flat_metrics()
    assert metrics["recall@5"] >= FLOORS["recall@5"], metrics
    assert metrics["mrr"] >= FLOORS["mrr"], metrics
    assert metrics["miss@20"] <= FLOORS["top20_miss_at_most"], metrics
    assert metrics["holdout.recall@5"] >= FLOORS["holdout.recall@5"], metrics
    assert metrics["holdout.mrr"] >= FLOORS["holdout.mrr"], metrics


def test_refusal_on_the_second_corpus_stays_above_its_floors(
    hybrid_report: RetrievalReport, embedder: E5Embedder
) -> None:
    threshold = refusal_threshold(Settings(), embedder.name)
    answerable = [o.best for o in hybrid_report.outcomes if o.case.answerable]
    unanswerable = [o.best for o in hybrid_report.outcomes if not o.case.answerable]
    refused_right = sum(s < threshold for s in unanswerable)
    refused_wrong = sum(s < threshold for s in answerable)
    kept = 1 - refused_wrong / len(answerable)
    assert kept >= FLOORS["answerable_kept_at_default_threshold"], (threshold, kept)
    assert refused_right >= FLOORS["unanswerable_refused_at_default_threshold"] * len(unanswerable), threshold
