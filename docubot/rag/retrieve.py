"""Retrieval: dense (e5 cosine), keyword (BM25) or both fused by reciprocal rank, with filters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from docubot.embed import Embedder
from docubot.rag.keyword import KeywordIndex
from docubot.store import Hit, VectorStore, validate_filters_for

LATEST = "latest"
ALL_VERSIONS = "all"
Mode = Literal["dense", "bm25", "hybrid"]
MODES: tuple[Mode, ...] = ("dense", "bm25", "hybrid")
CANDIDATES = 30
"""How deep each ranking goes before fusion."""


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
    *,
    mode: Mode = "dense",
    keyword_index: KeywordIndex | None = None,
    rrf_k: int = 5,
    query_vector: np.ndarray | None = None,
) -> list[Hit]:
    """The `k` best chunks for `question`, best first. Every hit's `score` is its cosine similarity.
    `query_vector` is the question's embedding when the caller already has it."""
    query_filters = build_filters(version, filters)
    vector = embedder.embed_query(question) if query_vector is None else query_vector
    if mode == "dense":
        return store.query(vector, k, query_filters)
    if keyword_index is None:
        raise ValueError(f"retrieval mode {mode!r} needs a keyword index")
    keyword = _keyword_ranking(question, store, keyword_index, query_filters, max(k, CANDIDATES))
    dense: dict[str, Hit] = {}
    if mode == "bm25":
        ranked = [chunk_id for chunk_id, _ in keyword[:k]]
    else:
        dense = {h.id: h for h in store.query(vector, max(k, CANDIDATES), query_filters)}
        ranked = reciprocal_rank_fusion([list(dense), [chunk_id for chunk_id, _ in keyword]], rrf_k)[:k]
    keyword_scores = dict(keyword)
    missing = [i for i in ranked if i not in dense]  # keyword-only hits: fetched once, here
    similarity = store.similarities(vector, missing)
    found = {r.id: Hit(r.id, r.text, r.metadata, similarity[r.id]) for r in store.get(missing)}
    found.update(dense)
    return [
        Hit(i, found[i].text, found[i].metadata, found[i].score, keyword_scores.get(i, 0.0))
        for i in ranked
        if i in found
    ]


def reciprocal_rank_fusion(rankings: list[list[str]], k: int = 5) -> list[str]:
    """Ids ordered by Σ 1/(k + rank) over the rankings they appear in (ties: first seen first)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, 1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda i: -scores[i])


def _keyword_ranking(
    question: str, store: VectorStore, index: KeywordIndex, filters: dict[str, Any], depth: int
) -> list[tuple[str, float]]:
    """BM25 (id, score) pairs matching the filters, best first, at most `depth` of them."""
    scores = index.scores(store, question)
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    if not filters:
        return ordered[:depth]
    wanted = validate_filters_for(filters)
    out: list[tuple[str, float]] = []
    for start in range(0, len(ordered), depth * 2):
        batch = ordered[start : start + depth * 2]
        metadata = {r.id: r.metadata for r in store.get(chunk_id for chunk_id, _ in batch)}
        out += [(i, s) for i, s in batch if i in metadata and wanted(metadata[i])]
        if len(out) >= depth:
            break
    return out[:depth]
