"""The docs-gap report: what people asked that the docs did not answer well, grouped by similarity.

It reads what erasing a user cleans: from the call log, questions refused and questions answered
with low confidence (`confianca` baixa); from the sessions, questions whose answer got a 👎 (with
its comment), in the last N days. A 👎 turn that the call log also lists counts once, as a 👎.
Their e5 query embeddings are grouped by average-linkage agglomerative clustering, cut at a cosine
threshold; each group gets its medoid as the representative question, its size, when it was last
asked, the 👎 comments, and the page nearest the medoid in the store today.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import or_, select

from docubot.calllog import calls
from docubot.db import Database
from docubot.embed import Embedder
from docubot.rag.question import EMPTY_QUESTION_OUTCOME
from docubot.sessions.tables import session_turns, turn_feedback
from docubot.store import VectorStore

REFUSED_OUTCOMES = ("refused", "refused_by_model")
REASONS = ("refused", "low_confidence", "thumbs_down")
LOW_CONFIDENCE = '"confianca": "baixa"'
"""How a low-confidence contract reads in the call log's JSON (written with `json.dumps`)."""
DEFAULT_THRESHOLD = 0.86
"""Average cosine (multilingual-e5-small queries) above which two groups are one topic; measured
on 30 paraphrases of four topics (tests/test_gaps.py): 0.86 recovers the four (purity 0.97,
two singletons); 0.85 merges two topics, 0.90 splits them into ten groups."""
MAX_QUESTIONS = 2000
"""The most recent questions clustered (the clustering is cubic in their number)."""


@dataclass(frozen=True)
class GapQuestion:
    question: str
    ts: float
    reason: str
    """refused | low_confidence | thumbs_down"""
    comment: str | None = None
    """What the user wrote with a 👎."""


@dataclass
class GapCluster:
    representative: str
    count: int
    last_seen: str
    reasons: dict[str, int]
    nearest_page: dict[str, Any] | None
    questions: list[str] = field(default_factory=list)
    """Up to five distinct members, most similar to the representative first."""
    comments: list[str] = field(default_factory=list)
    """The distinct comments given with a 👎 on its members, newest first (at most ten)."""


@dataclass
class GapReport:
    days: float
    since: str
    questions: int
    sources: dict[str, int]
    """How many questions each reason contributed."""
    threshold: float
    clusters: list[GapCluster]

    def to_dict(self) -> dict[str, Any]:
        return {
            "days": self.days,
            "since": self.since,
            "questions": self.questions,
            "sources": self.sources,
            "threshold": self.threshold,
            "clusters": [c.__dict__ for c in self.clusters],
        }


def gap_questions(db: Database, since: float) -> tuple[list[GapQuestion], dict[str, int]]:
    """The questions worth a look since `since` (newest first, at most MAX_QUESTIONS), and how
    many each reason contributed."""
    with db.read() as conn:
        rows = conn.execute(
            select(calls.c.question, calls.c.ts, calls.c.outcome, calls.c.answer, calls.c.session_id)
            .where(
                calls.c.ts >= since,
                calls.c.outcome != EMPTY_QUESTION_OUTCOME,  # "?" is no gap in the docs
                or_(calls.c.outcome.in_(REFUSED_OUTCOMES), calls.c.answer.contains(LOW_CONFIDENCE)),
            )
            .order_by(calls.c.ts.desc())
            .limit(MAX_QUESTIONS)
        ).all()
        disliked = conn.execute(
            select(
                session_turns.c.question,
                session_turns.c.created_at,
                turn_feedback.c.comment,
                session_turns.c.session_id,
            )
            .join(
                turn_feedback,
                (turn_feedback.c.session_id == session_turns.c.session_id)
                & (turn_feedback.c.turn == session_turns.c.turn),
            )
            .where(turn_feedback.c.rating == "down", session_turns.c.created_at >= since)
            .order_by(session_turns.c.created_at.desc())
            .limit(MAX_QUESTIONS)
        ).all()
    found = [GapQuestion(question, ts, "thumbs_down", comment) for question, ts, comment, _ in disliked]
    rated = {(session_id, question) for question, _, _, session_id in disliked}
    for question, ts, outcome, answer, session_id in rows:
        if (session_id, question) in rated:
            continue  # the same turn, already counted as a 👎
        if outcome in REFUSED_OUTCOMES:
            found.append(GapQuestion(question, ts, "refused"))
        elif json.loads(answer).get("confianca") == "baixa":
            found.append(GapQuestion(question, ts, "low_confidence"))
    found = sorted(found, key=lambda q: q.ts, reverse=True)[:MAX_QUESTIONS]
    counts = Counter(q.reason for q in found)
    return found, {reason: counts[reason] for reason in REASONS}


def cluster(vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """Average-linkage agglomerative clustering of unit vectors, merging while the best pair of
    groups has an average cosine of at least `threshold`. Groups of row indices, largest first."""
    n = len(vectors)
    if n == 0:
        return []
    similarity = (vectors @ vectors.T).astype(np.float64)
    np.fill_diagonal(similarity, -np.inf)
    members: list[list[int] | None] = [[i] for i in range(n)]
    for _ in range(n - 1):
        flat = int(np.argmax(similarity))
        a, b = divmod(flat, n)
        if similarity[a, b] < threshold:
            break
        group_a, group_b = members[a], members[b]
        assert group_a is not None and group_b is not None
        size_a, size_b = len(group_a), len(group_b)
        merged = (size_a * similarity[a] + size_b * similarity[b]) / (size_a + size_b)
        similarity[a], similarity[:, a] = merged, merged
        similarity[a, a] = -np.inf
        similarity[b], similarity[:, b] = -np.inf, -np.inf
        members[a], members[b] = group_a + group_b, None
    groups = [g for g in members if g is not None]
    return sorted(groups, key=len, reverse=True)


def medoid(vectors: np.ndarray, group: list[int]) -> int:
    """The member most similar, in sum, to the others."""
    sub = vectors[group]
    return group[int(np.argmax((sub @ sub.T).sum(axis=1)))]


def gap_report(
    db: Database,
    store: VectorStore,
    embedder: Embedder,
    days: float = 30,
    threshold: float = DEFAULT_THRESHOLD,
    now: float | None = None,
) -> GapReport:
    """The clusters of refused, low-confidence and 👎 questions of the last `days` days."""
    since = (time.time() if now is None else now) - days * 86400
    questions, sources = gap_questions(db, since)
    vectors = (
        np.stack([embedder.embed_query(q.question) for q in questions])
        if questions
        else np.empty((0, embedder.dim), dtype=np.float32)
    )
    clusters = [_describe(questions, vectors, group, store) for group in cluster(vectors, threshold)]
    clusters.sort(key=lambda c: c.last_seen, reverse=True)
    clusters.sort(key=lambda c: c.count, reverse=True)  # largest first; ties: most recent first
    return GapReport(days, _iso(since), len(questions), sources, threshold, clusters)


def _describe(
    questions: list[GapQuestion], vectors: np.ndarray, group: list[int], store: VectorStore
) -> GapCluster:
    center = medoid(vectors, group)
    by_closeness = sorted(group, key=lambda i: -float(vectors[i] @ vectors[center]))
    examples = list(dict.fromkeys(questions[i].question for i in by_closeness))[:5]
    hits = store.query(vectors[center], 1)
    nearest = (
        {
            "url": hits[0].metadata["url"],
            "section": hits[0].metadata["section_path"],
            "similarity": round(hits[0].score, 4),
        }
        if hits
        else None
    )
    return GapCluster(
        representative=questions[center].question,
        count=len(group),
        last_seen=_iso(max(questions[i].ts for i in group)),
        reasons=dict(Counter(questions[i].reason for i in group)),
        nearest_page=nearest,
        questions=examples,
        comments=_comments(questions, group),
    )


def _comments(questions: list[GapQuestion], group: list[int]) -> list[str]:
    """The group's distinct 👎 comments, newest first, at most ten."""
    newest_first = sorted(group, key=lambda i: -questions[i].ts)
    return list(dict.fromkeys(c for i in newest_first if (c := questions[i].comment)))[:10]


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
