"""The `none` provider: an answer made of the docs' own sentences, always grounded, no LLM.

Also the degradation path when the chat model fails: the user still gets the most relevant
passages with their sources.
"""

from __future__ import annotations

from collections.abc import Sequence

from docubot.rag.category import page_category
from docubot.rag.contract import Answer
from docubot.store import Hit
from docubot.text import DEFAULT_LANGUAGE, content_stems, detect_language, sentences

MAX_SENTENCES = 3
DEGRADED_LEAD = {
    "ca": "No he pogut redactar una resposta verificada; això és el que diu la documentació:",
    "es": "No he podido redactar una respuesta verificada; esto es lo que dice la documentación:",
    "en": "I could not write a verified answer; this is what the documentation says:",
}


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
    if degraded:
        text = f"{DEGRADED_LEAD[detect_language(question, fallback=_docs_language(top))]} {text}"
    return Answer(
        categoria=page_category(top[0].metadata, categories),
        resposta=text,
        fonts=sorted({h.metadata["url"] for h in top}),
        confianca="baixa" if degraded else _confidence(top[0].score, threshold),
    )


def _docs_language(hits: Sequence[Hit]) -> str:
    """The language of the quoted fragments: what a question too short to tell is answered in."""
    return detect_language(" ".join(h.text for h in hits), fallback=DEFAULT_LANGUAGE)


def _confidence(score: float, threshold: float) -> str:
    if score >= threshold + 0.05:
        return "alta"
    return "mitjana" if score >= threshold + 0.02 else "baixa"
