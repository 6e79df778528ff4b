"""A cheap groundedness check: is each sentence of the answer supported by the cited fragments?

A sentence is supported when at least half of its content words (by 5-letter stem, accents
folded) occur in the fragments. Embedding similarity was measured and rejected as a second
signal: with e5, an invented sentence on the fragment's topic scores as high (0.87–0.89) as a
correct paraphrase (0.88–0.91). Unsupported answers are downgraded by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from docubot.text import content_stems, sentences

LEXICAL_SUPPORT = 0.5


@dataclass
class GroundingReport:
    supported: bool
    unsupported_sentences: list[str] = field(default_factory=list)


def check_grounding(answer: str, fragments: Sequence[str]) -> GroundingReport:
    """Flag the sentences of `answer` that the fragments do not support."""
    fragment_stems = set().union(*(content_stems(f) for f in fragments)) if fragments else set()
    doubtful = []
    for sentence in sentences(answer):
        stems = content_stems(sentence)
        if stems and len(stems & fragment_stems) / len(stems) < LEXICAL_SUPPORT:
            doubtful.append(sentence)
    return GroundingReport(supported=not doubtful, unsupported_sentences=doubtful)


def support(answer: str, fragment: str) -> float:
    """Share of the answer's content stems found in the fragment."""
    stems = content_stems(answer)
    return len(stems & content_stems(fragment)) / len(stems) if stems else 0.0


def repair_citations(
    answer: str, fragments: Sequence[str], cited: Sequence[int], slack: float = 0.15
) -> list[int]:
    """The cited fragment numbers, or the best-supporting fragment when the answer's words come
    clearly (`slack`) more from another fragment than from any cited one. Small models cite the
    wrong number far more often than they copy the wrong text. No citation stays no citation."""
    if not fragments or not cited:
        return list(cited)
    scores = [support(answer, f) for f in fragments]
    best = max(range(len(scores)), key=lambda i: scores[i]) + 1
    cited_best = max((scores[n - 1] for n in cited), default=0.0)
    return list(cited) if cited_best >= scores[best - 1] - slack else [best]
