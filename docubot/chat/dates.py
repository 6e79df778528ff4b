"""Dates in a conversation: the day each turn was said, and the days a question names.

Turn times are UTC epoch seconds (`session_turns.created_at`); days are UTC calendar days. A question
names days in Catalan, Spanish or English: an ISO date, "3 de novembre", "March 14", a month
("al març", "in March"), "ahir/ayer/yesterday", "abans d'ahir", "fa 3 dies/3 days ago", "la setmana
passada/last week", "el mes passat/last month", "l'any passat/last year". A small parser rather
than `dateparser`: its `search_dates` costs tens of milliseconds per question, the whole selection
budget, and these few forms are what a chat question uses.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from docubot.text import fold

DayRange = tuple[date, date]
"""[first, last] calendar days, both included."""

_MONTHS = {
    **dict.fromkeys(["gener", "enero", "january", "jan"], 1),
    **dict.fromkeys(["febrer", "febrero", "february", "feb"], 2),
    **dict.fromkeys(["marc", "marzo", "march"], 3),
    **dict.fromkeys(["abril", "april", "apr"], 4),
    **dict.fromkeys(["maig", "mayo", "may"], 5),
    **dict.fromkeys(["juny", "junio", "june"], 6),
    **dict.fromkeys(["juliol", "julio", "july"], 7),
    **dict.fromkeys(["agost", "agosto", "august", "aug"], 8),
    **dict.fromkeys(["setembre", "septiembre", "setiembre", "september", "sept", "sep"], 9),
    **dict.fromkeys(["octubre", "october", "oct"], 10),
    **dict.fromkeys(["novembre", "noviembre", "november", "nov"], 11),
    **dict.fromkeys(["desembre", "diciembre", "december", "dec"], 12),
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:de |d')?({_MONTH})\b(?:,? (?:de |del )?(\d{{4}}))?"
)
_MONTH_DAY = re.compile(rf"\b({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?\b(?:,? (\d{{4}}))?")
_MONTH_ALONE = re.compile(
    rf"\b(?:in|el|al|en|de|d'|during|durant|since) ?({_MONTH})\b(?: (?:de |del )?(\d{{4}}))?"
)
_DAYS_AGO = re.compile(r"\b(?:fa|hace) (\d{1,3}) (?:dies|dias)\b|\b(\d{1,3}) days ago\b")
_RELATIVE: dict[str, tuple[str, int]] = {
    "abans d'ahir": ("day", 2),
    "anteayer": ("day", 2),
    "day before yesterday": ("day", 2),
    "ahir": ("day", 1),
    "ayer": ("day", 1),
    "yesterday": ("day", 1),
    "setmana passada": ("week", 1),
    "semana pasada": ("week", 1),
    "last week": ("week", 1),
    "mes passat": ("month", 1),
    "mes pasado": ("month", 1),
    "last month": ("month", 1),
    "any passat": ("year", 1),
    "ano pasado": ("year", 1),
    "last year": ("year", 1),
}


def day_of(timestamp: float) -> date:
    """The UTC calendar day of an epoch time."""
    return datetime.fromtimestamp(timestamp, tz=UTC).date()


def render(timestamp: float) -> str:
    """How a message's day is shown to the model: "[2026-11-03]"."""
    return f"[{day_of(timestamp).isoformat()}]"


def named_days(question: str, now: float) -> DayRange | None:
    """The days `question` (asked at `now`) refers to, or None when it names none."""
    text = " ".join(fold(question.replace("’", "'")).split())
    today = day_of(now)
    if match := _ISO.search(text):
        return _day(int(match[1]), int(match[2]), int(match[3]))
    for pattern, day_group, month_group in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        if match := pattern.search(text):
            month = _MONTHS[match[month_group]]
            year = int(match[3]) if match[3] else _latest_year(today, month, int(match[day_group]))
            return _day(year, month, int(match[day_group]))
    if match := _DAYS_AGO.search(text):
        day = today - timedelta(days=int(match[1] or match[2]))
        return day, day
    for phrase, (unit, back) in _RELATIVE.items():
        if re.search(rf"(?<![\w']){re.escape(phrase)}\b", text):
            return _relative(today, unit, back)
    if match := _MONTH_ALONE.search(text):
        month = _MONTHS[match[1]]
        year = int(match[2]) if match[2] else _latest_year(today, month, 1)
        return date(year, month, 1), _month_end(year, month)
    return None


def _day(year: int, month: int, day: int) -> DayRange | None:
    try:
        found = date(year, month, day)
    except ValueError:
        return None
    return found, found


def _latest_year(today: date, month: int, day: int) -> int:
    """The year of the most recent (month, day) not after today: questions look back."""
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


def _month_end(year: int, month: int) -> date:
    return (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)


def _relative(today: date, unit: str, back: int) -> DayRange:
    if unit == "day":
        day = today - timedelta(days=back)
        return day, day
    if unit == "week":
        monday = today - timedelta(days=today.weekday() + 7 * back)
        return monday, monday + timedelta(days=6)
    if unit == "month":
        first = today.replace(day=1)
        last = first - timedelta(days=1)
        return last.replace(day=1), last
    return date(today.year - back, 1, 1), date(today.year - back, 12, 31)
