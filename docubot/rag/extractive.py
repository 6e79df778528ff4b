"""The `none` provider: an answer made of the docs' own sentences, always grounded, no LLM.

Also the degradation path when the chat model fails: the user still gets the most relevant
passages with their sources.
"""

from __future__ import annotations

from collections.abc import Sequence

from docubot.rag.contract import Answer
from docubot.store import Hit
from docubot.text import content_stems, fold, sentences

MAX_SENTENCES = 3


def extractive_answer(
    question: str,
    hits: Sequence[Hit],
    categories: Sequence[str],
    threshold: float,
    degraded: bool = False,
) -> Answer:
    """The sentences of the best fragments that share most words with the question."""
    top = list(hits[:2])
    question_stems = content_stems(question)
    candidates: list[tuple[float, int, str]] = []
    for rank, hit in enumerate(top):
        body = hit.text.split("\n", 1)[-1]
        for position, sentence in enumerate(sentences(body)):
            if sentence.startswith(("```", "~~~", "|")):
                continue
            overlap = len(content_stems(sentence) & question_stems)
            candidates.append((overlap - 0.5 * rank - 0.01 * position, rank * 1000 + position, sentence))
    best = sorted(candidates, reverse=True)[:MAX_SENTENCES]
    chosen = [s for _, _, s in sorted(best, key=lambda c: c[1])]
    text = " ".join(chosen) or top[0].text.split("\n", 1)[-1][:500]
    return Answer(
        categoria=_category(top[0].metadata["url"], categories),
        resposta=text,
        fonts=sorted({h.metadata["url"] for h in top}),
        confianca="baixa" if degraded else _confidence(top[0].score, threshold),
    )


def _confidence(score: float, threshold: float) -> str:
    if score >= threshold + 0.05:
        return "alta"
    return "mitjana" if score >= threshold + 0.02 else "baixa"


def _category(url: str, categories: Sequence[str]) -> str:
    folded = fold(url)
    for category in categories:
        if category != "altres" and fold(category)[:6] in folded:
            return category
    return "altres" if "altres" in categories else categories[-1]
