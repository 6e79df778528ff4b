"""Numbers in text, written in digits or in words (Catalan, Spanish, English), as comparable values.

`numbers("vint-i-quatre hores, 4,80 € i 1.000 peticions")` → {24.0, 4.8, 1000.0}. "One"/"un"/"una"
are left out: in these languages they are mostly articles, not amounts. Words that are also
common words ("nou": new, "set": an English verb, "deu": "is due") count only before a plural
("nou dies", "set hores").
"""

from __future__ import annotations

import re

from docubot.text import fold

_UNITS = {
    # Catalan
    "dos": 2, "dues": 2, "tres": 3, "quatre": 4, "cinc": 5, "sis": 6, "set": 7, "vuit": 8, "nou": 9,
    "deu": 10, "onze": 11, "dotze": 12, "tretze": 13, "catorze": 14, "quinze": 15, "setze": 16,
    "disset": 17, "divuit": 18, "dinou": 19,
    # Spanish
    "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8, "nueve": 9, "diez": 10, "doce": 12,
    "trece": 13, "catorce": 14, "quince": 15, "dieciseis": 16, "diecisiete": 17, "dieciocho": 18,
    "diecinueve": 19,
    # English
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {
    "vint": 20, "trenta": 30, "quaranta": 40, "cinquanta": 50, "seixanta": 60, "setanta": 70,
    "vuitanta": 80, "noranta": 90,
    "veinte": 20, "veinti": 20, "treinta": 30, "cuarenta": 40, "cincuenta": 50, "sesenta": 60,
    "setenta": 70, "ochenta": 80, "noventa": 90,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}  # fmt: skip
_BIG = {"cent": 100, "cien": 100, "hundred": 100, "mil": 1000, "thousand": 1000}
_SPANISH_TWENTIES = {"veintiuno": 21, "veintidos": 22, "veintitres": 23, "veinticuatro": 24,
                     "veinticinco": 25, "veintiseis": 26, "veintisiete": 27, "veintiocho": 28,
                     "veintinueve": 29}  # fmt: skip
_AMBIGUOUS = {"nou", "set", "deu", "cent"}
"""Number words that are also common words: "**Nou webhook**", "a set of events", "es deu a"."""
_PLURAL_NEXT = re.compile(r"\s+[a-z]{2,}s\b")
_DIGITS = re.compile(r"(?<![\w.,])\d{1,3}(?:\.\d{3})+(?![\d])|\d+(?:[.,]\d+)?")
_WORD = re.compile(r"[a-z]+(?:-i-[a-z]+|-[a-z]+)?")


def numbers(text: str) -> set[float]:
    """Every amount in `text` (digits or number words) as a float."""
    folded = fold(text)
    return {value for _, value in number_spans(folded)}


def number_spans(folded: str) -> list[tuple[str, float]]:
    """(as written, value) for each amount in already folded text, in order."""
    return [(folded[start:end], value) for start, end, value in number_matches(folded)]


def number_matches(folded: str) -> list[tuple[int, int, float]]:
    """(start, end, value) for each amount in already folded text: digits first, then words."""
    found = [(m.start(), m.end(), _digit_value(m.group())) for m in _DIGITS.finditer(folded)]
    for match in _WORD.finditer(folded):
        value = word_value(match.group())
        if match.group() in _AMBIGUOUS and not _PLURAL_NEXT.match(folded, match.end()):
            continue
        if value is not None:
            found.append((match.start(), match.end(), float(value)))
    return found


def word_value(word: str) -> int | None:
    """The value of one number word ('vint-i-quatre', 'twenty-four', 'veinticuatro'), else None."""
    if word in _UNITS:
        return _UNITS[word]
    if word in _TENS and word != "veinti":
        return _TENS[word]
    if word in _SPANISH_TWENTIES:
        return _SPANISH_TWENTIES[word]
    if word in _BIG:
        return _BIG[word]
    for joiner in ("-i-", "-"):
        if joiner in word:
            tens, _, unit = word.partition(joiner)
            unit_value = {"u": 1, "un": 1, "one": 1}.get(unit, _UNITS.get(unit))
            if tens in _TENS and unit_value is not None and unit_value < 10:
                return _TENS[tens] + unit_value
    return None


def _digit_value(written: str) -> float:
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+", written):
        return float(written.replace(".", ""))
    return float(written.replace(",", "."))
