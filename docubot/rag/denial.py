"""A denial the documentation states, found for a "can I…?" question.

"Puc allargar un token que està a punt de caducar?" — the docs say "La durada d'un token no es pot
allargar". The small model reads "the docs say it cannot be done" as "the docs do not say" and
refuses, or answers from a neighbouring sentence ("La pestanya Activitat mostra l'historial…" for
"puc esborrar l'historial?"). When a question asks whether something can be done, a shown sentence
that denies it answers it:

- a negation ("no", "mai", "not") followed, within its clause, by one of the question's words
  ("no es pot modificar ni esborrar" for "puc esborrar…?");
- not a condition ("Si no pots iniciar la sessió…" states no denial);
- about nothing the question does not name ("El pla Starter … no permet exportar" does not answer
  "can I export with Business?");
- in a fragment that names every name the question names (a question about Google is not answered
  by a passage about passwords that never mentions Google).

The sentence is compared with the question in the docs' language (the translated question, for a
question asked in another one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from docubot.rag.asking import ABILITY, CONDITIONS
from docubot.rag.claims import POLARITY_NEGATIONS, holds_a_denial
from docubot.rag.contract import ModelOutput, Quote
from docubot.rag.evidence import VerifiedQuote
from docubot.rag.prompt import Fragment
from docubot.rag.refusal import question_terms
from docubot.text import content_stems, fold, question_parts, sentences

CLAUSE_WORDS = 6
"""Most words after the negation that belong to what it denies (a clause ends it sooner)."""
_TOKEN = re.compile(r"\w+|[,;:.()]")


def asks_ability(question: str) -> bool:
    """Whether the question asks if something can be done ("puc…?", "can I…?", "¿se puede…?")."""
    return bool(ABILITY.search(fold(question)))


def stated_denial(question: str, fragments: Sequence[Fragment]) -> VerifiedQuote | None:
    """The shown sentence that denies what `question` asks can be done, or None: the one sharing
    most of the question's words, on ties the one in the later fragment (the prompt shows the best
    fragment last)."""
    if not asks_ability(question) or len(question_parts(question)) > 1:
        return None  # a denial answers one question, not a message that asks several
    asked = content_stems(question)
    names = question_terms(question).salient
    asked_words = set(re.findall(r"\w+", fold(question)))
    found: list[tuple[int, int, VerifiedQuote]] = []
    for number, fragment in enumerate(fragments, 1):
        folded_fragment = fold(fragment.text)
        if any(name not in folded_fragment for name in names):
            continue
        for sentence in sentences(fragment.text):
            if _denies(sentence, asked, asked_words):
                shared = len(content_stems(sentence) & asked)
                found.append((shared, number, VerifiedQuote(number, sentence.strip(), 0)))
    return max(found, key=lambda item: (item[0], item[1]))[2] if found else None


def _denies(sentence: str, asked: set[str], asked_words: set[str]) -> bool:
    """A negation in `sentence`, not under a condition, followed within its clause by an asked
    word, and whose subject names nothing the question does not ("El pla Starter … no permet
    exportar" does not answer "can I export with Business?")."""
    tokens = _TOKEN.findall(fold(sentence))
    names = set(question_terms(sentence).salient)
    clause_start = 0
    for index, token in enumerate(tokens):
        if not token[0].isalnum():
            clause_start = index + 1
            continue
        if token not in POLARITY_NEGATIONS or CONDITIONS & set(tokens[clause_start:index]):
            continue
        if (names & set(tokens[:index])) - asked_words:
            continue
        denied: list[str] = []
        for word in tokens[index + 1 : index + 1 + CLAUSE_WORDS]:
            if not word[0].isalnum():
                break
            denied.append(word)
        if content_stems(" ".join(denied)) & asked:
            return True
    return False


def negates(text: str) -> bool:
    """Whether `text` denies something ("no", "mai", "cannot", "don't")."""
    return holds_a_denial(text) or "n't" in fold(text)


def denial_answer(denial: VerifiedQuote) -> ModelOutput:
    """The denial itself as the answer, quoting itself (verified and translated like any answer)."""
    return ModelOutput(
        evidencia=[Quote(fragment=denial.fragment, cita=denial.text)],
        resposta=denial.text.replace("**", ""),
        confianca="mitjana",
    )
