"""One-edit neighbours: the typo distance that fuzzy keyword search and spelling correction share;
and how long a start two sequences share."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def deletions(term: str) -> set[str]:
    """`term` with one letter removed, every way ("token" → "oken", "tken", …)."""
    return {term[:i] + term[i + 1 :] for i in range(len(term))}


def common_prefix_length(a: Sequence[object], b: Sequence[object]) -> int:
    """How many items (letters, words) `a` and `b` open with alike."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def one_edit_apart(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance exactly 1 (insertion, deletion, substitution or adjacent swap)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    start = common_prefix_length(a, b)
    if len(a) == len(b):
        swapped = start + 1 < len(a) and a[start] == b[start + 1] and a[start + 1] == b[start]
        return a[start + 1 :] == b[start + 1 :] or (swapped and a[start + 2 :] == b[start + 2 :])
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1 :] == shorter[start:]


class OneEditIndex:
    """Words filed under themselves and each of their one-letter deletions, to find the ones a
    word is one edit away from without comparing it with every word."""

    def __init__(self, words: Iterable[str]) -> None:
        self._by_deletion: dict[str, list[str]] = {}
        for word in words:
            for key in {word, *deletions(word)}:
                self._by_deletion.setdefault(key, []).append(word)

    def near(self, word: str) -> list[str]:
        """The indexed words one edit (insertion, deletion, substitution, swap) from `word`, sorted."""
        candidates = {t for key in (word, *deletions(word)) for t in self._by_deletion.get(key, ())}
        return sorted(t for t in candidates if one_edit_apart(word, t))
