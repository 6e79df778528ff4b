"""What a conversation remembers about each past message: its vector, token count and BM25 terms.

Each is computed once per message (and per embedding model / tokenizer / analyzer) and reused on
every later turn; the session store persists them with the turn (`session_turn_vectors`), so a
restarted server or another process embeds and tokenises only the new question. Entries are by
message position in the history (which only grows) and are checked against the message text, so a
history replaced under them is recomputed, never misread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from docubot.chat.lexical import TermCounts, term_counts


@dataclass
class MessageFeatures:
    """One message's cached vector (under `embedding_model`), token count (under `tokenizer`) and
    BM25 term counts (under `analyzer`)."""

    text_hash: int
    vector: np.ndarray | None = None
    embedding_model: str | None = None
    tokens: int | None = None
    tokenizer: str | None = None
    terms: TermCounts | None = None
    analyzer: str | None = None


@dataclass
class MessageMemory:
    """Features by message position; `pending` holds the positions computed since the last save."""

    entries: dict[int, MessageFeatures] = field(default_factory=dict)
    pending: set[int] = field(default_factory=set)

    def vectors(
        self,
        positions: Sequence[int],
        texts: Sequence[str],
        model: str,
        embed: Callable[[list[str]], np.ndarray],
    ) -> np.ndarray:
        """The vectors of the messages at `positions` (with `texts`), embedding the missing ones in
        one batch; shape (len(positions), dim)."""
        missing = [
            k
            for k, (p, t) in enumerate(zip(positions, texts, strict=True))
            if not self._has_vector(p, t, model)
        ]
        if missing:
            for k, vector in zip(missing, embed([texts[k] for k in missing]), strict=True):
                entry = self._entry(positions[k], texts[k])
                entry.vector, entry.embedding_model = np.asarray(vector, dtype=np.float32), model
                self.pending.add(positions[k])
        if not positions:
            return np.empty((0, 0), dtype=np.float32)
        return np.stack([self.entries[p].vector for p in positions])  # type: ignore[misc]

    def tokens(self, position: int, text: str, tokenizer: str, count: Callable[[str], int]) -> int:
        """The token count of the message at `position`, counted once per tokenizer."""
        entry = self._entry(position, text)
        if entry.tokens is None or entry.tokenizer != tokenizer:
            entry.tokens, entry.tokenizer = count(text), tokenizer
            self.pending.add(position)
        return entry.tokens

    def terms(
        self, position: int, text: str, analyzer: str, tokenize: Callable[[str], list[str]]
    ) -> TermCounts:
        """The BM25 term counts of the message at `position`, tokenised once per analyzer."""
        entry = self._entry(position, text)
        if entry.terms is None or entry.analyzer != analyzer:
            entry.terms, entry.analyzer = term_counts(tokenize(text)), analyzer
            self.pending.add(position)
        return entry.terms

    def restore(self, position: int, text: str, features: MessageFeatures) -> None:
        """Put back features loaded from the store (not pending: they are saved already)."""
        features.text_hash = hash(text)
        self.entries[position] = features

    def _has_vector(self, position: int, text: str, model: str) -> bool:
        entry = self.entries.get(position)
        return (
            entry is not None
            and entry.text_hash == hash(text)
            and entry.embedding_model == model
            and entry.vector is not None
        )

    def _entry(self, position: int, text: str) -> MessageFeatures:
        entry = self.entries.get(position)
        if entry is None or entry.text_hash != hash(text):
            entry = self.entries[position] = MessageFeatures(hash(text))
        return entry
