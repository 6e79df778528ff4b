"""BM25 over a conversation's messages, from term counts kept per message.

The history policies score every past message against each new question. Rebuilding a `bm25s`
index over the whole history on every call was the largest part of the selection's own work (≈ 24
of 66 ms per selection at 700 turns under cProfile, `bench/memory.py`'s history), although only the
new turn changes. Here each message's term counts are computed once (`TermCounts`) and a question
scores only its own terms: the same scores as `bm25s.BM25()` (Lucene variant, k1 = 1.5, b = 0.75,
float32), bit for bit (`tests/test_memory.py`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from docubot.text import TOKENS_VERSION, detect_language, tokenize

K1 = 1.5
B = 0.75


@dataclass(frozen=True)
class TermCounts:
    """One document's term frequencies and its length in tokens."""

    counts: Counter[str]
    length: int


@dataclass(frozen=True)
class MessageAnalyzer:
    """BM25 tokens of a message in its own language (`fallback`, the corpus's, when it does not
    tell); `name` identifies the output, so term counts stored under another name are recomputed."""

    fallback: str

    @property
    def name(self) -> str:
        return f"{TOKENS_VERSION}/{self.fallback}"

    def __call__(self, text: str) -> list[str]:
        return tokenize(text, detect_language(text, self.fallback))


def term_counts(tokens: Sequence[str]) -> TermCounts:
    """The counts of `tokens`; a document without tokens counts as one token long, as a `bm25s`
    index given a placeholder token for it does."""
    return TermCounts(Counter(tokens), max(len(tokens), 1))


def dumps(terms: TermCounts) -> str:
    """`terms` as a JSON object of counts (its length is their sum), for the session store."""
    return json.dumps(dict(terms.counts), ensure_ascii=False, separators=(",", ":"))


def loads(text: str) -> TermCounts:
    """Term counts written by `dumps`."""
    counts: Counter[str] = Counter(json.loads(text))
    return TermCounts(counts, max(sum(counts.values()), 1))


def bm25_scores(documents: Sequence[TermCounts], query: Sequence[str]) -> np.ndarray:
    """The BM25 score of each document for `query` (repeated query terms count again), float32."""
    scores = np.zeros(len(documents), dtype=np.float32)
    if not documents:
        return scores
    lengths = np.array([d.length for d in documents])
    average = lengths.mean()
    norms = K1 * ((1 - B) + B * lengths / average)
    for term in query:
        frequencies = np.fromiter((d.counts.get(term, 0) for d in documents), np.float64, len(documents))
        present = frequencies > 0
        if present.any():
            scores += _term_scores(frequencies, present, norms)
    return scores


def _term_scores(frequencies: np.ndarray, present: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """One term's contribution to each document (0 where it is absent), rounded to float32 as
    `bm25s` stores it."""
    found = int(present.sum())
    idf = np.float32(math.log(1 + (len(frequencies) - found + 0.5) / (found + 0.5)))
    contribution = np.zeros(len(frequencies), dtype=np.float32)
    tf = frequencies[present]
    contribution[present] = float(idf) * (tf / (norms[present] + tf))
    return contribution
