"""Semantic-cache evaluation: hit rate on same-meaning pairs, false-hit rate on look-alikes.

For every pair of `cache_pairs.jsonl` (evals/README.md) the question `a` plays the cached entry and
`b` the new question: a hit is similarity ≥ threshold (and, with the gate, the lexical gate's
consent). The sweep shows why the gate is not optional: without it, no usable threshold keeps
false hits near zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from docubot.cache.gate import lexical_gate
from docubot.eval.report import pyplot
from docubot.eval.sets import EvalSetError, read_jsonl

MAX_FALSE_HIT_RATE = 0.01


@dataclass(frozen=True)
class CachePair:
    id: str
    a: str
    b: str
    same: bool
    kind: str


@dataclass(frozen=True)
class ScoredPair:
    pair: CachePair
    similarity: float
    gate_passed: bool
    gate_reason: str


@dataclass(frozen=True)
class SweepPoint:
    threshold: float
    hit_rate: float
    false_hit_rate: float
    hit_rate_no_gate: float
    false_hit_rate_no_gate: float


@dataclass(frozen=True)
class CacheEvaluation:
    pairs: list[ScoredPair]
    threshold: float
    sweep: list[SweepPoint]

    def at(self, threshold: float, gate: bool = True) -> tuple[float, float]:
        """(hit rate on same pairs, false-hit rate on different pairs) at `threshold`."""
        same = [p for p in self.pairs if p.pair.same]
        different = [p for p in self.pairs if not p.pair.same]
        return _rate(same, threshold, gate), _rate(different, threshold, gate)

    def by_kind(self, threshold: float) -> dict[str, tuple[int, int, int]]:
        """kind → (pairs, hits with the gate, hits without it)."""
        kinds: dict[str, tuple[int, int, int]] = {}
        for p in self.pairs:
            n, gated, ungated = kinds.get(p.pair.kind, (0, 0, 0))
            kinds[p.pair.kind] = (
                n + 1,
                gated + _hit(p, threshold, True),
                ungated + _hit(p, threshold, False),
            )
        return kinds

    def recommended(self) -> float | None:
        """The threshold with the most same-meaning hits whose false-hit rate (gate on) is ≤ 1 %;
        among equals, the highest (the safest)."""
        fine = [s for s in self.sweep if s.false_hit_rate <= MAX_FALSE_HIT_RATE]
        if not fine:
            return None
        best = max(s.hit_rate for s in fine)
        return max(s.threshold for s in fine if s.hit_rate == best)

    def summary(self) -> dict[str, float | int | None]:
        hit, false_hit = self.at(self.threshold)
        hit_ng, false_hit_ng = self.at(self.threshold, gate=False)
        return {
            "pairs": len(self.pairs),
            "same_pairs": sum(p.pair.same for p in self.pairs),
            "threshold": self.threshold,
            "hit_rate": round(hit, 4),
            "false_hit_rate": round(false_hit, 4),
            "hit_rate_no_gate": round(hit_ng, 4),
            "false_hit_rate_no_gate": round(false_hit_ng, 4),
            "recommended_threshold": self.recommended(),
        }


def load_cache_pairs(path: Path) -> list[CachePair]:
    pairs = []
    for number, data in read_jsonl(path):
        try:
            pairs.append(
                CachePair(
                    str(data["id"]), str(data["a"]), str(data["b"]), bool(data["same"]), str(data["kind"])
                )
            )
        except KeyError as exc:
            raise EvalSetError(f"{path.name} line {number}: missing field {exc}") from exc
    if not any(p.same for p in pairs) or all(p.same for p in pairs):
        raise EvalSetError(f"{path.name}: needs both same-meaning and look-alike pairs")
    return pairs


def evaluate_cache(
    pairs: Sequence[CachePair],
    embed: Callable[[str], np.ndarray],
    threshold: float,
    progress: Callable[[], None] | None = None,
) -> CacheEvaluation:
    """Score every pair, then sweep thresholds 0.80–0.995 with and without the gate."""
    scored = []
    for pair in pairs:
        similarity = float(np.dot(embed(pair.a), embed(pair.b)))
        verdict = lexical_gate(pair.a, pair.b)
        scored.append(ScoredPair(pair, similarity, verdict.passed, verdict.reason))
        if progress:
            progress()
    evaluation = CacheEvaluation(scored, threshold, [])
    sweep = []
    for t in np.round(np.arange(0.80, 0.9951, 0.005), 3):
        hit, false_hit = evaluation.at(float(t))
        hit_ng, false_hit_ng = evaluation.at(float(t), gate=False)
        sweep.append(SweepPoint(float(t), hit, false_hit, hit_ng, false_hit_ng))
    return CacheEvaluation(scored, threshold, sweep)


def cache_markdown(evaluation: CacheEvaluation, title: str) -> str:
    s = evaluation.summary()
    lines = [
        f"# {title}",
        "",
        f"{s['pairs']} pairs ({s['same_pairs']} same meaning). Threshold {s['threshold']}.",
        "",
        "| | hit rate (same meaning) | false-hit rate (look-alikes) |",
        "|---|---|---|",
        f"| with the lexical gate | {s['hit_rate']:.1%} | {s['false_hit_rate']:.1%} |",
        f"| similarity alone | {s['hit_rate_no_gate']:.1%} | {s['false_hit_rate_no_gate']:.1%} |",
        "",
        f"Recommended threshold (most hits with ≤ 1 % false hits, gate on): {s['recommended_threshold']}",
        "",
        "| kind | pairs | hits with gate | hits without |",
        "|---|---|---|---|",
    ]
    for kind, (n, gated, ungated) in sorted(evaluation.by_kind(evaluation.threshold).items()):
        lines.append(f"| {kind} | {n} | {gated} | {ungated} |")
    lines += ["", "## Pairs", "", "| id | same | similarity | gate | a | b |", "|---|---|---|---|---|---|"]
    for p in evaluation.pairs:
        gate = "pass" if p.gate_passed else p.gate_reason
        lines.append(
            f"| {p.pair.id} | {p.pair.same} | {p.similarity:.3f} | {gate} | {p.pair.a} | {p.pair.b} |"
        )
    return "\n".join(lines) + "\n"


def plot_cache_sweep(evaluation: CacheEvaluation, path: Path) -> Path | None:
    plt = pyplot()
    if plt is None:
        return None
    xs = [s.threshold for s in evaluation.sweep]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(xs, [s.hit_rate for s in evaluation.sweep], label="hits, gate", color="#3b6ea8")
    ax.plot(xs, [s.false_hit_rate for s in evaluation.sweep], label="false hits, gate", color="#c0392b")
    ax.plot(xs, [s.hit_rate_no_gate for s in evaluation.sweep], "--", label="hits, no gate", color="#3b6ea8")
    ax.plot(
        xs,
        [s.false_hit_rate_no_gate for s in evaluation.sweep],
        "--",
        label="false hits, no gate",
        color="#c0392b",
    )
    ax.axvline(evaluation.threshold, color="grey", linewidth=0.8)
    ax.set_xlabel("cosine threshold")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _hit(p: ScoredPair, threshold: float, gate: bool) -> bool:
    return p.similarity >= threshold and (p.gate_passed or not gate)


def _rate(pairs: Sequence[ScoredPair], threshold: float, gate: bool) -> float:
    return sum(_hit(p, threshold, gate) for p in pairs) / len(pairs) if pairs else 0.0
