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
MISS_DEPTH = 20
"""A question whose gold is not in the first `MISS_DEPTH` hits is a deep miss: no reranker or
focused-context step after retrieval can recover it."""


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
    """recall@1/3/5/10, `mrr` (MRR@10), `miss@20` (when retrieved that deep), `questions`."""
    splits: dict[str, dict[str, float]] = field(default_factory=dict)
    """The same measures per split of the set (`tune`, `holdout`), when it has splits."""

    def flat_metrics(self) -> dict[str, float]:
        """The measures, then each split's under `<split>.` (`tune.recall@5`): the `--json` keys."""
        flat = dict(self.metrics)
        for split, metrics in self.splits.items():
            flat.update({f"{split}.{name}": value for name, value in metrics.items()})
        return flat

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
    k: int = MISS_DEPTH,
    mode: Mode | None = None,
    progress: Callable[[], None] | None = None,
) -> RetrievalReport:
    """Retrieve the first `k` for every case with the retriever `ask` and `search` use (latest
    docs), and measure; the deep-miss rate needs `k` ≥ `MISS_DEPTH`."""
    outcomes = []
    for case in cases:
        hits = retriever.search(case.question, k=k, mode=mode).hits
        outcomes.append(CaseOutcome(case, gold_rank(hits, case.gold), hits))
        if progress:
            progress()
    return measure(outcomes, depth=k)


def measure(outcomes: list[CaseOutcome], depth: int) -> RetrievalReport:
    """The report of retrieved cases: over all of them and, when the set is split, per split."""
    report = RetrievalReport(outcomes, rank_metrics([o.rank for o in outcomes if o.case.answerable], depth))
    for split in sorted({o.case.split for o in outcomes if o.case.split}, key=_split_order):
        ranks = [o.rank for o in outcomes if o.case.answerable and o.case.split == split]
        report.splits[split] = rank_metrics(ranks, depth)
    return report


def rank_metrics(ranks: Sequence[int | None], depth: int) -> dict[str, float]:
    """recall@1/3/5/10, MRR@10, the share of gold not in the first `MISS_DEPTH` (only when the
    rankings went `depth` ≥ `MISS_DEPTH` deep), and the number of questions."""
    metrics = {f"recall@{k}": round(recall_at(ranks, k), 4) for k in KS}
    metrics["mrr"] = round(mrr(ranks), 4)
    if depth >= MISS_DEPTH:
        metrics[f"miss@{MISS_DEPTH}"] = round(1 - recall_at(ranks, MISS_DEPTH), 4)
    metrics["questions"] = len(ranks)
    return metrics


def _split_order(split: str) -> tuple[int, str]:
    return ({"tune": 0, "holdout": 1}.get(split, 2), split)


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
