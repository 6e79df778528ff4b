"""Checking a model's answer before it is returned: quotes, claims, relevance, language, words.

1. **Quotes** (`evidencia`): each must occur in a shown fragment (`evidence.py`); the fragments
   holding verified quotes are the answer's sources. None verified → the answer is rejected.
   A reply in the older contract (no `evidencia`, fragment numbers in `fonts`) is cited by those
   numbers, repaired when its words clearly come from another fragment.
2. **Claims** (`claims.py`): numbers, menu paths, identifiers, plan names, negations and "only"
   must be supported by the cited fragments (older contract: by the fragments shown); a flipped
   yes/no or an echoed question is rejected.
3. **Relevance** (`check_relevance`, called when the question can be read in the docs' language):
   an answer none of whose quotes stands in a line sharing a content word with the question is
   rejected (a true sentence about something else).
4. **Language**: an answer that is clearly in another language than the one it was asked in (the
   small model copies its Catalan quotes as the answer to a Spanish or English question) is a
   `soft` problem: the answer is translated (`translate.py`) and checked again, and stands as it
   is when the translation fails.
5. **Words** (`grounding.py`): when the answer is in the docs' language, sentences whose words are
   mostly absent from the cited fragments lower the confidence (not a rejection: a paraphrase may
   be right). Skipped across languages, where word overlap means nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from docubot.rag.claims import ClaimReport, check_claims, holds_a_denial
from docubot.rag.contract import ModelOutput, Quote, sources_for
from docubot.rag.evidence import VerifiedQuote, quoted_lines, verify_quotes
from docubot.rag.grounding import check_grounding, repair_citations
from docubot.rag.prompt import REFUSAL_TEXT, Fragment, answer_language
from docubot.text import DEFAULT_LANGUAGE, detect_language, guess_language, loose_stems


@dataclass
class Verdict:
    cited: list[int]
    """1-based numbers of the fragments the answer rests on (empty: none identified)."""
    quotes: list[VerifiedQuote] = field(default_factory=list)
    claims: ClaimReport = field(default_factory=ClaimReport)
    words_supported: bool = True
    unsupported_sentences: list[str] = field(default_factory=list)
    problem: str | None = None
    """Why the answer must be rejected (None: it passed)."""
    note: str = ""
    """What to tell the model when asking again."""
    checks: list[dict[str, Any]] = field(default_factory=list)
    repaired_from: list[int] | None = None
    """The fragment numbers the model cited when the citation was repaired."""
    wanted_language: str = ""
    """The language the answer should be in, when it is in another one (`written_language`)."""
    written_language: str = ""

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def soft(self) -> bool:
        """The problem is the answer's language: it is translated, and stands as it is otherwise."""
        return self.problem is not None and bool(self.wanted_language)


def verify(output: ModelOutput, fragments: Sequence[Fragment], question: str) -> Verdict:
    """Every check on `output`, recorded in `checks`; `problem` set when it must be rejected."""
    verdict = _cited(output, fragments)
    if output.evidencia is not None and not verdict.quotes:
        verdict.problem = "no quote in `evidencia` occurs in the fragments"
        verdict.note = (
            'Cap de les frases de "evidencia" no surt als fragments. Copia-hi, lletra per lletra, '
            "les frases dels fragments que responen la pregunta i respon només a partir d'elles."
        )
        return verdict
    cited = [fragments[n - 1].text for n in verdict.cited] or [f.text for f in fragments]
    focus = [q.text for q in verdict.quotes] or None
    # Quotes pin the evidence down; a bare fragment number does not (small models cite the wrong
    # one), so an answer in the older contract is checked against every fragment it was shown.
    evidence = cited if output.evidencia is not None else [f.text for f in fragments]
    verdict.claims = check_claims(output.resposta, evidence, question, focus)
    verdict.checks.append(
        {
            "check": "claims",
            "ok": verdict.claims.supported,
            "checked": verdict.claims.checked,
            "unsupported": [c.describe() for c in verdict.claims.unsupported],
        }
    )
    if not verdict.claims.supported:
        verdict.problem = f"unsupported claims: {verdict.claims.problem()}"
        verdict.note = (
            f"La resposta anterior diu coses que els fragments citats no diuen: {verdict.claims.problem()}. "
            'Torna a respondre: copia a "evidencia" les frases que responen la pregunta i escriu la '
            "resposta només amb el que diuen (mateixos números, rutes, noms i negacions)."
        )
        return verdict
    _check_language(verdict, output.resposta, question, fragments)
    _check_words(verdict, output.resposta, cited)
    return verdict


def check_relevance(verdict: Verdict, question: str, fragments: Sequence[Fragment]) -> None:
    """Reject an answer none of whose quotes stands in a line sharing a content word with the
    question (in the docs' language): "Can my webhook endpoint be plain http?" answered with
    "Tria els esdeveniments que vols rebre…", a true sentence about something else. The line, not
    the quote alone: a quoted cell counts with its spelled-out row ("Business — Preu…: 12 €")."""
    if not verdict.quotes or not (verdict.ok or verdict.soft):
        return
    asked = loose_stems(question)
    ok = any(loose_stems(quoted_lines(q.text, fragments[q.fragment - 1])) & asked for q in verdict.quotes)
    verdict.checks.append({"check": "relevance", "ok": ok})
    if not ok:
        verdict.problem = "no quote is about what the question asks"
        verdict.wanted_language = verdict.written_language = ""  # not a language problem any more
        verdict.note = (
            'Les frases de "evidencia" no parlen del que demana la pregunta. Copia-hi, lletra per '
            "lletra, les frases dels fragments que la responen i respon només a partir d'elles."
        )


def _check_language(verdict: Verdict, answer: str, question: str, fragments: Sequence[Fragment]) -> None:
    """A soft problem when the answer is clearly in another language than the one asked for."""
    wanted = answer_language(question, fragments)
    written = guess_language(answer)
    ok = written is None or written == wanted
    verdict.checks.append({"check": "language", "ok": ok, "wanted": wanted, "written": written})
    if not ok:
        verdict.problem = f"the answer is in {written}, the question was asked in {wanted}"
        verdict.wanted_language, verdict.written_language = wanted, written or ""


def _cited(output: ModelOutput, fragments: Sequence[Fragment]) -> Verdict:
    """The fragments the answer rests on: those of its verified quotes, or (older contract) the
    cited numbers, repaired from the answer's words."""
    if output.evidencia is not None:
        quotes = verify_quotes(output.evidencia, fragments)
        verdict = Verdict(sorted({q.fragment for q in quotes}), quotes)
        verdict.checks.append(
            {
                "check": "quotes",
                "ok": bool(quotes),
                "given": len(output.evidencia),
                "verified": len(quotes),
                "moved": sum(q.claimed not in (0, q.fragment) for q in quotes),
            }
        )
        return verdict
    _, valid = sources_for(output.fonts, fragments)
    numbers = repair_citations(output.resposta, [f.text for f in fragments], valid)
    verdict = Verdict(numbers)
    if numbers != valid:
        verdict.repaired_from = list(output.fonts)
    verdict.checks.append(
        {"check": "citations", "ok": bool(numbers), "cited": numbers, "model": output.fonts}
    )
    return verdict


def _check_words(verdict: Verdict, answer: str, cited: Sequence[str]) -> None:
    docs_language = detect_language(" ".join(cited), fallback=DEFAULT_LANGUAGE)
    if detect_language(answer, fallback=docs_language) != docs_language:
        verdict.checks.append({"check": "words", "ok": True, "skipped": "answer and docs in other languages"})
        return
    grounding = check_grounding(answer, cited)
    verdict.words_supported = grounding.supported
    verdict.unsupported_sentences = grounding.unsupported_sentences
    verdict.checks.append(
        {"check": "words", "ok": grounding.supported, "unsupported": grounding.unsupported_sentences}
    )


def quoted_denial(output: ModelOutput, fragments: Sequence[Fragment]) -> list[VerifiedQuote]:
    """The verified quotes of a reply that refused although it quoted a denial ("no està
    disponible", "no es pot"): the small model mistakes "the docs say it is not possible" for "the
    docs do not say". Empty when nothing verified denies anything."""
    quotes = verify_quotes(output.evidencia or [], fragments)
    if any(holds_a_denial(q.text) for q in quotes):  # "**no"
        return quotes
    return []


def answer_from_quotes(quotes: Sequence[VerifiedQuote], question: str) -> ModelOutput | None:
    """The verified quotes themselves as the answer, when they are in the question's language
    (None otherwise, or without quotes: the model must be asked again to answer in it)."""
    text = " ".join(q.text.replace("**", "").strip() for q in quotes)
    if not text:
        return None
    language = detect_language(text, fallback=DEFAULT_LANGUAGE)
    if detect_language(question, fallback=language) != language:
        return None
    evidence = [Quote(fragment=q.fragment, cita=q.text) for q in quotes]
    return ModelOutput(evidencia=evidence, resposta=text, confianca="mitjana")


DENIAL_NOTE = (
    'Les frases que has copiat a "evidencia" sí que responen la pregunta: la documentació diu que '
    f"no és possible o no està disponible. No responguis «{REFUSAL_TEXT}»: digues que no és possible, "
    "amb les mateixes paraules de les cites, i dona l'alternativa que indiquin."
)
"""The corrective note after a `quoted_denial` in another language than the question's."""
