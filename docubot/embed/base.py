"""The embedding interface: documents and queries may be embedded differently (e5 prefixes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors."""

    name: str
    """Identifies the model; the store refuses vectors from another one."""
    dim: int
    max_tokens: int
    """The model's input window, in its own tokens."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim)."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Shape (dim,)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens the model would read for a document `text`."""
        ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Unit-length rows (float32); zero rows stay zero."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)
