"""Verifying the model's quotes against the fragments it was shown.

A quote is verified when its words occur, in order, in a fragment: accents, case, markdown,
punctuation and spacing are ignored, and a short slip (a word dropped or changed in a long quote)
is tolerated unless it touches a number or a capitalised name. The fragment that really holds the
quote is found by search: the number the model wrote is only a hint, so a quote with a wrong
number still lands on the right source.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from docubot.rag.contract import Quote
from docubot.rag.prompt import Fragment
from docubot.text import fold

MIN_WORDS = 3
"""Shorter quotes ("Sí", "No", a table cell) prove nothing."""
MATCH_SHARE = 0.85
"""Share of a quote's words that must occur as one run in the fragment (exact runs: 1.0)."""
QUOTE_START = 6
"""The words of a quote that find the line it stands in."""


@dataclass(frozen=True)
class VerifiedQuote:
    fragment: int
    """1-based number of the fragment that holds the quote."""
    text: str
    claimed: int
    """The fragment number the model wrote (0: none)."""


def verify_quotes(quotes: Sequence[Quote], fragments: Sequence[Fragment]) -> list[VerifiedQuote]:
    """The quotes found in a fragment (the claimed one first), each once, in the model's order."""
    words = [_words(f.text) for f in fragments]
    verified: list[VerifiedQuote] = []
    for quote in quotes:
        wanted = _words(quote.cita)
        if len(wanted) < MIN_WORDS:
            continue
        names = _names(quote.cita)
        order = sorted(range(len(fragments)), key=lambda i: i + 1 != quote.fragment)
        found = next((i for i in order if _contains(words[i], wanted, names)), None)
        if found is not None and all(v.text != quote.cita for v in verified):
            verified.append(VerifiedQuote(found + 1, quote.cita, quote.fragment))
    return verified


def quoted_lines(quote: str, fragment: Fragment) -> str:
    """The lines of `fragment` a verified quote stands in (its list item, its spelled-out table
    row: "Business — Preu (per usuari i mes): 12 €; …"), or the quote itself when none holds its
    first words (a quote across lines)."""
    start = _words(quote)[:QUOTE_START]
    lines = [line for line in fragment.text.split("\n") if start and holds(line, " ".join(start))]
    return "\n".join(lines) or quote


def holds(text: str, quote: str) -> bool:
    """`quote`'s words occur in `text` word for word (markdown, case and accents ignored)."""
    return f" {' '.join(_words(quote))} " in f" {' '.join(_words(text))} "


def _contains(haystack: list[str], needle: list[str], names: frozenset[str] = frozenset()) -> bool:
    """`needle` occurs in `haystack` word for word, or nearly (MATCH_SHARE of its words, in order,
    within a window the size of the quote around its longest exact run) with none of its `names`
    among the words that slipped: a quote that swaps "Starter" for "Business" proves nothing."""
    if f" {' '.join(needle)} " in f" {' '.join(haystack)} ":
        return True
    longest = SequenceMatcher(None, haystack, needle, autojunk=False).find_longest_match(
        0, len(haystack), 0, len(needle)
    )
    if longest.size == 0:
        return False
    start = max(0, longest.a - longest.b)
    window = haystack[start : start + len(needle) + 2]
    blocks = SequenceMatcher(None, window, needle, autojunk=False).get_matching_blocks()
    matched = {b.b + k for b in blocks for k in range(b.size)}
    slipped = {word for i, word in enumerate(needle) if i not in matched}
    return len(matched) >= MATCH_SHARE * len(needle) and not slipped & names


def _names(quote: str) -> frozenset[str]:
    """The folded words of `quote` that a slip must not touch: numbers and capitalised words after
    the first (plan names, products, menus)."""
    raw = re.findall(r"[\w·'’]+", quote)
    return frozenset(
        w
        for i, r in enumerate(raw)
        for w in _words(r)
        if any(c.isdigit() for c in r) or (i and r[:1].isupper())
    )


def _words(text: str) -> list[str]:
    """Folded words without markdown or punctuation: what a faithful copy keeps."""
    text = fold(text).replace("·", "").replace("’", "'")
    return re.findall(r"[a-z0-9]+(?:[.,][0-9]+)?", text)
