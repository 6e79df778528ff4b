"""Whether passages state the quantity a question asks for.

A question asking how many, how much, how long, or for a maximum is answered only by a number, and
not by any number:

- a number written into a name or code is no amount: "/v1/webhooks", "2xx", "SHA256", "del 3T"
  ("is there a max number of webhooks…?" got the sentence naming `POST /v1/webhooks`);
- a count of things ("quants caràcters…?", "how many seats…?") is not answered by durations alone
  ("quants caràcters pot tenir el títol?" got "una acció de cinc minuts");
- a rate per unit of time ("¿cuántos eventos por segundo…?", "quantes peticions per minut?") needs
  a number stated per that unit ("100 peticions per minut"), not "no respon en 10 segons".

Words are read in Catalan, Spanish and English, on both sides: the question as asked or as
searched, and passages in the docs' language.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from docubot.rag.numbers import number_matches
from docubot.text import fold

_QUANTITY = re.compile(
    r"\b(?:quant[a-z]*|cuant[a-z]*|how (?:many|much|long|often)|maxim[a-z]*|minim[a-z]*|max|min)\b"
)
_TIME_UNITS = {
    "second": r"segon|segund|second",
    "minute": r"minut",
    "hour": r"hora|hour",
    "day": r"dia|day",
}
"""Units of time a rate is asked per, as their words begin in the three languages."""
_ABBREVIATED = {"second": "s|seg", "minute": "min", "hour": "h", "day": "d"}
"""Their abbreviations after a slash: "20 esdeveniments/s", "100 req/min"."""
_DURATION_WORD = re.compile("|".join([*_TIME_UNITS.values(), "setman|seman|week|mes|month|any|ano|year"]))
_COUNTED = re.compile(r"\b(?:quants|quantes|cuantos|cuantas|how many)\s+(?:de\s+)?([a-z]+)")
_RATE = re.compile(r"\b(?:per|por|a|an|each|every|cada)\s+(?:cada\s+)?([a-z]+)")
_GLUED_BEFORE = re.compile(r"[a-z_/]$")
_UNIT_SUFFIX = re.compile(r"(?:gb|mb|kb|tb|h|s|ms|min)\b")


def asks_quantity(question: str) -> bool:
    """The question asks how many, how much, how long, or for a maximum or minimum."""
    return _QUANTITY.search(fold(question)) is not None


def states_the_quantity(text: str, questions: Sequence[str]) -> bool:
    """`text` states a number of the kind `questions` ask for (any amount for a question that asks
    no quantity, or one whose kind is not told)."""
    folded_questions = [fold(q) for q in questions]
    if not any(_QUANTITY.search(q) for q in folded_questions):
        return True
    folded = fold(text)
    found = amount_spans(folded)
    if not found:
        return False
    for unit in {u for q in folded_questions for u in _rate_units(q)}:
        if not any(_per(folded, end, unit) for _, end in found):
            return False
    if any(_counts_things(q) for q in folded_questions):
        return not all(_duration(folded, end) for _, end in found)
    return True


def amount_spans(folded: str) -> list[tuple[int, int]]:
    """(start, end) of each number in folded text that is an amount, not part of a name or code."""
    return [(start, end) for start, end, _ in number_matches(folded) if not _glued(folded, start, end)]


def _glued(folded: str, start: int, end: int) -> bool:
    """The number is written into a word: "v1", "/v1/", "2xx", "sha256", "3t" (not "100mb", "24h")."""
    if _GLUED_BEFORE.search(folded[:start]):
        return True
    after = folded[end:]
    return bool(after[:1].isalpha()) and not _UNIT_SUFFIX.match(after)


def _rate_units(folded_question: str) -> list[str]:
    """The units of time `folded_question` asks a rate per ("por segundo", "per minut", "an hour")."""
    if not _QUANTITY.search(folded_question):
        return []
    return [
        unit
        for match in _RATE.finditer(folded_question)
        for unit, words in _TIME_UNITS.items()
        if re.match(rf"(?:{words})", match.group(1))
    ]


def _per(folded: str, number_end: int, unit: str) -> bool:
    """A number ending at `number_end` is stated per `unit` within its clause ("100 peticions per minut")."""
    clause = re.split(r"[.;:\n]", folded[number_end : number_end + 60], maxsplit=1)[0]
    words = rf"\b(?:per|por|a|an|each|every|cada)\s+(?:cada\s+)?(?:{_TIME_UNITS[unit]})"
    slash = rf"/\s*(?:{_TIME_UNITS[unit]}|(?:{_ABBREVIATED[unit]})\b)"
    return re.search(f"{words}|{slash}", clause) is not None


def _counts_things(folded_question: str) -> bool:
    """`folded_question` asks how many of something that is no unit of time ("quants caràcters")."""
    return any(not _DURATION_WORD.match(m.group(1)) for m in _COUNTED.finditer(folded_question))


def _duration(folded: str, number_end: int) -> bool:
    """The number ending at `number_end` is a length of time: its next word is a unit of time."""
    following = re.match(r"\s*([a-z]+)", folded[number_end:])
    return following is not None and _DURATION_WORD.match(following.group(1)) is not None
