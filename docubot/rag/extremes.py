"""The table rows a question asks for by a least or a most: the cheapest plan, the most storage.

"quin és el pla més barat?" names no row of the plans table, whose rows, scored like sentences,
look alike to it: the Business row was said. "quin pla té més emmagatzematge?" got the Starter
row. Such a question is answered by comparing one column: the rows whose cell there is the least
or the most are the ones it asks for. Cheap and dear compare the prices (the column whose every
cell holds a currency sign); "més/más/most X" and "menys/menos/least X" compare the column whose
heading names X. A question asking which one ("quin", "cuál", "which"…) asks for a row; other
questions with "més" ("podem afegir més usuaris?") do not.

A row the question rules out is not a candidate: one whose cell says "No" in a column the question
names ("…necessitem treure les dades en csv, quin és el pla més barat que ens serveix?" rules out
Starter, whose CSV export is "No"), and one whose "up to" limit is under a number the question
states ("som 15 persones": "Fins a 10").

Cells compare as amounts with their units: 10 GB < 100 GB < 1 TB, and "Il·limitats" is above
any number. A column with a cell that is no amount ("Sí", "Correu electrònic") is not compared.

The same ruling out answers a question about a row that lacks what it asks: "Tenemos el plan
Starter, ¿podemos usar la API y los webhooks?" got the Starter row ("API i webhooks: No") and no
word of the plans that have them; the rows that have it are said beside it (`rows_instead`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from docubot.rag.numbers import numbers
from docubot.text import any_stopwords, fold, folded_words

_WHICH = re.compile(r"\b(?:quin|quina|quins|quines|cual|cuales|que plan|which|what)\b")
"""A question asking which one (folded)."""
_CHEAP = re.compile(
    r"\b(?:mes|mas)\s+(?:barat|barata|barats|barates|barato|baratos|baratas|economic|economica|"
    r"economico|economicos)\b|\b(?:menys|menos)\s+(?:car|cara|cars|cares|caro|caros|caras)\b"
    r"|\bcheapest\b|\bleast expensive\b"
)
_DEAR = re.compile(
    r"\b(?:mes|mas)\s+(?:car|cara|cars|cares|caro|caros|caras)\b|\bmost expensive\b|\bpriciest\b"
)
_MOST = re.compile(r"\b(?:mes|mas|most)\s+(?:de\s+)?([a-z]{4,})")
_LEAST = re.compile(r"\b(?:menys|menos|least|fewest)\s+(?:de\s+)?([a-z]{4,})")
_CURRENCY = re.compile(r"[€$£]|\beur\b|\busd\b")
_UNLIMITED = re.compile(r"\b(?:il\W?limitat\w*|ilimitad\w*|unlimited|sense limit|sin limite)")
_UP_TO = re.compile(r"\b(?:fins a|hasta|up to|maxim|maximo|max)\s+(\d+)")
_NO = re.compile(r"^(?:no\b|❌|✗)", re.IGNORECASE)
"""A cell saying the row lacks what its column names ("No", "❌")."""
_SIZE = re.compile(r"(\d+(?:[.,]\d+)?)\s*(kb|mb|gb|tb)\b")
_SIZE_FACTOR = {"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}
PREFIX = 5
"""Letters a question word and a heading word share to be one word (emmagatzematge, Emmagatzematge)."""


def extreme_rows(header: Sequence[str], body: Sequence[list[str]], question: str) -> list[list[str]]:
    """The rows of the table (`header`, `body`) holding the least or the most the question asks
    for, among those it does not rule out; empty when it asks for none or the table cannot tell."""
    asked = fold(question)
    if not _WHICH.search(asked):
        return []
    wanted = _wanted_column(header, body, asked)
    if wanted is None:
        return []
    column, most = wanted
    words, stated = folded_words(asked), numbers(asked)
    rows = [row for row in body if not _ruled_out(header, row, words, stated)]
    values = [(_amount(row[column]), row) for row in rows if column < len(row)]
    known = [(value, row) for value, row in values if value is not None]
    if not known or len(known) < len(values):
        return []
    best = (max if most else min)(value for value, _ in known)
    return [row for value, row in known if value == best]


def rows_instead(
    header: Sequence[str], body: Sequence[list[str]], named: Sequence[list[str]], question: str
) -> list[list[str]]:
    """The rows the question does not rule out when it rules out every row it `named` ("el
    Starter té API?": the Business and Enterprise rows); empty when a named row serves."""
    asked = fold(question)
    words, stated = folded_words(asked), numbers(asked)
    if not named or not all(_ruled_out(header, row, words, stated) for row in named):
        return []
    return [row for row in body if row not in named and not _ruled_out(header, row, words, stated)]


def _wanted_column(header: Sequence[str], body: Sequence[list[str]], asked: str) -> tuple[int, bool] | None:
    """The column the folded question `asked` compares and whether it wants its most (None: none)."""
    if _CHEAP.search(asked) or _DEAR.search(asked):
        price = _price_column(header, body)
        return None if price is None else (price, bool(_DEAR.search(asked)))
    for pattern, most in ((_MOST, True), (_LEAST, False)):
        for match in pattern.finditer(asked):
            column = _column_named(header, match.group(1))
            if column is not None:
                return column, most
    return None


def _column_named(header: Sequence[str], word: str) -> int | None:
    """The one column whose heading holds `word`, else the one holding a word sharing its first
    PREFIX letters ("usuaris" is the "Usuaris" column, not "Preu (per usuari i mes)"); else None."""
    for exact in (True, False):
        named = [i for i in range(1, len(header)) if _heading_names(header[i], [word], exact)]
        if named:
            return named[0] if len(named) == 1 else None
    return None


def _price_column(header: Sequence[str], body: Sequence[list[str]]) -> int | None:
    """The one column whose every cell holds a currency sign, else None."""
    priced = [
        i
        for i in range(1, len(header))
        if body and all(i < len(row) and _CURRENCY.search(row[i].lower()) for row in body)
    ]
    return priced[0] if len(priced) == 1 else None


def _heading_names(heading: str, words: Sequence[str], exact: bool = False) -> bool:
    """A content word of `heading` is one of (folded) `words`, or, unless `exact`, shares its
    first PREFIX letters with one ("CSV" in "Exportació CSV" is named by "csv")."""
    return any(
        w == word or (not exact and len(w) >= PREFIX and w[:PREFIX] == word[:PREFIX])
        for w in folded_words(heading)
        if len(w) >= 3 and w not in any_stopwords()
        for word in words
    )


def _ruled_out(header: Sequence[str], row: Sequence[str], words: Sequence[str], stated: set[float]) -> bool:
    """The question, of folded `words` and `stated` numbers, needs what `row` lacks: a "No" in a
    column whose heading it names, or an "up to" limit under a number it states."""
    for name, cell in zip(header[1:], row[1:], strict=False):
        if _NO.match(cell.strip()) and _heading_names(name, words):
            return True
        limit = _UP_TO.search(fold(cell))
        if limit is not None and any(n > float(limit.group(1)) for n in stated):
            return True
    return False


def _amount(cell: str) -> float | None:
    """The amount a cell states, with its unit of size (GB, TB…); infinity for "unlimited"; None
    when it states none or several."""
    folded = fold(cell)
    if _UNLIMITED.search(folded):
        return math.inf
    size = _SIZE.findall(folded)
    if len(size) == 1:
        value, unit = size[0]
        return float(value.replace(",", ".")) * _SIZE_FACTOR[unit]
    found = numbers(cell)
    return next(iter(found)) if len(found) == 1 else None
