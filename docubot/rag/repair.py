"""Mending a verified reply from the evidence it was shown, without asking the model again.

The small model often has the right sentence in front of it and still answers wrong: it refuses
although the docs deny what was asked ("no es pot allargar"), answers from a neighbouring sentence
after quoting the right one, or gives the first step of the three it quoted. Each repair here uses
text that was already checked word for word (a verified quote, a shown sentence), never new words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from docubot.rag.claims import left_out
from docubot.rag.contract import ModelOutput, is_refusal_text
from docubot.rag.denial import negates, stated_denial
from docubot.rag.evidence import VerifiedQuote, holds
from docubot.rag.prompt import Fragment
from docubot.rag.verify import Verdict, answer_from_quotes, quoted_denial


def model_refused(output: ModelOutput) -> bool:
    """The model's own "not in the docs": the fixed phrase, or nothing cited with low confidence."""
    cited = output.fonts if output.evidencia is None else output.evidencia
    return is_refusal_text(output.resposta) or (not cited and output.confianca == "baixa")


def unheeded_denial(
    output: ModelOutput, searched: str, fragments: Sequence[Fragment]
) -> VerifiedQuote | None:
    """The fragments' denial of what a "can I…?" question asks, when the reply neither quotes a
    denial nor states one: a refusal that quoted another sentence, or an answer that says nothing
    against it ("La pestanya Activitat mostra l'historial…" for "puc esborrar l'historial?")."""
    if quoted_denial(output, fragments) or (not model_refused(output) and negates(output.resposta)):
        return None
    return stated_denial(searched, fragments)


def denied_reply(output: ModelOutput) -> str:
    return "refusal" if model_refused(output) else "answer"


def anchored(
    output: ModelOutput,
    verdict: Verdict,
    question: str,
    checks: list[dict[str, Any]],
    status: Callable[[str], None],
    on_text: Callable[[str], None] | None,
) -> tuple[ModelOutput, Verdict]:
    """A verified answer whose sentences stray from the fragments it quotes (the small model
    quotes the right sentence, then answers from a neighbouring one) replaced by those quotes,
    which were checked word for word; else the answer, `completed` from them. Only with quotes in
    the question's language."""
    quoted = answer_from_quotes(verdict.quotes, question)
    if quoted is None:  # no quotes, or in another language than the question's
        return output, verdict
    if verdict.words_supported:
        return completed(output, verdict, question, checks, on_text), verdict
    if holds(output.resposta, quoted.resposta):
        return output, verdict  # an answer that states its quotes word for word keeps its own words
    status("the answer strayed from its quotes; answering with the quotes")
    checks.append({"check": "quotes_as_answer", "replaced": verdict.unsupported_sentences})
    if on_text:
        on_text(f"\n\n{quoted.resposta}")
    return quoted, replace(verdict, words_supported=True, unsupported_sentences=[])


def completed(
    output: ModelOutput,
    verdict: Verdict,
    question: str,
    checks: list[dict[str, Any]],
    on_text: Callable[[str], None] | None,
) -> ModelOutput:
    """The answer followed by those of its verified quotes (in the question's language) that hold
    a number, menu path, identifier or plan name it left out (the small model quoted the three steps
    of a procedure and answered with the first)."""
    missing = [q.text for q in verdict.quotes if left_out(q.text, output.resposta, question)]
    if not missing:
        return output
    added = " ".join(missing)
    checks.append({"check": "completed_from_quotes", "added": len(missing)})
    if on_text:
        on_text(f" {added}")
    return output.model_copy(update={"resposta": f"{output.resposta.rstrip()} {added}"})
