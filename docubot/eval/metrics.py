"""Plain metric functions: ranks, recall@k, MRR, AUROC, threshold sweeps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """Share of questions whose first gold hit is within the top `k` (ranks start at 1)."""
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def mrr(ranks: Sequence[int | None], cutoff: int = 10) -> float:
    return sum(1 / r for r in ranks if r is not None and r <= cutoff) / len(ranks) if ranks else 0.0


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Probability that a positive scores above a negative (ties count half): Mann–Whitney."""
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


@dataclass(frozen=True)
class ThresholdPoint:
    threshold: float
    kept_answerable: float
    """Share of answerable questions at or above the threshold (answered)."""
    rejected_unanswerable: float
    """Share of unanswerable questions under the threshold (refused)."""
    refusal_precision: float
    """Of all refused questions, the share that really were unanswerable."""


def sweep(answerable: Sequence[float], unanswerable: Sequence[float]) -> list[ThresholdPoint]:
    """Every distinct score as a candidate threshold (refuse when score < threshold)."""
    candidates = sorted(set(answerable) | set(unanswerable))
    candidates.append(candidates[-1] + 1e-6 if candidates else 1.0)
    points = []
    for t in candidates:
        refused_good = sum(s < t for s in unanswerable)
        refused_bad = sum(s < t for s in answerable)
        refused = refused_good + refused_bad
        points.append(
            ThresholdPoint(
                threshold=t,
                kept_answerable=sum(s >= t for s in answerable) / len(answerable) if answerable else 0.0,
                rejected_unanswerable=refused_good / len(unanswerable) if unanswerable else 0.0,
                refusal_precision=refused_good / refused if refused else 1.0,
            )
        )
    return points


def pick_threshold(points: Sequence[ThresholdPoint], min_precision: float) -> ThresholdPoint | None:
    """The threshold that refuses something, keeps the most answerable questions, and whose refusals
    are right at least `min_precision` of the time; then the one rejecting most unanswerable ones."""
    valid = [p for p in points if p.refusal_precision >= min_precision and p.rejected_unanswerable > 0]
    if not valid:
        return None
    return max(valid, key=lambda p: (p.kept_answerable, p.rejected_unanswerable))
