"""Retrieval: one `Retriever` turns a question into ranked chunks, the same way for `ask`, `search`,
`eval`, conversations and the cache probe.

question → widened by the synonyms file, when it names the docs' words for the question's own
(`docubot/rag/synonyms.py`), and its typos spelled as the docs spell the word
(`docubot/rag/spelling.py`) → query vector (given by the caller, else embedded once; for a widened
or corrected question, its mean with the widened and corrected question's; BM25 reads the widened
question and matches a typo by itself) → dense (e5 cosine), keyword
(a `KeywordSearch`: BM25, or PostgreSQL's full text) or both fused (by default on z-scored
similarities and keyword scores, `zscore_fusion`; or by reciprocal rank), under the store filters →
the post-retrieval stages, in order → the best `k`. There are no stages by default; a reranker or a
pruner is one more entry in `Retriever.stages` (a `Stage`), and every caller gets it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from docubot.embed import Embedder
from docubot.rag.keyword import KeywordSearch
from docubot.rag.spelling import Spelling
from docubot.rag.synonyms import SynonymsSource
from docubot.store import Hit, VectorStore
from docubot.text import DEFAULT_LANGUAGE

LATEST = "latest"
ALL_VERSIONS = "all"
Mode = Literal["dense", "bm25", "hybrid"]
MODES: tuple[Mode, ...] = ("dense", "bm25", "hybrid")
Fusion = Literal["zscore", "rrf"]
FUSIONS: tuple[Fusion, ...] = ("zscore", "rrf")
CANDIDATES = 30
"""How deep each ranking goes before fusion, and how many candidates the stages see."""


@dataclass(frozen=True)
class RankedHit(Hit):
    """A retrieved chunk with every signal that ranked it. `score` stays the cosine similarity (the
    refusal signal) whatever the mode; `keyword_score` is its BM25 score when keywords took part."""

    rank: int = 0
    """Its position after fusion (1 = best), before any post-retrieval stage."""
    dense_rank: int | None = None
    """Its position in the dense ranking (None: not among its candidates, or not computed)."""
    keyword_rank: int | None = None
    """Its position in the BM25 ranking (None: no shared token, or not computed)."""

    def logged(self) -> dict[str, Any]:
        """What the call log and the `--json` outputs record about the hit."""
        return {
            "id": self.id,
            "score": round(self.score, 4),
            "bm25": None if self.keyword_score is None else round(self.keyword_score, 3),
            "rank": self.rank,
        }


class Stage(Protocol):
    """A post-retrieval step (reranker, pruner…): gets the candidates best first, returns them
    reordered, filtered or rewritten. The retriever keeps the first `k` of the last stage's list."""

    name: str

    def __call__(self, question: str, hits: list[RankedHit]) -> list[RankedHit]: ...


@dataclass(frozen=True)
class RetrievalResult:
    """What one search found, and how: everything later stages and the call log need."""

    question: str
    mode: Mode
    filters: dict[str, Any]
    """The store filters applied (the version choice folded in)."""
    hits: list[RankedHit]
    """Best first, at most `k`."""
    vector: np.ndarray = field(compare=False, repr=False)
    """The question's embedding (reused by whoever needs it next)."""
    timings_ms: dict[str, float] = field(default_factory=dict)
    """`embed` (0 when the vector was given), `rank`, one entry per stage, `total`."""
    widened: str = ""
    """The question with the docs' words the synonyms file adds, as BM25 read it ("": none added)."""

    @property
    def best_similarity(self) -> float:
        return max((h.score for h in self.hits), default=0.0)

    def logged(self) -> list[dict[str, Any]]:
        return [h.logged() for h in self.hits]


def build_filters(version: str = LATEST, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Store filters: `latest` keeps the newest version of each page, `all` every version,
    anything else that exact version; `extra` adds equality filters on other metadata fields."""
    filters: dict[str, Any] = dict(extra or {})
    if version == LATEST:
        filters.setdefault("latest", True)
    elif version != ALL_VERSIONS:
        filters["version"] = version
    return filters


class Retriever:
    """Embedder + vector store + keyword index + fusion + default mode and depth + stages."""

    def __init__(
        self,
        embedder: Embedder,
        store: VectorStore,
        keyword_index: KeywordSearch | None = None,
        *,
        mode: Mode = "dense",
        top_k: int = 4,
        fusion: Fusion = "zscore",
        dense_weight: float = 0.5,
        rrf_k: int = 5,
        stages: Sequence[Stage] = (),
        synonyms: SynonymsSource | None = None,
        spelling: Spelling | None = None,
    ) -> None:
        self.embedder = embedder
        self.store = store
        self.keyword_index = keyword_index
        self.mode: Mode = mode
        self.top_k = top_k
        self.fusion: Fusion = fusion
        self.dense_weight = dense_weight
        """The dense share of a `zscore` fusion (the keyword one is the rest)."""
        self.rrf_k = rrf_k
        """The constant of an `rrf` fusion."""
        self.stages = list(stages)
        self.synonyms = synonyms
        """The docs' words searched beside the users' (`docubot/rag/synonyms.py`)."""
        self.spelling = spelling
        """Typos spelled as the docs spell the word, for the dense search (`docubot/rag/spelling.py`)."""

    def check_model(self) -> None:
        """Record the embedding model on first use; raise EmbeddingModelMismatch on another one's store."""
        self.store.check_embedding_model(self.embedder.name, self.embedder.dim)

    def search(
        self,
        question: str,
        *,
        version: str = LATEST,
        filters: Mapping[str, Any] | None = None,
        mode: Mode | None = None,
        k: int | None = None,
        query_vector: np.ndarray | None = None,
        also: str = "",
    ) -> RetrievalResult:
        """The best `k` (default `top_k`) chunks for `question` under `version` and `filters`, by
        `mode` (default the configured one). `query_vector` is the question's embedding when the
        caller already has it (the cache probe), so a question is embedded once. `also`: another
        wording of the question that BM25 reads beside it (a second translation)."""
        mode = mode or self.mode
        k = k or self.top_k
        if mode != "dense" and self.keyword_index is None:
            raise ValueError(f"retrieval mode {mode!r} needs a keyword index")
        self.check_model()
        query_filters = build_filters(version, filters)
        started = time.perf_counter()
        vector = self.embedder.embed_query(question) if query_vector is None else query_vector
        widen = self._widening()
        widened = widen(question)
        corrected = self.spelling.corrected(question, self.store) if self.spelling else question
        embedded = widened if corrected == question else widen(corrected)
        if embedded != question:
            vector = halfway(self.embedder.embed_query(embedded), vector)
        timings = {"embed": _ms_since(started) if query_vector is None or embedded != question else 0.0}
        mark = time.perf_counter()
        keywords = widen(f"{question} {also}") if also else widened
        hits = self._ranked(keywords, vector, mode, query_filters, max(k, CANDIDATES) if self.stages else k)
        timings["rank"] = _ms_since(mark)
        for stage in self.stages:
            mark = time.perf_counter()
            hits = stage(question, hits)
            timings[stage.name] = _ms_since(mark)
        timings["total"] = _ms_since(started)
        return RetrievalResult(
            question, mode, query_filters, hits[:k], vector, timings, widened if widened != question else ""
        )

    def _widening(self) -> Callable[[str], str]:
        """What adds to a text the docs' words the synonyms file gives for its own, by the rules as
        they are now (nothing when there are none)."""
        synonyms = self.synonyms.current() if self.synonyms else None
        if synonyms is None or not synonyms.rules:
            return lambda text: text
        language = self.keyword_index.language(self.store) if self.keyword_index else DEFAULT_LANGUAGE
        return lambda text: synonyms.widened(text, language)

    def _ranked(
        self, question: str, vector: np.ndarray, mode: Mode, filters: dict[str, Any], depth: int
    ) -> list[RankedHit]:
        """The first `depth` chunks by `mode`, each with its ranks and scores."""
        if mode == "dense":
            return [
                RankedHit(h.id, h.text, h.metadata, h.score, rank=n, dense_rank=n)
                for n, h in enumerate(self.store.query(vector, depth, filters), 1)
            ]
        assert self.keyword_index is not None
        keyword = self.keyword_index.ranking(self.store, question, filters, max(depth, CANDIDATES))
        keyword_ids = [chunk_id for chunk_id, _ in keyword]
        dense: dict[str, Hit] = {}
        if mode == "bm25":
            ranked = keyword_ids[:depth]
        else:
            dense = {h.id: h for h in self.store.query(vector, max(depth, CANDIDATES), filters)}
            if self.fusion == "rrf":
                ranked = reciprocal_rank_fusion([list(dense), keyword_ids], self.rrf_k)[:depth]
            else:
                dense_scores = [(h.id, h.score) for h in dense.values()]
                ranked = zscore_fusion(dense_scores, keyword, self.dense_weight)[:depth]
        missing = [i for i in ranked if i not in dense]  # keyword-only hits: fetched once, here
        similarity = self.store.similarities(vector, missing)
        found = {r.id: Hit(r.id, r.text, r.metadata, similarity[r.id]) for r in self.store.get(missing)}
        found.update(dense)
        dense_rank = {chunk_id: n for n, chunk_id in enumerate(dense, 1)}
        keyword_rank = {chunk_id: n for n, chunk_id in enumerate(keyword_ids, 1)}
        keyword_score = dict(keyword)
        return [
            RankedHit(
                i,
                found[i].text,
                found[i].metadata,
                found[i].score,
                keyword_score.get(i, 0.0),
                rank=n,
                dense_rank=dense_rank.get(i),
                keyword_rank=keyword_rank.get(i),
            )
            for n, i in enumerate((i for i in ranked if i in found), 1)
        ]


def reciprocal_rank_fusion(rankings: list[list[str]], k: int = 5) -> list[str]:
    """Ids ordered by Σ 1/(k + rank) over the rankings they appear in (ties: first seen first)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking, 1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda i: -scores[i])


def zscore_fusion(
    dense: Sequence[tuple[str, float]], keyword: Sequence[tuple[str, float]], dense_weight: float = 0.5
) -> list[str]:
    """Ids ordered by `dense_weight`·z(similarity) + (1 − `dense_weight`)·z(BM25 score), each score
    standardised over its own ranking's candidates; an id missing from one ranking gets that
    ranking's lowest z. Unlike reciprocal rank, a clear lead in one ranking (a cosine far above the
    rest, a rare term only one chunk has) survives fusion. Ties: dense order first, then keyword."""
    a, b = _standardised(dense), _standardised(keyword)
    floor_a, floor_b = min(a.values(), default=0.0), min(b.values(), default=0.0)
    ids = list(dict.fromkeys([*a, *b]))
    fused = {i: dense_weight * a.get(i, floor_a) + (1 - dense_weight) * b.get(i, floor_b) for i in ids}
    return sorted(ids, key=lambda i: -fused[i])


def _standardised(ranking: Sequence[tuple[str, float]]) -> dict[str, float]:
    """id → (score − mean) / standard deviation over the ranking (0 for every id when all are equal)."""
    if not ranking:
        return {}
    scores = np.array([score for _, score in ranking], dtype=float)
    spread = float(scores.std())
    z = (scores - scores.mean()) / spread if spread > 0 else np.zeros_like(scores)
    return {chunk_id: float(value) for (chunk_id, _), value in zip(ranking, z, strict=True)}


def halfway(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The unit vector halfway between two unit vectors (a query searched by two texts)."""
    return mean_direction((a, b))


def mean_direction(vectors: Sequence[np.ndarray]) -> np.ndarray:
    """The unit vector along the sum of unit vectors (a query searched by several texts)."""
    mixed = np.sum(vectors, axis=0)
    return mixed / np.linalg.norm(mixed)


def _ms_since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)
