"""`docubot eval retrieval` and `docubot eval refusal`: measured on a labelled set."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from docubot.eval.metrics import ThresholdPoint, auroc, mrr, pick_threshold, recall_at, sweep
from docubot.eval.sets import Gold, RetrievalCase
from docubot.rag.retrieve import Mode, RankedHit, Retriever
from docubot.store import Hit

KS = (1, 3, 5, 10)


@dataclass
class CaseOutcome:
    case: RetrievalCase
    rank: int | None
    """The position (from 1) of the first chunk from a gold section; None when none was found."""
    hits: list[RankedHit]

    @property
    def scores(self) -> list[float]:
        return [h.score for h in self.hits]

    @property
    def top_sections(self) -> list[str]:
        return [h.metadata["section_path"] for h in self.hits]

    @property
    def best(self) -> float:
        """The highest cosine similarity among the retrieved chunks (the refusal signal)."""
        return max(self.scores, default=0.0)

    @property
    def margin(self) -> float:
        ordered = sorted(self.scores, reverse=True)
        return ordered[0] - ordered[1] if len(ordered) > 1 else self.best

    @property
    def best_keyword(self) -> float:
        return max((h.keyword_score or 0.0 for h in self.hits), default=0.0)

    def logged(self) -> dict[str, Any]:
        """The per-question line of `retrieval-<mode>.jsonl`: the ranking as `search` and `ask` log it."""
        return {
            "id": self.case.id,
            "question": self.case.question,
            "gold_rank": self.rank,
            "retrieved": [h.logged() for h in self.hits],
        }


@dataclass
class RetrievalReport:
    outcomes: list[CaseOutcome]
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def answerable(self) -> list[CaseOutcome]:
        return [o for o in self.outcomes if o.case.answerable]

    @property
    def misses(self) -> list[CaseOutcome]:
        return [o for o in self.answerable if o.rank is None or o.rank > 5]


def gold_rank(hits: Sequence[Hit], gold: Sequence[Gold]) -> int | None:
    """The position (from 1) of the first hit from a gold section; None when there is none."""
    wanted = {(g.url, g.section) for g in gold}
    return next(
        (i for i, h in enumerate(hits, 1) if (h.metadata["url"], h.metadata["section_path"]) in wanted), None
    )


def run_cases(
    cases: Sequence[RetrievalCase],
    retriever: Retriever,
    k: int = 10,
    mode: Mode | None = None,
    progress: Callable[[], None] | None = None,
) -> RetrievalReport:
    """Retrieve for every case with the retriever `ask` and `search` use (latest docs)."""
    outcomes = []
    for case in cases:
        hits = retriever.search(case.question, k=k, mode=mode).hits
        outcomes.append(CaseOutcome(case, gold_rank(hits, case.gold), hits))
        if progress:
            progress()
    report = RetrievalReport(outcomes)
    ranks = [o.rank for o in report.answerable]
    report.metrics = {f"recall@{k}": round(recall_at(ranks, k), 4) for k in KS}
    report.metrics["mrr"] = round(mrr(ranks), 4)
    report.metrics["questions"] = len(ranks)
    return report


@dataclass
class SignalResult:
    name: str
    auroc: float
    chosen: ThresholdPoint | None
    points: list[ThresholdPoint]


def refusal_signals(report: RetrievalReport, min_precision: float) -> list[SignalResult]:
    """How well each retrieval signal separates answerable from unanswerable questions."""
    signals: dict[str, Callable[[CaseOutcome], float]] = {
        "best_similarity": lambda o: o.best,
        "margin_top1_top2": lambda o: o.margin,
        "best_bm25": lambda o: o.best_keyword,
    }
    results = []
    for name, signal in signals.items():
        good = [signal(o) for o in report.outcomes if o.case.answerable]
        bad = [signal(o) for o in report.outcomes if not o.case.answerable]
        points = sweep(good, bad)
        results.append(
            SignalResult(name, round(auroc(good, bad), 4), pick_threshold(points, min_precision), points)
        )
    return results
