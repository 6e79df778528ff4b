"""Example questions for a new conversation, derived from the indexed section titles.

The rule (deterministic: the same corpus always gives the same questions):
1. Each page (latest version) offers one question, from its titled sections (not the intro): the
   alphabetically first section whose title starts with a Catalan infinitive (a first word ending
   in -ar, -er or -ir: "Restablir la contrasenya") becomes "Com puc restablir la contrasenya?";
   a page without one offers "Què he de saber sobre <its first section title>?".
2. Pages with an infinitive question come first, then the others, each group sorted by url.
3. The questions are picked evenly spread over that list (the i-th of `count` at index
   i·(n−1)÷(count−1), rounded down): for 3, the first, the middle and the last of the pages with an
   infinitive question (when there are at least 3), so they come from different corners of the docs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

EXAMPLES = 3
_INFINITIVE = re.compile(r"^[^\W\d_]{2,}(ar|er|ir)$", re.IGNORECASE)


def example_questions(metadata: Iterable[Mapping[str, Any]], count: int = EXAMPLES) -> list[str]:
    """`count` questions (fewer when the corpus has fewer pages) from the chunks' metadata."""
    sections: dict[str, set[str]] = {}
    for meta in metadata:
        path = str(meta.get("section_path", ""))
        if meta.get("latest", True) and " > " in path:
            sections.setdefault(str(meta["url"]), set()).add(path)
    asked = sorted(
        (
            (not infinitive, url, question)
            for url, paths in sections.items()
            for infinitive, question in [_question(paths)]
        ),
    )
    pool = [question for _, _, question in asked]
    preferred = sum(1 for infinitive, _, _ in asked if not infinitive)
    spread_over = preferred if preferred >= count else len(pool)
    return [pool[i] for i in _spread(spread_over, count)]


def _question(paths: set[str]) -> tuple[bool, str]:
    """(whether it is a "Com puc…" question, the question) for one page's section paths."""
    titles = sorted(path.split(" > ")[-1].strip() for path in paths)
    for title in titles:
        if _INFINITIVE.match(title.split()[0]):
            return True, f"Com puc {_lower_first(title)}?"
    return False, f"Què he de saber sobre {_lower_first(titles[0])}?"


def _lower_first(title: str) -> str:
    """'Restablir la contrasenya' → 'restablir la contrasenya'; 'API i webhooks' stays."""
    first = title.split()[0]
    return title[0].lower() + title[1:] if first[1:] == first[1:].lower() else title


def _spread(n: int, count: int) -> list[int]:
    """`count` distinct indexes evenly spread over range(n), first and last included."""
    if n <= count:
        return list(range(n))
    if count == 1:
        return [0]
    return [i * (n - 1) // (count - 1) for i in range(count)]
