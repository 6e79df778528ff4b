"""Document vectors kept in memory by text: the passages an extract scores recur from one question
to the next (the same sections are found again), and embedding them is most of an answer's time."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from docubot.embed.base import Embedder

CAPACITY = 20_000
"""Texts kept (≈ 30 MB of 384-d vectors); the least recently used go first."""


class DocumentVectors:
    """`embedder.embed_documents`, each text embedded once while it stays among the CAPACITY most
    recently used."""

    def __init__(self, embedder: Embedder, capacity: int = CAPACITY) -> None:
        self.embedder = embedder
        self.capacity = capacity
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every vector kept."""
        with self._lock:
            self._vectors.clear()

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim), as `embed_documents` gives it."""
        with self._lock:
            known = {t: self._vectors[t] for t in texts if t in self._vectors}
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        fresh: list[np.ndarray] = list(self.embedder.embed_documents(missing)) if missing else []
        known.update(zip(missing, fresh, strict=True))
        with self._lock:
            self._vectors.update((t, known[t]) for t in missing)
            for text in known:
                if text in self._vectors:  # another thread may have pushed it out meanwhile
                    self._vectors.move_to_end(text)
            while len(self._vectors) > self.capacity:
                self._vectors.popitem(last=False)
        found = [known[text] for text in texts]
        return np.stack(found) if found else np.zeros((0, self.embedder.dim), dtype=np.float32)
